package protocol_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/sessions"
)

func yolo(_ *protocol.Config, s *config.Settings) {
	s.General.DefaultApprovalMode = config.ApprovalYolo
}

func onDisconnect(d protocol.Disconnect) harnessOption {
	return func(c *protocol.Config, _ *config.Settings) { c.OnDisconnect = d }
}

// waitState polls a task until it reaches state.
func waitState(t *testing.T, h *harness, id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	t.Helper()
	c := h.client("jsonrpc")
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State == want {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s, want %s", id, task.Status.State, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// streamUntil streams m until an event satisfies stop, then returns the
// task id and the cancel function of the stream's context.
func streamUntil(t *testing.T, h *harness, m *a2a.Message, stop func(a2a.Event) bool) (a2a.TaskID, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var id a2a.TaskID
	for ev, err := range h.client("jsonrpc").SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			id = task.ID
		}
		if stop(ev) {
			return id, cancel
		}
	}
	t.Fatal("the stream ended before the expected event")
	return "", cancel
}

func executing(ev a2a.Event) bool {
	e, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok {
		return false
	}
	tc := toolCallOf(e)
	return tc != nil && tc.Status == devtool.StatusExecuting
}

// TestCancelAbortsTheRun: cancelling a task whose shell command runs
// kills the command and ends the task canceled; the context takes the
// next task.
func TestCancelAbortsTheRun(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "sleep 30; echo late > late.txt"}),
		textTurn("never"),
		textTurn("next"),
	}, yolo, onDisconnect(protocol.DisconnectContinue))
	id, stop := streamUntil(t, h, userMessage("sleep", ""), executing)
	defer stop()
	start := time.Now()
	task, err := h.client("rest").CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel returned %s", task.Status.State)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %s", d)
	}
	waitState(t, h, id, a2a.TaskStateCanceled)
	// The context is free again.
	m := userMessage("again", "")
	m.ContextID = task.ContextID
	evs := collect(t, h.client("jsonrpc"), m)
	if got := describe(evs); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("next task: %s", got)
	}
	if _, err := os.Stat(filepath.Join(h.settings.Workspace, "late.txt")); err == nil {
		t.Fatal("the cancelled command went on running")
	}
}

// TestCancelParkedTask: cancelling a task waiting for a confirmation
// declines the call and frees the context.
func TestCancelParkedTask(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}),
		textTurn("next"),
	})
	first := collect(t, h.client("jsonrpc"), userMessage("write", ""))
	task := first[0].(*a2a.Task)
	got, err := h.client("grpc").CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(h.settings.Workspace, "a.txt")); err == nil {
		t.Fatal("the declined write ran")
	}
	m := userMessage("again", "")
	m.ContextID = task.ContextID
	if got := describe(collect(t, h.client("jsonrpc"), m)); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("next task: %s", got)
	}
}

// TestDisconnect: a streaming client that goes away aborts its run
// ("Execution aborted by client.") under the abort policy, and leaves it
// running to completion under continue.
func TestDisconnect(t *testing.T) {
	t.Run("abort", func(t *testing.T) {
		h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": "sleep 30"}), textTurn("never")},
			yolo, onDisconnect(protocol.DisconnectAbort))
		id, stop := streamUntil(t, h, userMessage("sleep", ""), executing)
		stop()
		task := waitState(t, h, id, a2a.TaskStateCanceled)
		if msg := task.Status.Message; msg == nil || msg.Parts[0].Text() != "Execution aborted by client." {
			t.Fatalf("status message %+v", msg)
		}
	})
	t.Run("continue", func(t *testing.T) {
		h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": "sleep 0.3; echo done > done.txt"}), textTurn("finished")},
			yolo, onDisconnect(protocol.DisconnectContinue))
		id, stop := streamUntil(t, h, userMessage("sleep", ""), executing)
		stop()
		waitState(t, h, id, a2a.TaskStateCompleted)
		if _, err := os.Stat(filepath.Join(h.settings.Workspace, "done.txt")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDisconnectLeaksNoGoroutine: twenty clients that disconnect
// mid-run leave no goroutine behind once their runs are aborted.
func TestDisconnectLeaksNoGoroutine(t *testing.T) {
	var lines []string
	for range 25 {
		lines = append(lines, callTurn("", "run_shell_command", map[string]any{"command": "sleep 30"}))
	}
	h := newHarness(t, lines, yolo, onDisconnect(protocol.DisconnectAbort))
	contextID := ""
	round := func() {
		m := userMessage("sleep", "")
		m.ContextID = contextID
		id, stop := streamUntil(t, h, m, executing)
		stop()
		task := waitState(t, h, id, a2a.TaskStateCanceled)
		contextID = task.ContextID
	}
	settle := func() int {
		var n int
		for range 50 {
			goruntime.GC()
			time.Sleep(20 * time.Millisecond)
			n = goruntime.NumGoroutine()
		}
		return n
	}
	round()
	round()
	before := settle()
	for range 20 {
		round()
	}
	after := settle()
	if after-before > 3 {
		buf := make([]byte, 1<<20)
		n := goruntime.Stack(buf, true)
		t.Fatalf("goroutines grew from %d to %d over 20 disconnects:\n%s", before, after, buf[:n])
	}
}

// TestPushForwardsStateChangesOnly: a webhook registered with the
// message gets the task's state changes (working, completed), not its
// text and tool updates.
func TestPushForwardsStateChangesOnly(t *testing.T) {
	var mu sync.Mutex
	var kinds []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sr a2a.StreamResponse
		if err := json.NewDecoder(r.Body).Decode(&sr); err != nil {
			t.Errorf("push body: %v", err)
		}
		if r.Header.Get("A2A-Notification-Token") != "hook-secret" {
			t.Errorf("push token %q", r.Header.Get("A2A-Notification-Token"))
		}
		mu.Lock()
		kinds = append(kinds, describeOne(sr.Event))
		mu.Unlock()
	}))
	defer hook.Close()
	h := newHarness(t, []string{
		callTurn("Listing.", "list_directory", map[string]any{"dir_path": "."}),
		textTurn("Empty."),
	}, func(c *protocol.Config, _ *config.Settings) {
		c.AllowPrivatePush = true
	})
	req := &a2a.SendMessageRequest{Message: userMessage("list", ""),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: hook.URL, Token: "hook-secret"}}}
	var all []a2a.Event
	for ev, err := range h.client("jsonrpc").SendStreamingMessage(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ev)
	}
	if !strings.Contains(describe(all), "TOOL_CALL_UPDATE") {
		t.Fatalf("stream: %s", describe(all))
	}
	// The webhook is called after the stream's last event went out.
	want := "Task(submitted) STATE_CHANGE:working STATE_CHANGE:completed"
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		got = strings.Join(kinds, " ")
		mu.Unlock()
		if len(got) >= len(want) {
			break
		}
	}
	if got != want {
		t.Fatalf("pushed %q, want %q", got, want)
	}
}

// TestTaskLimit: beyond MaxTasks running tasks a new one is refused with
// an error naming the limit; a parked task does not count.
func TestTaskLimit(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "sleep 30"}),
		textTurn("never"),
	}, yolo, onDisconnect(protocol.DisconnectContinue), func(c *protocol.Config, _ *config.Settings) { c.MaxTasks = 1 })
	_, stop := streamUntil(t, h, userMessage("sleep", ""), executing)
	defer stop()
	_, err := h.client("jsonrpc").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: userMessage("another", "")})
	if err == nil || !strings.Contains(err.Error(), "limit of 1 tasks") {
		t.Fatalf("second task: %v", err)
	}
}

// TestIdleContextsClose: a context idle longer than IdleTimeout has its
// session closed; its next message reopens the session from the store,
// history included, and the conversation goes on.
func TestIdleContextsClose(t *testing.T) {
	var h *harness
	h = newHarness(t, []string{textTurn("First."), textTurn("Second.")}, func(c *protocol.Config, s *config.Settings) {
		c.IdleTimeout = 30 * time.Millisecond
	})
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h.store = st
	// One replay cursor for both sessions, as agentry serve shares one
	// resolver.
	h.resolver = compose.NewResolver(h.settings, nil, nil)
	first := collect(t, h.client("jsonrpc"), userMessage("one", ""))
	contextID := first[0].(*a2a.Task).ContextID
	time.Sleep(200 * time.Millisecond)
	m := userMessage("two", "")
	m.ContextID = contextID
	if got := describe(collect(t, h.client("jsonrpc"), m)); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the idle close: %s", got)
	}
	if n := h.sessions.Load(); n != 2 {
		t.Fatalf("%d sessions started, want 2 (the idle one closed and reopened)", n)
	}
	got, err := st.Get(t.Context(), &session.GetRequest{AppName: "agentry", UserID: "user", SessionID: contextID})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for ev := range got.Session.Events().All() {
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				texts = append(texts, p.Text)
			}
		}
	}
	if strings.Join(texts, "|") != "one|First.|two|Second." {
		t.Fatalf("stored history %q", texts)
	}
}

// TestIdleContextReopensInItsWorkspace: a context that worked in a
// workspace of its own is reopened there after closing for idleness, by
// its next message (which need not name the workspace again) and by a
// command; naming another workspace is refused.
func TestIdleContextReopensInItsWorkspace(t *testing.T) {
	var h *harness
	h = newHarness(t, []string{
		textTurn("First."),
		callTurn("", "write_file", map[string]any{"file_path": "marker.txt", "content": "here\n"}),
		textTurn("Second."),
	}, yolo, func(c *protocol.Config, s *config.Settings) {
		c.IdleTimeout = 30 * time.Millisecond
	})
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h.store = st
	h.resolver = compose.NewResolver(h.settings, nil, nil)
	sub := filepath.Join(h.settings.Workspace, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	first := collect(t, h.client("jsonrpc"), userMessage("one", sub))
	contextID := first[0].(*a2a.Task).ContextID

	time.Sleep(200 * time.Millisecond) // closed for idleness
	if first, _, text := h.execute([]string{"tools", "list"}, "", contextID); first.Status != devtool.CommandStarted || !strings.Contains(text, "write_file") {
		t.Fatalf("tools list on the closed context: %+v %q", first, text)
	}

	time.Sleep(200 * time.Millisecond)
	m := userMessage("two", h.settings.Workspace)
	m.ContextID = contextID
	if _, err := h.client("jsonrpc").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m}); err == nil || !strings.Contains(err.Error(), "cannot change its workspace") {
		t.Fatalf("another workspace for the closed context: %v", err)
	}
	m = userMessage("two", "")
	m.ContextID = contextID
	if got := describe(collect(t, h.client("jsonrpc"), m)); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the idle close: %s", got)
	}
	if b, err := os.ReadFile(filepath.Join(sub, "marker.txt")); err != nil || string(b) != "here\n" {
		t.Fatalf("the reopened context did not work in %s: %q %v", sub, b, err)
	}
}

// TestCancelJustParkedTask: a CancelTask that arrives after a blocking
// SendMessage answered input-required but before the execution that parked
// the run has ended (here held in its push notification of the state
// change) still cancels the task, and answers with its canceled state.
func TestCancelJustParkedTask(t *testing.T) {
	release := make(chan struct{})
	sender := pushFunc(func(ctx context.Context, _ *a2a.PushConfig, ev a2a.Event) error {
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && u.Status.State == a2a.TaskStateInputRequired {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	})
	h := newHarness(t, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})},
		func(c *protocol.Config, _ *config.Settings) { c.PushSender = sender })
	c := h.plainClient("jsonrpc")
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: userMessage("write", ""),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "https://hooks.example.com/a2a"}}})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("send: %v", res)
	}
	type result struct {
		task *a2a.Task
		err  error
	}
	done := make(chan result, 1)
	go func() {
		got, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID})
		done <- result{got, err}
	}()
	// Give the cancel time to reach the server while the parking
	// execution is held; whatever the timing, the answer must be the same.
	time.Sleep(50 * time.Millisecond)
	close(release)
	r := <-done
	if r.err != nil || r.task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %v", r.task, r.err)
	}
	if _, err := os.Stat(filepath.Join(h.settings.Workspace, "a.txt")); err == nil {
		t.Fatal("the declined write ran")
	}
}

// pushFunc is a push.Sender.
type pushFunc func(ctx context.Context, c *a2a.PushConfig, ev a2a.Event) error

func (f pushFunc) SendPush(ctx context.Context, c *a2a.PushConfig, ev a2a.Event) error {
	return f(ctx, c, ev)
}
