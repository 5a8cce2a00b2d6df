package protocol_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// parkedShell starts a task whose run waits for the confirmation of a
// shell command appending a line to runs.txt, and returns the task and
// the call waiting.
func parkedShell(t *testing.T, h *harness) (*a2a.Task, string) {
	t.Helper()
	evs := collect(t, h.client("jsonrpc"), userMessage("log a run", ""))
	task := evs[0].(*a2a.Task)
	last := evs[len(evs)-2].(*a2a.TaskStatusUpdateEvent)
	tc := toolCallOf(last)
	if tc == nil || tc.ConfirmationRequest == nil {
		t.Fatalf("the task does not wait for a confirmation: %s", describe(evs))
	}
	return task, tc.ToolCallID
}

// runs counts the lines the confirmed shell command appended.
func runs(t *testing.T, h *harness) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.settings.Workspace, "runs.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

var shellRun = []string{
	callTurn("", "run_shell_command", map[string]any{"command": "echo ran >> runs.txt"}),
	textTurn("done"),
}

// TestConfirmationFromAnotherContext: a confirmation naming the parked
// task but another context is refused as invalid params on every
// binding, and the call does not run; the right context's then does.
func TestConfirmationFromAnotherContext(t *testing.T) {
	h := newHarness(t, shellRun)
	task, callID := parkedShell(t, h)
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v0.3"} {
		m := confirm(task, callID, "proceed_once")
		m.ContextID = "another-context"
		_, err := h.client(binding).SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
		if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "another-context") {
			t.Errorf("%s: a confirmation from another context: %v, want invalid params naming the context", binding, err)
		}
	}
	if n := runs(t, h); n != 0 {
		t.Fatalf("the command ran %d times on confirmations from another context", n)
	}
	evs := collect(t, h.client("jsonrpc"), confirm(task, callID, "proceed_once"))
	if got := describe(evs); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("the right context's confirmation: %s", got)
	}
	if n := runs(t, h); n != 1 {
		t.Fatalf("the command ran %d times, want 1", n)
	}
}

// TestRacingConfirmationsFromTwoContexts: confirmations sent at once,
// half from another context, are accepted only from the task's own
// context, once, and the call runs once.
func TestRacingConfirmationsFromTwoContexts(t *testing.T) {
	h := newHarness(t, shellRun)
	task, callID := parkedShell(t, h)
	c := h.client("jsonrpc")
	const n = 40
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		right, wrong  int
		unexpectedErr []string
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			m := confirm(task, callID, "proceed_once")
			own := i%2 == 0
			if !own {
				m.ContextID = "intruder"
			}
			<-start
			_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && own:
				right++
			case err == nil:
				wrong++
			case !own && !errors.Is(err, a2a.ErrInvalidParams):
				unexpectedErr = append(unexpectedErr, err.Error())
			}
		})
	}
	close(start)
	wg.Wait()
	if wrong != 0 || right != 1 || len(unexpectedErr) != 0 {
		t.Fatalf("accepted %d confirmations from the task's context (want 1) and %d from another (want 0); other refusals: %q", right, wrong, unexpectedErr)
	}
	if got := runs(t, h); got != 1 {
		t.Fatalf("the command ran %d times, want 1", got)
	}
}
