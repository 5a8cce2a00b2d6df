package shellexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentry-dev/agentry/internal/proctest"
)

const (
	grace = 7 * time.Second // distinct from drain, so a test fires the right timer
	drain = 3 * time.Second
)

// run runs spec in a goroutine, collecting its output, and returns a
// function that waits for it (failing t after a hang guard).
func run(t *testing.T, ctx context.Context, spec Spec, onChunk func(Chunk)) func() (Exit, []Chunk, error) {
	t.Helper()
	type result struct {
		exit   Exit
		chunks []Chunk
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var chunks []Chunk
		exit, err := Run(ctx, spec, func(c Chunk) {
			chunks = append(chunks, c)
			if onChunk != nil {
				onChunk(c)
			}
		})
		done <- result{exit, chunks, err}
	}()
	return func() (Exit, []Chunk, error) {
		t.Helper()
		select {
		case r := <-done:
			return r.exit, r.chunks, r.err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return")
			return Exit{}, nil, nil
		}
	}
}

func text(chunks []Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.Text)
	}
	return b.String()
}

func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLiveOutput: output reaches emit while the command runs (the command
// waits on a FIFO that emit writes only once it has seen the first line),
// and with Combined, stdout and stderr arrive in the order written.
func TestLiveOutput(t *testing.T) {
	dir := t.TempDir()
	gate := mkfifo(t, dir, "gate")
	wait := run(t, t.Context(), Spec{
		Script:   "echo first; echo err1 >&2; read -r _ < gate; echo second >&2; echo third",
		Dir:      dir,
		Env:      Environ(nil),
		Combined: true,
	}, func(c Chunk) {
		if strings.Contains(c.Text, "err1") {
			if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
				t.Error(err)
			}
		}
	})
	exit, chunks, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if got := text(chunks); got != "first\nerr1\nsecond\nthird\n" {
		t.Errorf("output %q", got)
	}
	for _, c := range chunks {
		if c.Stderr {
			t.Errorf("chunk %q marked stderr though the streams are combined", c.Text)
		}
	}
	if exit.State == nil || exit.State.ExitCode() != 0 || exit.Cancelled {
		t.Errorf("exit %+v", exit)
	}
}

// TestSeparateStreams: without Combined, each chunk says which stream it
// came from.
func TestSeparateStreams(t *testing.T) {
	exit, chunks, err := run(t, t.Context(), Spec{Script: "echo out; echo err >&2; exit 3", Dir: t.TempDir()}, nil)()
	if err != nil {
		t.Fatal(err)
	}
	var out, errs string
	for _, c := range chunks {
		if c.Stderr {
			errs += c.Text
		} else {
			out += c.Text
		}
	}
	if out != "out\n" || errs != "err\n" {
		t.Errorf("stdout %q, stderr %q", out, errs)
	}
	if exit.State.ExitCode() != 3 {
		t.Errorf("exit code %d", exit.State.ExitCode())
	}
	// The shell and the watchdog are reaped: the group is gone.
	if err := SignalGroup(exit.PID, 0); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signalling the group after Run: %v", err)
	}
}

// TestRunesWhole: a character split between two reads reaches emit whole.
func TestRunesWhole(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := "héllo wörld € 𝄞"
	chunks := make(chan Chunk, len(s)+1)
	done := make(chan struct{})
	go func() {
		read(r, false, chunks)
		close(done)
	}()
	for i := range len(s) {
		if _, err := w.Write([]byte{s[i]}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-done
	r.Close()
	close(chunks)
	var got strings.Builder
	for c := range chunks {
		if !utf8.ValidString(c.Text) {
			t.Errorf("chunk %q splits a character", c.Text)
		}
		got.WriteString(c.Text)
	}
	if got.String() != s {
		t.Errorf("got %q", got.String())
	}
}

var pids = regexp.MustCompile(`shell=(\d+) child=(\d+)`)

func parsePIDs(t *testing.T, out string) (shell, child int) {
	t.Helper()
	m := pids.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pids in %q", out)
	}
	shell, _ = strconv.Atoi(m[1])
	child, _ = strconv.Atoi(m[2])
	return shell, child
}

// TestCancelTerm: on cancellation the group gets SIGTERM, which ends the
// shell and its child; the SIGKILL timer is started but never needed.
func TestCancelTerm(t *testing.T) {
	var timers proctest.Timers
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	wait := run(t, ctx, Spec{
		Script: "sleep 1000 & echo shell=$$ child=$!; wait",
		Dir:    t.TempDir(),
		Grace:  grace,
		After:  timers.After,
	}, func(c Chunk) {
		if strings.Contains(c.Text, "child=") {
			cancel()
		}
	})
	exit, chunks, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	shell, child := parsePIDs(t, text(chunks))
	if !exit.Cancelled || exit.PID != shell {
		t.Errorf("exit %+v, shell %d", exit, shell)
	}
	if ws := exit.State.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the shell ended with %v, want SIGTERM", exit.State)
	}
	for _, pid := range []int{shell, child} {
		proctest.Eventually(t, "process "+strconv.Itoa(pid)+" to die", func() bool { return !proctest.Running(pid) })
	}
	if timers.Pending(grace) != 1 {
		t.Errorf("the grace timer was not started")
	}
}

// TestCancelKillAfterGrace: a shell that ignores SIGTERM is killed when
// the grace ends, and not before.
func TestCancelKillAfterGrace(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, dir, "block") // nobody writes it: the shell blocks opening it
	var timers proctest.Timers
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	shellPID := make(chan int, 1)
	wait := run(t, ctx, Spec{
		Script: "trap '' TERM; echo shell=$$ child=$$; read -r _ < block",
		Dir:    dir,
		Grace:  grace,
		After:  timers.After,
	}, func(c Chunk) {
		if strings.Contains(c.Text, "shell=") {
			shell, _ := parsePIDs(t, c.Text)
			shellPID <- shell
			cancel()
		}
	})
	shell := <-shellPID
	timers.Await(t, grace)
	// SIGTERM was sent before the timer started; the shell ignores it.
	if !proctest.Running(shell) {
		t.Fatal("the shell died of SIGTERM, though it ignores it")
	}
	timers.Fire(t, grace)
	exit, chunks, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := parsePIDs(t, text(chunks)); got != shell {
		t.Errorf("output %q", text(chunks))
	}
	if ws := exit.State.Sys().(syscall.WaitStatus); !exit.Cancelled || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("exit %+v, want SIGKILL after the grace", exit.State)
	}
	proctest.Eventually(t, "the shell to die", func() bool { return !proctest.Running(shell) })
}

// TestCancelNoGrace: without a grace the group is SIGKILLed at once.
func TestCancelNoGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	exit, chunks, err := run(t, ctx, Spec{Script: "sleep 1000 & echo shell=$$ child=$!; wait", Dir: t.TempDir()}, func(c Chunk) {
		if strings.Contains(c.Text, "child=") {
			cancel()
		}
	})()
	if err != nil {
		t.Fatal(err)
	}
	_, child := parsePIDs(t, text(chunks))
	if ws := exit.State.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("exit %v", exit.State)
	}
	proctest.Eventually(t, "the child to die", func() bool { return !proctest.Running(child) })
}

// TestLeftoverJobsKilled: what the shell leaves in its group is killed once
// it exits, and Run does not wait for the drain bound (the killed job
// closes the output).
func TestLeftoverJobsKilled(t *testing.T) {
	var timers proctest.Timers
	exit, chunks, err := run(t, t.Context(), Spec{
		Script: "sleep 1000 & echo shell=$$ child=$!",
		Dir:    t.TempDir(),
		Drain:  drain,
		After:  timers.After,
	}, nil)()
	if err != nil {
		t.Fatal(err)
	}
	_, child := parsePIDs(t, text(chunks))
	proctest.Eventually(t, "the leftover job to die", func() bool { return !proctest.Running(child) })
	if exit.Cancelled || exit.State.ExitCode() != 0 || exit.Guard != nil {
		t.Errorf("exit %+v", exit)
	}
}

// TestKeepJobs: with KeepJobs the leftover job runs on, and the caller
// gets the group's watchdog.
func TestKeepJobs(t *testing.T) {
	exit, chunks, err := run(t, t.Context(), Spec{
		Script:   "sleep 1000 >/dev/null 2>&1 & echo shell=$$ child=$!",
		Dir:      t.TempDir(),
		KeepJobs: true,
	}, nil)()
	if err != nil {
		t.Fatal(err)
	}
	_, child := parsePIDs(t, text(chunks))
	if !proctest.Running(child) || exit.Guard == nil {
		t.Fatalf("job running %v, guard %v", proctest.Running(child), exit.Guard)
	}
	if err := SignalGroup(exit.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exit.Guard.Close()
	proctest.Eventually(t, "the job to die", func() bool { return !proctest.Running(child) })
}

// TestDrainBound: a process that left the group and holds the output
// keeps Run only until the drain bound.
func TestDrainBound(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, dir, "ready")
	var timers proctest.Timers
	seen := make(chan struct{})
	// The shell exits only once the holder has left the group (setsid)
	// and said so through the FIFO.
	wait := run(t, t.Context(), Spec{
		Script: "setsid bash -c 'echo holder=$$ > ready; exec sleep 1000' & read -r line < ready; echo $line",
		Dir:    dir,
		Drain:  drain,
		After:  timers.After,
	}, func(c Chunk) {
		if strings.Contains(c.Text, "holder=") {
			close(seen)
		}
	})
	// Output still unread when the bound expires is lost; fire it once
	// the output has been read.
	<-seen
	timers.Fire(t, drain)
	exit, chunks, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`holder=(\d+)`).FindStringSubmatch(text(chunks))
	if m == nil {
		t.Fatalf("output %q", text(chunks))
	}
	holder, _ := strconv.Atoi(m[1])
	if !proctest.Running(holder) {
		t.Error("the holder should have outlived the group")
	}
	_ = syscall.Kill(holder, syscall.SIGKILL)
	proctest.Eventually(t, "the holder to die", func() bool { return !proctest.Running(holder) })
	if exit.State.ExitCode() != 0 {
		t.Errorf("exit %v", exit.State)
	}
}

// TestNotStarted: a context that has ended, or a shell that does not
// exist, runs nothing.
func TestNotStarted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("stop")
	cancel(stop)
	marker := filepath.Join(t.TempDir(), "ran")
	if _, err := Run(ctx, Spec{Script: "touch " + marker}, func(Chunk) {}); !errors.Is(err, stop) {
		t.Errorf("err = %v, want the cause", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	if _, err := Run(t.Context(), Spec{Shell: "/nonexistent/sh", Script: "true"}, func(Chunk) {}); !errors.Is(err, ErrStart) {
		t.Errorf("err = %v, want ErrStart", err)
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "secret")
	t.Setenv("AGENTRY_SHELLEXEC_TEST", "visible")
	env := Environ(nil)
	if slices.Contains(env, "GEMINI_API_KEY=secret") {
		t.Error("the API key reaches commands")
	}
	for _, want := range []string{"AGENTRY_SHELLEXEC_TEST=visible", "AGENTRY=1", "GEMINI_CLI=1", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"} {
		if !slices.Contains(env, want) {
			t.Errorf("%s missing", want)
		}
	}
	base := []string{"A=1"}
	if got := Environ(base); got[0] != "A=1" || len(base) != 1 || slices.Contains(got, "AGENTRY_SHELLEXEC_TEST=visible") {
		t.Errorf("Environ(base) = %q", got)
	}
}
