package protocol_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol"
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

// TestWSReopensAKnownContext: /ws?contextId names a context that is not
// open here — evicted, as a replica that lost it or a restarted server
// has it — but whose tasks the task store keeps: its session opens again
// and the connection attaches to it; a context nobody knows is refused.
func TestWSReopensAKnownContext(t *testing.T) {
	h := newHarness(t, []string{textTurn("First."), textTurn("Second.")})
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h.store = st
	h.resolver = compose.NewResolver(h.settings, nil, nil)
	task := collect(t, h.client("jsonrpc"), userMessage("first", ""))[0].(*a2a.Task)
	if !h.srv.Evict(task.ContextID) {
		t.Fatal("Evict of an open context reported it closed")
	}
	w := h.dialWS(t, dialOpts{query: "contextId=" + task.ContextID})
	if got := w.attached()["contextId"]; got != task.ContextID {
		t.Fatalf("attached to %v, want %s", got, task.ContextID)
	}
	if n := h.sessions.Load(); n != 2 {
		t.Fatalf("%d sessions started, want 2 (the evicted one reopened)", n)
	}
	if _, res, err := h.tryDial(t, dialOpts{query: "contextId=never-seen"}); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown context: %v (%v), want 404", err, res)
	}
}

// TestWSOpensAContextOfTheTaskStore: a server that never ran a context
// whose tasks its task store has (another replica's, or before a restart)
// opens it for /ws?contextId, with the conversation from the session store.
func TestWSOpensAContextOfTheTaskStore(t *testing.T) {
	tasks := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: protocol.SingleUser})
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	shared := func(cfg *protocol.Config, _ *config.Settings) { cfg.TaskStore = tasks }
	first := newHarness(t, []string{textTurn("First.")}, shared)
	first.store = st
	first.resolver = compose.NewResolver(first.settings, nil, nil)
	task := collect(t, first.client("jsonrpc"), userMessage("first", ""))[0].(*a2a.Task)

	second := newHarness(t, []string{textTurn("Second.")}, shared)
	second.store = st
	second.resolver = compose.NewResolver(second.settings, nil, nil)
	w := second.dialWS(t, dialOpts{query: "contextId=" + task.ContextID})
	if got := w.attached()["contextId"]; got != task.ContextID {
		t.Fatalf("attached to %v, want %s", got, task.ContextID)
	}
	if n := second.sessions.Load(); n != 1 {
		t.Fatalf("%d sessions started on the second server, want the context's", n)
	}
}
