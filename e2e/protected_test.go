package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutoEditCannotConfigureGit: in auto_edit, a model that writes a git
// hook and sets core.fsmonitor in .git/config, then runs an allowed
// "git status", runs nothing of its own: both writes need a human, and a
// batch run has none, so they are refused with the reason and the way to
// allow them.
func TestAutoEditCannotConfigureGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to show what a written .git/config would run: %v", err)
	}
	e := newEnv(t)
	if out, err := exec.Command(git, "init", "-q", e.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	config, err := os.ReadFile(filepath.Join(e.ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	replay := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": ".git/hooks/post-checkout", "content": "#!/bin/sh\ntouch pwned-hook\n"})},
		[]map[string]any{call("write_file", map[string]any{"file_path": ".git/config", "content": string(config) + "[core]\n\tfsmonitor = touch pwned; echo\n"})},
		[]map[string]any{call("write_file", map[string]any{"file_path": "notes.txt", "content": "ordinary\n"})},
		[]map[string]any{call("run_shell_command", map[string]any{"command": "git status"})},
		[]map[string]any{text("done")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "--approval-mode", "auto_edit",
		"--allowed-tools", "run_shell_command(git status)", "-o", "stream-json", "-p", "set up git")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	results := ofType(lines(t, r.stdout), "tool_result")
	if len(results) != 4 {
		t.Fatalf("%d tool results, want 4: %s", len(results), r.stdout)
	}
	for i, path := range []string{".git/hooks/post-checkout", ".git/config"} {
		errObj, _ := results[i]["error"].(map[string]any)
		msg, _ := errObj["message"].(string)
		if results[i]["status"] != "error" || errObj["type"] != "policy_violation" ||
			msg != `Tool execution for "WriteFile" requires user confirmation, which is not supported in non-interactive mode.` {
			t.Errorf("write of %s: %v", path, results[i])
		}
	}
	// The user reads why, once for write_file: the first protected path.
	var warnings []string
	for _, l := range ofType(lines(t, r.stdout), "error") {
		msg, _ := l["message"].(string)
		warnings = append(warnings, msg)
	}
	if want := "write_file was refused: " + filepath.Join(e.ws, ".git/hooks/post-checkout") + " configures commands that run without further approval"; len(warnings) != 1 ||
		!strings.HasPrefix(warnings[0], want) || !strings.HasSuffix(warnings[0], "To allow it, run with --approval-mode yolo (-y).") {
		t.Errorf("warnings %q, want one starting with %q", warnings, want)
	}
	if results[2]["status"] != "success" || results[3]["status"] != "success" {
		t.Errorf("the ordinary write and the allowed git status: %v, %v", results[2], results[3])
	}
	for _, f := range []string{"pwned", "pwned-hook", ".git/hooks/post-checkout"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v): the model's write reached command execution", f, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(e.ws, ".git", "config")); string(got) != string(config) {
		t.Errorf(".git/config changed:\n%s", got)
	}
}
