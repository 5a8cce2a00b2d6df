package termtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// bash starts bash without startup files and with a plain prompt.
func bash(t *testing.T, env ...string) *Term {
	t.Helper()
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PS1=$ "}
	return Start(t, Options{Command: []string{"bash", "--norc", "--noprofile"}, Env: append(base, env...), Cols: 80, Rows: 24})
}

// hasLine reports whether the screen has a line that is exactly line.
func hasLine(line string) func(string) bool {
	return func(s string) bool {
		for l := range strings.SplitSeq(s, "\n") {
			if l == line {
				return true
			}
		}
		return false
	}
}

func TestTmuxTypeAndRead(t *testing.T) {
	tm := bash(t)
	tm.WaitFor("the prompt", hasLine("$"))
	tm.Type("echo hi")
	tm.Keys("Enter")
	// The command line says "echo hi"; only its output is a line "hi".
	tm.WaitFor(`a line "hi"`, hasLine("hi"))
	if s := tm.Screen(); !strings.HasPrefix(s, "$ echo hi\nhi\n$") {
		t.Errorf("screen:\n%s", Framed(s))
	}
}

func TestTmuxKeyNames(t *testing.T) {
	tm := bash(t)
	tm.WaitFor("the prompt", hasLine("$"))
	tm.Keys("echo one", "Enter")
	tm.WaitFor(`a line "one"`, hasLine("one"))
	// Up recalls the command; Enter runs it again.
	tm.Keys("Up", "Enter")
	tm.WaitFor("the command run twice", func(s string) bool { return strings.Count(s, "\none\n") == 2 })
	// A key name sent by Type is text.
	tm.Type("echo Enter")
	tm.Keys("Enter")
	tm.WaitFor(`a line "Enter"`, hasLine("Enter"))
}

func TestTmuxEnvironment(t *testing.T) {
	t.Setenv("TERMTEST_LEAK", "leaked")
	home := t.TempDir()
	tm := Start(t, Options{
		Command: []string{"bash", "--norc", "--noprofile"},
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PS1=$ ", "FOO=bar"},
		Dir:     home,
		Cols:    120, Rows: 40,
	})
	tm.WaitFor("the prompt", hasLine("$"))
	tm.Type(`echo "[$FOO|$HOME|$PWD|$TERM|${TERMTEST_LEAK-unset}|$(tput cols)x$(tput lines)]"`)
	tm.Keys("Enter")
	want := "[bar|" + home + "|" + home + "|tmux-256color|unset|120x40]"
	tm.WaitFor(want, hasLine(want))
}

func TestTmuxUTF8AndResize(t *testing.T) {
	tm := bash(t)
	tm.WaitFor("the prompt", hasLine("$"))
	tm.Type("echo héllo ─ 世界")
	tm.Keys("Enter")
	tm.WaitFor("the UTF-8 line", hasLine("héllo ─ 世界"))
	tm.Resize(100, 30)
	tm.Type("stty size")
	tm.Keys("Enter")
	tm.WaitFor("the new size", hasLine("30 100"))
}

func TestTmuxCtrlCKillsSleep(t *testing.T) {
	tm := Start(t, Options{Command: []string{"sleep", "1000"}})
	if _, dead := tm.Exited(); dead {
		t.Fatal("sleep is dead before Ctrl-C")
	}
	proctest.Eventually(t, "sleep in the foreground", func() bool { return tm.Foreground() == "sleep" })
	tm.Keys("C-c")
	e := tm.WaitExit()
	if e != (Exit{Code: -1, Signal: int(syscall.SIGINT)}) {
		t.Errorf("exit = %+v, want SIGINT", e)
	}
}

func TestTmuxCtrlCInShell(t *testing.T) {
	tm := bash(t)
	tm.WaitFor("the prompt", hasLine("$"))
	tm.Keys("sleep 1000", "Enter")
	proctest.Eventually(t, "sleep in the foreground", func() bool { return tm.Foreground() == "sleep" })
	tm.Keys("C-c")
	tm.Keys("echo status=$?", "Enter")
	tm.WaitFor("status=130", hasLine("status=130"))
}

func TestTmuxExitStatus(t *testing.T) {
	tm := Start(t, Options{Command: []string{"sh", "-c", "echo bye; exit 3"}})
	if e := tm.WaitExit(); e != (Exit{Code: 3}) {
		t.Errorf("exit = %+v, want status 3", e)
	}
	if !strings.Contains(tm.Scrollback(), "bye") {
		t.Errorf("scrollback:\n%s", tm.Scrollback())
	}
	if tm.PID() <= 0 {
		t.Errorf("pid %d", tm.PID())
	}
}

func TestTmuxLoneCommandRunsDirectly(t *testing.T) {
	// A lone argument with a space is a program's path, not a shell line.
	dir := t.TempDir()
	prog := dir + "/my prog"
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"pid $$\"\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm := Start(t, Options{Command: []string{prog}})
	if e := tm.WaitExit(); e.Code != 4 {
		t.Errorf("exit = %+v, want status 4", e)
	}
	// The pane's process is the program itself, not a shell around it.
	if s := tm.Scrollback(); !strings.Contains(s, "pid "+strconv.Itoa(tm.PID())) {
		t.Errorf("pane pid %d; scrollback:\n%s", tm.PID(), s)
	}
}

func TestTmuxWaitFailureShowsScreen(t *testing.T) {
	tm := bash(t)
	tm.WaitFor("the prompt", hasLine("$"))
	tm.Keys("echo visible-text", "Enter")
	tm.WaitFor("the echo", hasLine("visible-text"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := tm.Wait(ctx, func(string) bool { return false })
	if !errors.Is(err, ErrNotSeen) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(err.Error(), "|visible-text|") {
		t.Errorf("the error does not show the screen:\n%v", err)
	}
}

func TestTmuxCleanupKillsServer(t *testing.T) {
	var pid int
	var sock string
	t.Run("inner", func(t *testing.T) {
		// Deaf to the hangup tmux's exit sends.
		tm := Start(t, Options{Command: []string{"sh", "-c", `trap "" HUP; echo ready; exec sleep 1000`}})
		tm.WaitText("ready")
		pid, sock = tm.PID(), tm.sock
	})
	proctest.Eventually(t, "the pane's process to end with its test", func() bool { return !proctest.Running(pid) })
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind: %v", sock, err)
	}
}

// fakeTB records how a helper ends a test. Fatal and Skip end the calling
// goroutine, as testing's do.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	fatal  string
	skip   string
	failed bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal, f.failed = fmt.Sprintf(format, args...), true
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skip = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls fn with f in a goroutine of its own.
func (f *fakeTB) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
}

func TestNoTmux(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := exec.LookPath("tmux"); err == nil {
		t.Fatal("tmux still found")
	}
	t.Run("CI", func(t *testing.T) {
		t.Setenv("CI", "1")
		f := &fakeTB{TB: t}
		f.run(func(tb testing.TB) { lookTmux(tb) })
		if !f.failed || !strings.Contains(f.fatal, "apt-get install tmux") || f.skip != "" {
			t.Errorf("fatal %q, skip %q", f.fatal, f.skip)
		}
	})
	t.Run("not CI", func(t *testing.T) {
		t.Setenv("CI", "")
		f := &fakeTB{TB: t}
		f.run(func(tb testing.TB) { lookTmux(tb) })
		if f.failed || !strings.Contains(f.skip, "tmux is not installed") {
			t.Errorf("fatal %q, skip %q", f.fatal, f.skip)
		}
	})
}

// TestTmuxDiesWithTestBinary: a test binary killed before its cleanups
// run, as go test's -timeout does, takes its tmux server and the command
// with it.
func TestTmuxDiesWithTestBinary(t *testing.T) {
	out, err := exec.Command(lookTmux(t), "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !foregroundCapable(string(out)) {
		t.Skipf("%s runs its server as a daemon (-D came in 3.2)", strings.TrimSpace(string(out)))
	}
	// The helper's socket directory, which its cleanups would remove,
	// goes in the test's.
	cmd := helperCmd("orphan", "TMPDIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var server, pane int
	if _, err := fmt.Fscan(stdout, &server, &pane); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("reading the helper's pids: %v", err)
	}
	if !proctest.Running(server) || !proctest.Running(pane) {
		t.Fatalf("server %d or command %d is not running", server, pane)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	proctest.Eventually(t, "the tmux server and its command to die with the test binary", func() bool {
		return !proctest.Running(server) && !proctest.Running(pane)
	})
}

func TestForegroundCapable(t *testing.T) {
	for v, want := range map[string]bool{
		"tmux 3.3a\n": true, "tmux 3.2": true, "tmux 3.4": true, "tmux next-3.6": true, "tmux 4.0": true,
		"tmux 3.1c": false, "tmux 2.9a": false, "tmux master": false, "": false,
	} {
		if got := foregroundCapable(v); got != want {
			t.Errorf("foregroundCapable(%q) = %v", v, got)
		}
	}
}
