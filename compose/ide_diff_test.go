package compose

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/runtime"
)

// acceptingIDE accepts every diff with content, recording what it was
// shown.
type acceptingIDE struct {
	content string
	shown   chan string
}

func (a *acceptingIDE) CanDiff() bool { return true }

func (a *acceptingIDE) OpenDiff(_ context.Context, path, _ string) (idediff.Answer, error) {
	a.shown <- path
	return idediff.Answer{Accepted: true, Content: a.content}, nil
}

func (a *acceptingIDE) CloseDiff(context.Context, string) (*string, error) { return nil, nil }

// waitingHuman never answers: its question lasts until it is withdrawn.
type waitingHuman struct{ withdrawn chan struct{} }

func (w waitingHuman) Approve(ctx context.Context, _ runtime.ApprovalRequest) (runtime.Outcome, error) {
	<-ctx.Done()
	w.withdrawn <- struct{}{}
	return runtime.Cancel, context.Cause(ctx)
}

// TestIDEDiffs: Options.IDEDiffs puts the IDE's diff before the session's
// approver for write_file in the default mode, and only with an approver
// and in the default mode.
func TestIDEDiffs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     string
		approver bool
		want     string // the file afterwards ("": not written)
		diff     bool
	}{
		{"default", config.ApprovalDefault, true, "mine\n", true},
		{"auto_edit", config.ApprovalAutoEdit, true, "model\n", false},
		{"no approver", config.ApprovalDefault, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settingsFor(t)
			s.Session.Store = config.SessionStoreMemory
			s.General.DefaultApprovalMode = tc.mode
			b := newScript(
				callTurn("", fc("w1", "write_file", map[string]any{"file_path": "new.txt", "content": "model\n"})),
				textTurn("done"),
			)
			ide := &acceptingIDE{content: "mine\n", shown: make(chan string, 1)}
			h := waitingHuman{withdrawn: make(chan struct{}, 1)}
			opts := Options{Resolver: fixedResolver{B: b}, IDEDiffs: ide}
			if tc.approver {
				opts.Approver = h
			}
			sess, err := FromSettings(t.Context(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			run(t, sess, "write it")
			got, err := os.ReadFile(filepath.Join(s.Workspace, "new.txt"))
			if tc.want == "" {
				if err == nil {
					t.Errorf("file written: %q", got)
				}
			} else if string(got) != tc.want {
				t.Errorf("file = %q (%v), want %q", got, err, tc.want)
			}
			if opened := len(ide.shown) == 1; opened != tc.diff {
				t.Errorf("diff opened: %v, want %v", opened, tc.diff)
			}
			if !tc.diff {
				return
			}
			<-h.withdrawn
			frs := modeltest.FunctionResponses(b.Requests()[1])
			if out, _ := frs[0].Response["output"].(string); !strings.Contains(out, "User modified the `content` to be: mine\n") {
				t.Errorf("tool result %v lacks gemini-cli's sentence", frs[0].Response)
			}
		})
	}
}
