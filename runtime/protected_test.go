package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentry-dev/agentry/tools"
)

// protectedWorkspace is a workspace with a git repository, and the
// built-in tools over it.
func protectedWorkspace(t *testing.T) (string, []tools.Tool) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(tools.Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return root, set.Tools()
}

const fsmonitor = "[core]\n\tfsmonitor = touch pwned\n"

// recordingApprover answers every request with outcome and records the
// paths it was asked about.
type recordingApprover struct {
	mu      sync.Mutex
	outcome Outcome
	asked   []string
}

func (a *recordingApprover) Approve(_ context.Context, r ApprovalRequest) (Outcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, _ := r.Args["file_path"].(string)
	a.asked = append(a.asked, p)
	return a.outcome, nil
}

func (a *recordingApprover) paths() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// TestAutoEditAsksForGitConfig: in auto_edit, write_file of .git/config
// (whose core.fsmonitor an allowed "git status" would run) asks a human;
// the human's refusal leaves the file alone.
func TestAutoEditAsksForGitConfig(t *testing.T) {
	root, ts := protectedWorkspace(t)
	b := newScript(
		callTurn("", fc("w1", "write_file", map[string]any{"file_path": ".git/config", "content": fsmonitor})),
		textTurn("done"))
	approver := &recordingApprover{outcome: Cancel}
	s := newTestSession(t, b, Config{Tools: ts, Policy: mustPolicy(t, "auto_edit"), Approver: approver})
	run(t, s, "configure git")
	if got := approver.paths(); len(got) != 1 || got[0] != ".git/config" {
		t.Errorf("approval requests for %q, want one for .git/config", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config was written without approval: %q", b)
	}
}

// TestAutoEditDeniesGitConfigWithoutHuman: in a run with nobody to ask
// (a batch run), the same write is refused with gemini-cli's sentence,
// and the user reads why and what allows it.
func TestAutoEditDeniesGitConfigWithoutHuman(t *testing.T) {
	root, ts := protectedWorkspace(t)
	b := newScript(
		callTurn("", fc("w1", "write_file", map[string]any{"file_path": ".git/hooks/post-checkout", "content": "#!/bin/sh\ntouch pwned\n"})),
		callTurn("", fc("w2", "replace", map[string]any{"file_path": ".git/config", "old_string": "[core]", "new_string": fsmonitor})),
		textTurn("done"))
	s := newTestSession(t, b, Config{Tools: ts, Policy: mustPolicy(t, "auto_edit", "replace")})
	evs := run(t, s, "configure git")
	var hints []string
	for _, ev := range find(evs, EventError) {
		if ev.Meta["code"] == "POLICY_HINT" {
			hints = append(hints, ev.Error.Message)
		}
	}
	if len(hints) != 2 {
		t.Errorf("hints %q, want one per tool", hints)
	}
	for i, id := range []string{"w1", "w2"} {
		msg, _ := toolOutput(t, b, id)["error"].(string)
		if !strings.HasSuffix(msg, "requires user confirmation, which is not supported in non-interactive mode.") {
			t.Errorf("%s: the model read %q, want gemini-cli's sentence alone", id, msg)
		}
		for _, want := range []string{"configures commands that run", "--approval-mode yolo"} {
			if i < len(hints) && !strings.Contains(hints[i], want) {
				t.Errorf("%s: the user read %q, want it to contain %q", id, hints[i], want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "post-checkout")); !os.IsNotExist(err) {
		t.Errorf("the hook was written without a human: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config was edited without a human: %q", b)
	}
}

// TestProceedAlwaysDoesNotCoverProtectedPaths: "allow always" for
// write_file covers later ordinary writes, not a git hook.
func TestProceedAlwaysDoesNotCoverProtectedPaths(t *testing.T) {
	root, ts := protectedWorkspace(t)
	b := newScript(
		callTurn("", fc("w1", "write_file", map[string]any{"file_path": "notes.txt", "content": "a"})),
		callTurn("", fc("w2", "write_file", map[string]any{"file_path": "more.txt", "content": "b"})),
		callTurn("", fc("w3", "write_file", map[string]any{"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"})),
		textTurn("done"))
	approver := &recordingApprover{outcome: ProceedAlways}
	s := newTestSession(t, b, Config{Tools: ts, Policy: mustPolicy(t, "default"), Approver: approver})
	run(t, s, "write")
	if got := strings.Join(approver.paths(), ","); got != "notes.txt,.git/hooks/pre-commit" {
		t.Errorf("approval requests for %s, want notes.txt (then always) and .git/hooks/pre-commit", got)
	}
	for _, f := range []string{"notes.txt", "more.txt", ".git/hooks/pre-commit"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v (every write was approved)", f, err)
		}
	}
}

// TestYoloWritesProtectedPaths: yolo asks for nothing, protected paths
// included.
func TestYoloWritesProtectedPaths(t *testing.T) {
	root, ts := protectedWorkspace(t)
	b := newScript(
		callTurn("", fc("w1", "write_file", map[string]any{"file_path": ".git/config", "content": fsmonitor})),
		textTurn("done"))
	approver := &recordingApprover{outcome: Cancel}
	s := newTestSession(t, b, Config{Tools: ts, Policy: mustPolicy(t, "yolo"), Approver: approver})
	run(t, s, "configure git")
	if got := approver.paths(); len(got) != 0 {
		t.Errorf("yolo asked about %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != fsmonitor {
		t.Errorf(".git/config = %q, want the yolo write", b)
	}
}

// swappingApprover approves, after pointing the symlink link at target: a
// process swapping the link while a human reads the prompt.
type swappingApprover struct{ link, target string }

func (a swappingApprover) Approve(context.Context, ApprovalRequest) (Outcome, error) {
	tmp := a.link + ".new"
	if err := os.Symlink(a.target, tmp); err != nil {
		return Cancel, err
	}
	return ProceedOnce, os.Rename(tmp, a.link)
}

// TestApprovedWriteRedirectedIntoGitRefused: a write approved for d/config,
// with d a link to an ordinary directory, is refused when d has been
// swapped for a link to .git before the call runs.
func TestApprovedWriteRedirectedIntoGitRefused(t *testing.T) {
	root, ts := protectedWorkspace(t)
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	b := newScript(
		callTurn("", fc("w1", "write_file", map[string]any{"file_path": "d/config", "content": fsmonitor})),
		textTurn("done"))
	approver := swappingApprover{link: filepath.Join(root, "d"), target: ".git"}
	s := newTestSession(t, b, Config{Tools: ts, Policy: mustPolicy(t, "default"), Approver: approver})
	run(t, s, "write d/config")
	if got, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(got) != "[core]\n" {
		t.Fatalf(".git/config was written through a swapped link: %q", got)
	}
	if msg, _ := toolOutput(t, b, "w1")["error"].(string); !strings.Contains(msg, "a protected path") {
		t.Errorf("the model read %q, want it to say the target became a protected path", msg)
	}
}
