package tools

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// runHelper is the test binary acting as agentry for
// TestShellChildrenDieWithAgentry: it starts shell commands that leave
// processes behind, records their PIDs in dir, and waits to be killed.
func runHelper(mode, dir string) {
	if mode != "shell" {
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		os.Exit(2)
	}
	ws, err := NewWorkspace(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s, err := NewSet(Config{Workspace: ws, TempDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tool, _ := s.Lookup("run_shell_command")
	exec := func(args map[string]any) {
		if _, err := tool.Execute(context.Background(), Call{ID: "c", Args: args}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	// A job left running by a foreground command, tracked until Close.
	exec(map[string]any{"command": `sleep 1000 & echo $! > job.pid`})
	// A background command whose sleep is the shell's grandchild.
	exec(map[string]any{"command": `echo $$ > bg-shell.pid; sh -c 'echo $$ > bg.pid; exec sleep 1000'; true`, "is_background": true})
	// A foreground command still running when agentry dies.
	go exec(map[string]any{"command": `echo $$ > fg-shell.pid; sh -c 'echo $$ > fg.pid; exec sleep 1000'; true`})
	select {}
}

// TestShellChildrenDieWithAgentry kills a process running shell commands
// with SIGKILL, which gives it no chance to clean up, and checks that the
// commands and everything they started die with it.
func TestShellChildrenDieWithAgentry(t *testing.T) {
	dir := realDir(t)
	helper := proctest.StartHelper(t, "shell", dir)
	proctest.RequireDieWith(t, helper, dir, "job", "bg-shell", "bg", "fg-shell", "fg")
}
