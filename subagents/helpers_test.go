package subagents

import (
	"context"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/internal/sessiontest"
	"github.com/agentry-dev/agentry/runtime"
	"google.golang.org/genai"
)

// The scripted model, tool and session helpers of package sessiontest,
// under the short names this package's tests use.
type (
	turn            = modeltest.Turn
	script          = modeltest.Script
	recordedRequest = modeltest.Request
	fixedResolver   = modeltest.FixedResolver
	fakeTool        = modeltest.FakeTool
	timers          = modeltest.Timers
)

var (
	newScript      = modeltest.NewScript
	textTurn       = modeltest.TextTurn
	callTurn       = modeltest.CallTurn
	fc             = modeltest.FC
	newTestSession = sessiontest.NewSession
	collectStream  = sessiontest.CollectStream
	last           = sessiontest.Last
	find           = sessiontest.Find
	run            = sessiontest.Run
)

// lastUserText is the text of the last user content of a request.
func lastUserText(r recordedRequest) string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role == genai.RoleUser {
			var b strings.Builder
			for _, p := range c.Parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

// toolOutput returns the function response the model got for call id.
func toolOutput(t *testing.T, b *script, id string) map[string]any {
	t.Helper()
	for _, r := range b.Requests() {
		for _, fr := range modeltest.FunctionResponses(r) {
			if fr.ID == id {
				return fr.Response
			}
		}
	}
	t.Fatalf("no function response for %s", id)
	return nil
}

type approverFunc func(context.Context, runtime.ApprovalRequest) (runtime.Outcome, error)

func (f approverFunc) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	return f(ctx, r)
}
