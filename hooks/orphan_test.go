package hooks

import (
	"context"
	"fmt"
	"os"
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
	proctest.RequireDieWith(t, helper, dir, "shell", "child")
}
