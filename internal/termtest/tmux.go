// Package termtest drives and measures terminal programs in tests: agentry's
// interactive terminal end to end, and anything else that draws on a
// terminal.
//
// It has four parts:
//
//   - [Start] runs a command in a fresh tmux server on a private socket and
//     gives the test a [Term] to type into ([Term.Keys], [Term.Type]), read
//     ([Term.Screen]) and wait on ([Term.WaitText], [Term.WaitFor]), with the
//     command's exit status once it ends ([Term.WaitExit]).
//   - [StartPTY] runs a command under a pseudo-terminal and records every
//     byte it writes, with timestamps, as a [Recording].
//   - [Analyze] replays a recording on a model of the terminal and counts
//     what makes a screen flicker: clear-screens, erased lines, and writes
//     that destroy content above the program's live region.
//   - Measures for benchmarks: echo latency through tmux
//     ([Term.EchoLatencies]) or the pty ([PTY.Echo]), [Percentiles],
//     start-to-ready ([PTY.WaitOutput]) and peak memory ([ReadMemory]).
//
// Waits are wait-untils with a generous deadline (30 seconds by default), a
// guard against hangs rather than a speed requirement; the measures are for
// figures, never for pass/fail timing assertions.
//
// tmux must be installed (apt-get install tmux). Without it a test using
// [Start] is skipped, or fails under CI (CI set), where .ci/run installs it.
package termtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DefaultTimeout bounds every wait of a [Term] or [PTY] unless its options
// say otherwise. It is a hang guard, not a speed requirement.
const DefaultTimeout = 30 * time.Second

// pollInterval is how long waits sleep between two looks at the screen.
const pollInterval = 10 * time.Millisecond

// ErrNotSeen reports a wait whose condition did not hold before its
// deadline; the error's message holds the screen as it was last seen.
var ErrNotSeen = errors.New("termtest: condition not met")

// Options configures [Start].
type Options struct {
	// Command is the program and its arguments, run directly (not through
	// a shell); a program without a slash is looked up in Env's PATH.
	// Required.
	Command []string
	// Env is the command's whole environment; nothing of the test
	// process's is added. tmux adds TERM (tmux-256color), TMUX, TMUX_PANE,
	// TERM_PROGRAM, TERM_PROGRAM_VERSION and SHELL. When nil, the command
	// gets the test's PATH and a fresh temporary HOME.
	Env []string
	// Dir is the command's working directory; the test process's when
	// empty.
	Dir string
	// Cols and Rows are the terminal's size; 80×24 when zero.
	Cols, Rows int
	// Timeout bounds each wait; DefaultTimeout when zero.
	Timeout time.Duration
}

// Term is a command running in a tmux pane of its own tmux server. Create it
// with [Start]; the command and the server are killed when the test ends.
// Its methods fail the test on tmux errors, and must be called from the
// test's goroutine, except [Term.Wait], [Term.Capture], [Term.Echo] and
// [Term.EchoLatencies], which return errors.
type Term struct {
	t       testing.TB
	tmux    string
	sock    string
	env     []string
	pane    string
	pid     int
	server  int // the tmux server's pid
	timeout time.Duration
}

// Start starts a tmux server on a private socket, with no configuration
// file, the status line off and remain-on-exit on, holding one session of
// opts.Cols×opts.Rows that runs opts.Command. The command and the server
// are killed at the end of the test; with tmux 3.2 or later the server also
// dies with the test binary if it is killed first. Without tmux the test
// is skipped, or failed under CI.
func Start(t testing.TB, opts Options) *Term {
	t.Helper()
	if len(opts.Command) == 0 {
		t.Fatal("termtest: Start needs a command")
	}
	tmux := lookTmux(t)
	cols, rows := size(opts.Cols, opts.Rows)
	env := opts.Env
	if env == nil {
		env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	}
	// A short directory: t.TempDir paths can exceed the 108 bytes a Unix
	// socket path may have.
	dir, err := os.MkdirTemp("", "termtest-")
	if err != nil {
		t.Fatalf("termtest: %v", err)
	}
	tm := &Term{
		t:       t,
		tmux:    tmux,
		sock:    dir + "/sock",
		env:     env,
		timeout: opts.Timeout,
	}
	if tm.timeout <= 0 {
		tm.timeout = DefaultTimeout
	}
	server := tm.startServer()
	t.Cleanup(func() {
		// A command still running is killed with its process group (tmux
		// made it a session leader) while it is surely tmux's child; then
		// the server, which may already be gone.
		if tm.pid > 0 {
			out, err := tm.run("display-message", "-p", "-t", tm.pane, "#{pane_dead}")
			if err == nil && strings.TrimSpace(out) == "0" {
				_ = syscall.Kill(-tm.pid, syscall.SIGKILL)
			}
		}
		_, _ = tm.run("kill-server")
		if server != nil {
			server.stop()
		}
		_ = os.RemoveAll(dir)
	})
	argv := opts.Command
	if len(argv) == 1 {
		// tmux runs a lone argument through the shell; env runs it
		// directly, in the same process.
		envPath, err := exec.LookPath("env")
		if err != nil {
			t.Fatalf("termtest: %v", err)
		}
		argv = []string{envPath, "--", argv[0]}
	}
	args := []string{
		"set-option", "-g", "remain-on-exit", "on", ";",
		"set-option", "-g", "status", "off", ";",
		"set-option", "-g", "history-limit", "100000", ";",
		"new-session", "-d", "-s", "termtest", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"-P", "-F", "#{pane_id} #{pane_pid} #{pid}",
	}
	if opts.Dir != "" {
		args = append(args, "-c", opts.Dir)
	}
	args = append(args, "--")
	args = append(args, argv...)
	out, err := tm.run(args...)
	if err != nil {
		t.Fatalf("termtest: starting tmux: %v", err)
	}
	f := strings.Fields(out)
	if len(f) != 3 {
		t.Fatalf("termtest: tmux new-session printed %q, want a pane id and two pids", out)
	}
	tm.pane = f[0]
	tm.pid, err = strconv.Atoi(f[1])
	if err == nil {
		tm.server, err = strconv.Atoi(f[2])
	}
	if err != nil {
		t.Fatalf("termtest: tmux new-session printed %q: %v", out, err)
	}
	return tm
}

// foreground is a tmux server running as this process's child.
type foreground struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startServer starts the tmux server in the foreground (-D, tmux 3.2 and
// later) as a child that the kernel kills if the test binary dies, which a
// -timeout panic does without running cleanups. It returns nil, leaving
// the first command to start a daemon, with an older tmux.
func (tm *Term) startServer() *foreground {
	tm.t.Helper()
	out, err := exec.Command(tm.tmux, "-V").Output()
	if err != nil || !foregroundCapable(string(out)) {
		return nil
	}
	cmd := exec.Command(tm.tmux, "-u", "-D", "-S", tm.sock, "-f", "/dev/null")
	cmd.Env = tm.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		tm.t.Fatalf("termtest: starting the tmux server: %v", err)
	}
	fg := &foreground{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // killed or told to exit; its status says nothing
		close(fg.exited)
	}()
	deadline := time.Now().Add(tm.timeout)
	for {
		if _, err := os.Stat(tm.sock); err == nil {
			return fg
		}
		select {
		case <-fg.exited:
			tm.t.Fatalf("termtest: the tmux server exited at start: %s", strings.TrimSpace(errb.String()))
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			fg.stop()
			tm.t.Fatalf("termtest: the tmux server made no socket within %v", tm.timeout)
		}
	}
}

// stop waits for the server to exit after kill-server, killing it if it
// does not.
func (fg *foreground) stop() {
	select {
	case <-fg.exited:
		return
	case <-time.After(5 * time.Second):
	}
	_ = fg.cmd.Process.Kill()
	<-fg.exited
}

// foregroundCapable reports whether tmux -V names a version of 3.2 or later.
func foregroundCapable(version string) bool {
	v := strings.TrimPrefix(strings.TrimSpace(version), "tmux ")
	v = strings.TrimPrefix(v, "next-")
	major, rest, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	minor := strings.TrimRightFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	return err1 == nil && err2 == nil && (ma > 3 || ma == 3 && mi >= 2)
}

// lookTmux finds tmux, skipping t without it, or failing it under CI.
func lookTmux(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("termtest: tmux is not installed: under CI the terminal tests must run (install it: apt-get install tmux; .ci/run does): %v", err)
	}
	t.Skipf("termtest: terminal tests skipped: tmux is not installed (apt-get install tmux): %v", err)
	return ""
}

// size applies the default terminal size.
func size(cols, rows int) (int, int) {
	if cols <= 0 {
		cols = 80
	}
	if rows <= 0 {
		rows = 24
	}
	return cols, rows
}

// run runs one tmux command line against the server, returning its stdout.
func (tm *Term) run(args ...string) (string, error) {
	cmd := exec.Command(tm.tmux, append([]string{"-u", "-S", tm.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = tm.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// must runs a tmux command, failing the test on error.
func (tm *Term) must(args ...string) string {
	tm.t.Helper()
	out, err := tm.run(args...)
	if err != nil {
		tm.t.Fatalf("termtest: %v", err)
	}
	return out
}

// PID is the process id of the command (tmux's pane_pid).
func (tm *Term) PID() int { return tm.pid }

// Foreground returns the name of the pane's foreground process
// (pane_current_command), e.g. to wait until a shell has started a command
// before interrupting it.
func (tm *Term) Foreground() string {
	tm.t.Helper()
	return strings.TrimSpace(tm.must("display-message", "-p", "-t", tm.pane, "#{pane_current_command}"))
}

// Keys sends keys with tmux send-keys: each argument is a key name (Enter,
// Escape, Tab, BSpace, Up, Down, Left, Right, C-c, M-x, F1, …) or, when it
// names no key, its text. Use [Term.Type] for text that could be a key
// name.
func (tm *Term) Keys(keys ...string) {
	tm.t.Helper()
	tm.must(append([]string{"send-keys", "-t", tm.pane, "--"}, keys...)...)
}

// Type sends text literally (send-keys -l), as if typed.
func (tm *Term) Type(text string) {
	tm.t.Helper()
	tm.must("send-keys", "-t", tm.pane, "-l", "--", text)
}

// Capture returns the visible screen, one line per row without trailing
// spaces (tmux capture-pane -p).
func (tm *Term) Capture() (string, error) {
	return tm.run("capture-pane", "-p", "-t", tm.pane)
}

// Screen returns the visible screen as [Term.Capture] does, failing the
// test on error.
func (tm *Term) Screen() string {
	tm.t.Helper()
	s, err := tm.Capture()
	if err != nil {
		tm.t.Fatalf("termtest: %v", err)
	}
	return s
}

// Scrollback returns the pane's whole history and visible screen, oldest
// line first (up to 100,000 lines), with lines the terminal wrapped joined
// again (capture-pane -J, which keeps trailing spaces): the text as the
// program wrote it.
func (tm *Term) Scrollback() string {
	tm.t.Helper()
	return tm.must("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", tm.pane)
}

// Resize changes the terminal's size; the command gets SIGWINCH.
func (tm *Term) Resize(cols, rows int) {
	tm.t.Helper()
	tm.must("resize-window", "-t", tm.pane, "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
}

// Wait polls the screen until cond holds and returns that screen. It
// returns an error wrapping [ErrNotSeen] and ctx's error, with the last
// screen in its message, if ctx ends first, or the timeout passes.
func (tm *Term) Wait(ctx context.Context, cond func(screen string) bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, tm.timeout)
	defer cancel()
	var last string
	for {
		s, err := tm.Capture()
		if err != nil {
			return "", err
		}
		if cond(s) {
			return s, nil
		}
		last = s
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("%w (%w); the screen:\n%s", ErrNotSeen, ctx.Err(), Framed(last))
		case <-time.After(pollInterval):
		}
	}
}

// WaitFor waits until cond holds of the screen and returns that screen. If
// it does not within the timeout, it fails the test with what it waited for
// and the screen.
func (tm *Term) WaitFor(what string, cond func(screen string) bool) string {
	tm.t.Helper()
	s, err := tm.Wait(context.Background(), cond)
	if err != nil {
		tm.t.Fatalf("termtest: waiting %v for %s: %v", tm.timeout, what, err)
	}
	return s
}

// WaitText waits until the screen shows substr and returns that screen.
func (tm *Term) WaitText(substr string) string {
	tm.t.Helper()
	return tm.WaitFor(strconv.Quote(substr), func(s string) bool { return strings.Contains(s, substr) })
}

// Exit is how the pane's command ended.
type Exit struct {
	// Code is the exit status, or -1 when a signal ended the command.
	Code int
	// Signal is the signal that ended the command, or 0 (also when tmux,
	// older than 3.3, does not say which).
	Signal int
}

// Exited reports whether the command has ended (tmux's pane_dead) and how.
func (tm *Term) Exited() (Exit, bool) {
	tm.t.Helper()
	out := strings.TrimSpace(tm.must("display-message", "-p", "-t", tm.pane, "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"))
	f := strings.Split(out, ":")
	if len(f) != 3 {
		tm.t.Fatalf("termtest: tmux pane status %q", out)
	}
	if f[0] != "1" {
		return Exit{}, false
	}
	if f[1] == "" && f[2] == "" {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", tm.pid)); err != nil {
			// Reaped: tmux may have done so after the status above was
			// read, so read it again. Still without a status, it is a
			// signal on a tmux older than 3.3, which has no
			// pane_dead_signal.
			again := strings.Split(strings.TrimSpace(tm.must("display-message", "-p", "-t", tm.pane, "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}")), ":")
			if len(again) != 3 || again[1] == "" && again[2] == "" {
				return Exit{Code: -1}, true
			}
			f = again
		}
	}
	if f[1] == "" && f[2] == "" {
		// tmux marks the pane dead when its terminal closes, which can be
		// before it has reaped the process: until then neither the status
		// nor the signal is known, and the command has not ended as far
		// as this package reports. tmux built with libutempter can miss
		// the SIGCHLD altogether (tmux issue 311: utempter's own handler
		// is in place as the terminal closes), leaving the process a
		// zombie; a SIGCHLD sent to the server makes it reap it.
		_ = syscall.Kill(tm.server, syscall.SIGCHLD)
		return Exit{}, false
	}
	if f[2] != "" {
		sig, err := strconv.Atoi(f[2])
		if err != nil {
			tm.t.Fatalf("termtest: tmux pane status %q: %v", out, err)
		}
		return Exit{Code: -1, Signal: sig}, true
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		tm.t.Fatalf("termtest: tmux pane status %q: %v", out, err)
	}
	return Exit{Code: code}, true
}

// WaitExit waits until the command has ended and returns how; it fails the
// test, with the screen, if the command is still running at the timeout.
func (tm *Term) WaitExit() Exit {
	tm.t.Helper()
	deadline := time.Now().Add(tm.timeout)
	for {
		if e, ok := tm.Exited(); ok {
			return e
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("termtest: the command did not exit within %v; the screen:\n%s", tm.timeout, Framed(tm.Screen()))
		}
		time.Sleep(pollInterval)
	}
}

// Framed returns a screen with each line between bars, so that failure
// messages show its blank lines and trailing spaces.
func Framed(screen string) string {
	lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("|")
		b.WriteString(l)
		b.WriteString("|\n")
	}
	return b.String()
}
