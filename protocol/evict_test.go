package protocol_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/sessions"
)

// TestEvictAbortsParkedRun: Evict closes a context's session at once,
// aborting the run parked on a confirmation (whose call never runs); the
// context's next message reopens it from the store.
func TestEvictAbortsParkedRun(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}),
		textTurn("Next."),
	})
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h.store = st
	h.resolver = compose.NewResolver(h.settings, nil, nil)
	first := collect(t, h.client("jsonrpc"), userMessage("write", ""))
	task := first[0].(*a2a.Task)
	if !h.srv.Evict(task.ContextID) {
		t.Fatal("Evict of an open context reported it closed")
	}
	if h.srv.Evict(task.ContextID) {
		t.Fatal("a second Evict reported the context open")
	}
	proctest.Eventually(t, "the parked task ends", func() bool {
		got, err := h.client("jsonrpc").GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State.Terminal()
	})
	if _, err := os.Stat(filepath.Join(h.settings.Workspace, "a.txt")); err == nil {
		t.Fatal("the parked write ran")
	}
	m := userMessage("again", "")
	m.ContextID = task.ContextID
	if got := describe(collect(t, h.client("jsonrpc"), m)); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("next task: %s", got)
	}
	if n := h.sessions.Load(); n != 2 {
		t.Fatalf("%d sessions started, want 2 (the evicted one reopened)", n)
	}
}
