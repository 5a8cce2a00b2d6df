package lease_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/adk/v2/plugin"

	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/internal/sessiontest"
	"github.com/agentry-dev/agentry/plugins/lease"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

var errLost = errors.New("lease lost for the test")

// TestStopsBeforeNextCall: once the check fails, the turn makes no
// further model or tool call, and ends with the check's error.
func TestStopsBeforeNextCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		// passing is how many checks pass: the first model call's,
		// then the tool call's, then the second model call's.
		passing       int64
		wantRequests  int
		wantToolCalls int
	}{
		{"lost before the first model call", 0, 0, 0},
		{"lost before the tool call", 1, 1, 0},
		{"lost before the second model call", 2, 1, 1},
		{"never lost", 3, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := modeltest.NewScript(
				modeltest.CallTurn("", modeltest.FC("c1", "probe", nil)),
				modeltest.TextTurn("done"),
			)
			probe := &modeltest.FakeTool{ToolName: "probe", ToolKind: tools.KindRead}
			var checks atomic.Int64
			p, err := lease.New(func() error {
				if checks.Add(1) > tc.passing {
					return errLost
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s := sessiontest.NewSession(t, script, runtime.Config{Tools: []tools.Tool{probe}, Plugins: []*plugin.Plugin{p}})
			evs := sessiontest.Run(t, s, "go")
			if got := len(script.Requests()); got != tc.wantRequests {
				t.Errorf("model requests %d, want %d", got, tc.wantRequests)
			}
			if got := probe.Calls(); got != tc.wantToolCalls {
				t.Errorf("tool calls %d, want %d", got, tc.wantToolCalls)
			}
			var text strings.Builder
			for _, ev := range evs {
				b, _ := json.Marshal(ev)
				text.Write(append(b, '\n'))
			}
			if lost := strings.Contains(text.String(), errLost.Error()); lost != (tc.passing < 3) {
				t.Errorf("the stream says %q: %v, want %v\n%s", errLost, lost, tc.passing < 3, text.String())
			}
		})
	}
}
