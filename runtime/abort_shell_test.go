package runtime

import (
	"path/filepath"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/tools"
)

// runningPID waits for a shell command to write its background process's
// pid to file, and checks that the process runs.
func runningPID(t *testing.T, file string) int {
	t.Helper()
	pid := proctest.WaitPID(t, file)
	if !proctest.Running(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}
	return pid
}

// TestAbortRealShellCommand aborts a real shell command whose child keeps
// running: the whole process group is gone afterwards, the call is answered,
// and the next Send on the same session succeeds.
func TestAbortRealShellCommand(t *testing.T) {
	dir := t.TempDir()
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(tools.Config{Workspace: ws, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	b := newScript(
		callTurn("", fc("sh1", "run_shell_command", map[string]any{"command": "sleep 300 & echo $! > sleep.pid; wait"})),
		textTurn("back"),
	)
	s := newTestSession(t, b, Config{Tools: set.Tools(), Policy: mustPolicy(t, "yolo")})
	id, err := s.Send(t.Context(), TextMessage("sleep"))
	if err != nil {
		t.Fatal(err)
	}
	pid := runningPID(t, filepath.Join(dir, "sleep.pid"))
	s.Abort(nil)
	evs := collectStream(t, s, id)
	if r := last(evs).AgentEnd.Reason; r != EndAborted {
		t.Fatalf("reason = %s; events %v", r, types(evs))
	}
	proctest.Eventually(t, "the shell's child to die", func() bool { return !proctest.Running(pid) })
	resp := find(evs, EventToolResponse)
	if len(resp) != 1 || resp[0].ToolResponse.RequestID != "sh1" || !resp[0].ToolResponse.IsError {
		t.Fatalf("tool_response = %+v", resp)
	}

	evs = run(t, s, "and now?")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("next Send: reason %s", r)
	}
	requireCallClosed(t, b, 1, "sh1")
}
