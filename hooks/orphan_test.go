package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
)

func TestMain(m *testing.M) {
	if mode, dir, ok := proctest.Helper(); ok {
		runHelper(mode, dir)
		return
	}
	os.Exit(m.Run())
}

// runHelper is the test binary acting as agentry for
// TestHooksDieWithAgentry: it runs a hook that never ends and waits to be
// killed.
func runHelper(mode, dir string) {
	if mode != "hook" {
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		os.Exit(2)
	}
	h := Command{Type: CommandType, Name: "stuck", Timeout: 3_600_000,
		Command: `echo $$ > "$GEMINI_PROJECT_DIR/shell.pid"; sh -c 'echo $$ > "$GEMINI_PROJECT_DIR/child.pid"; exec sleep 1000'; true`}
	r, err := New(Config{Settings: on(BeforeTool, def("", h)), ProjectDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() { _, _ = r.Run(context.Background(), BeforeTool, "x", nil) }()
	select {}
}

// TestHooksDieWithAgentry SIGKILLs a process while a hook runs and checks
// that the hook's shell and the process it started die with it.
func TestHooksDieWithAgentry(t *testing.T) {
	dir := t.TempDir()
	helper := proctest.StartHelper(t, "hook", dir)
	names := []string{"shell", "child"}
	var pids []int
	t.Cleanup(func() {
		for i, pid := range pids {
			if proctest.Running(pid) {
				t.Errorf("hook %s (pid %d) outlived its agentry", names[i], pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	for _, name := range names {
		pids = append(pids, proctest.WaitPID(t, filepath.Join(dir, name+".pid")))
	}
	for _, pid := range pids {
		proctest.WaitWatched(t, pid)
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, "the hook to die with its agentry", func() bool {
		for _, pid := range pids {
			if proctest.Running(pid) {
				return false
			}
		}
		return true
	})
}
