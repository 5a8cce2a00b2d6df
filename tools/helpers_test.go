package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

func TestMain(m *testing.M) {
	if mode, dir, ok := proctest.Helper(); ok {
		runHelper(mode, dir)
		return
	}
	// Become a child subreaper, so that the grandchildren of shell commands
	// are re-parented to this process when their parents die and the
	// tests can reap them and prove them gone. Without it they would go to
	// PID 1, which in a container may never reap them, and a zombie still
	// answers kill(pid, 0).
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		panic("prctl(PR_SET_CHILD_SUBREAPER): " + errno.Error())
	}
	os.Exit(m.Run())
}

// hangGuard is how long any single step may take before a test fails.
// It only catches hangs; no test asserts on speed.
const hangGuard = 10 * time.Second

// writeFiles creates files under dir from a map of slash-separated relative
// paths to contents.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// realDir returns a fresh temporary directory with symlinks resolved (on
// some systems the temp dir itself lies behind a symlink).
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newTestSet returns a Set over a fresh workspace and that workspace's root.
func newTestSet(t *testing.T, cfg Config) (*Set, string) {
	t.Helper()
	root := realDir(t)
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = ws
	if cfg.TempDir == "" {
		cfg.TempDir = realDir(t)
	}
	s, err := NewSet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, root
}

// run executes tool name with args under a hang guard.
func run(t *testing.T, s *Set, name string, a map[string]any) (Result, error) {
	t.Helper()
	tool, ok := s.Lookup(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	res, err := tool.Execute(ctx, Call{ID: "call-1", Args: a})
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v", name, hangGuard)
	}
	return res, err
}

// mustRun is run for calls that must succeed.
func mustRun(t *testing.T, s *Set, name string, a map[string]any) Result {
	t.Helper()
	res, err := run(t, s, name, a)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, a, err)
	}
	return res
}

// wantToolError checks that err is an *Error of type want whose message
// contains every one of parts.
func wantToolError(t *testing.T, err error, want ErrorType, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("got %T %v, want *Error of type %s", err, err, want)
	}
	if te.Type != want {
		t.Fatalf("got error type %s (%v), want %s", te.Type, err, want)
	}
	for _, p := range parts {
		if !strings.Contains(te.Msg, p) {
			t.Errorf("error message %q does not contain %q", te.Msg, p)
		}
	}
}

// initGit makes dir look like the top of a git work tree; the ignore logic
// only looks for the .git entry.
func initGit(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// processGone waits until pid no longer exists: it reaps pid if it became
// this process's child (see TestMain) and then expects kill(pid, 0) to
// fail with ESRCH.
func processGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		var ws syscall.WaitStatus
		// Reap it if it is (now) our child; ECHILD means it is not.
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still exists after %v (kill(pid, 0): %v)", pid, hangGuard, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
