package shellmode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// testGrace is the kill grace of the tests' runners; its timer fires only
// when a test fires it.
const testGrace = 9 * time.Second

// newRunner returns a Runner in a fresh directory (symlinks resolved)
// whose timers the test fires.
func newRunner(t *testing.T) (*Runner, *proctest.Timers) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	timers := &proctest.Timers{}
	r, err := New(Config{Dir: dir, TempDir: t.TempDir(), KillGrace: testGrace, After: timers.After})
	if err != nil {
		t.Fatal(err)
	}
	return r, timers
}

// runAsync runs command and returns a function waiting for its result
// (failing t after a hang guard).
func runAsync(t *testing.T, ctx context.Context, r *Runner, command string, out func(string)) func() (Result, error) {
	t.Helper()
	type result struct {
		res Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := r.Run(ctx, command, out)
		done <- result{res, err}
	}()
	return func() (Result, error) {
		t.Helper()
		select {
		case x := <-done:
			return x.res, x.err
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return")
			return Result{}, nil
		}
	}
}

// TestLiveOutputInOrder: output reaches out while the command runs — the
// command blocks on a FIFO that out writes only once it has seen the
// first lines — and stdout and stderr keep the order they were written in.
func TestLiveOutputInOrder(t *testing.T) {
	r, _ := newRunner(t)
	gate := filepath.Join(r.Dir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	res, err := runAsync(t, t.Context(), r, "echo one; echo two >&2; read -r _ < gate; echo three >&2; printf '\\033[1mfour\\033[0m\\n'", func(c string) {
		got.WriteString(c)
		if strings.Contains(got.String(), "two\n") && !strings.Contains(got.String(), "three") {
			if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
				t.Error(err)
			}
		}
	})()
	if err != nil {
		t.Fatal(err)
	}
	if want := "one\ntwo\nthree\n\x1b[1mfour\x1b[0m\n"; got.String() != want {
		t.Errorf("streamed %q, want %q", got.String(), want)
	}
	if res.Output != "one\ntwo\nthree\nfour" || res.ExitCode != 0 || res.Signal != 0 || res.Cancelled || res.Truncated {
		t.Errorf("result %+v", res)
	}
	if res.Dir != r.Dir() || res.DirChanged {
		t.Errorf("Dir %q changed %v, want %q unchanged", res.Dir, res.DirChanged, r.Dir())
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	r, _ := newRunner(t)
	for _, tc := range []struct {
		command string
		code    int
		signal  syscall.Signal
		dir     bool // the wrapper got to write the directory
		history string
	}{
		{"false", 1, 0, true, "Command exited with code 1.\n(Command produced no output)"},
		{"echo bye; exit 3", 3, 0, false, "Command exited with code 3.\nbye"},
		{"kill -TERM $$", -1, syscall.SIGTERM, false, "Command terminated by signal: 15.\n(Command produced no output)"},
		{"echo a \\", 0, 0, true, "a"}, // a trailing backslash does not swallow the wrapper's brace
	} {
		res, err := r.Run(t.Context(), tc.command, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.command, err)
		}
		if res.ExitCode != tc.code || res.Signal != tc.signal || (res.Dir != "") != tc.dir || res.DirChanged {
			t.Errorf("%s: result %+v", tc.command, res)
		}
		if want := "This produced the following result:\n```\n" + tc.history + "\n```"; !strings.HasSuffix(res.HistoryText(tc.command), want) {
			t.Errorf("%s: history %q, want it to end %q", tc.command, res.HistoryText(tc.command), want)
		}
	}
}

var pidLine = regexp.MustCompile(`shell=(\d+) grandchild=(\d+)`)

// TestCancelKillsTheGroup: cancelling kills the shell and its grandchild
// (a sleep 1000 holding the output open). When both ignore SIGTERM they
// die of the SIGKILL that follows the grace, which the test fires.
func TestCancelKillsTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		ignoreTerm    bool
	}{
		{"term", "bash -c 'sleep 1000' & echo shell=$$ grandchild=$!; wait", false},
		{"kill after grace", "trap '' TERM; bash -c 'sleep 1000' & echo shell=$$ grandchild=$!; wait; wait", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, timers := newRunner(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			pids := make(chan []int, 1)
			var seen strings.Builder
			wait := runAsync(t, ctx, r, tc.command, func(c string) {
				seen.WriteString(c)
				if m := pidLine.FindStringSubmatch(seen.String()); m != nil && len(pids) == 0 && ctx.Err() == nil {
					shell, _ := strconv.Atoi(m[1])
					grandchild, _ := strconv.Atoi(m[2])
					pids <- []int{shell, grandchild}
					cancel()
				}
			})
			ps := <-pids
			if tc.ignoreTerm {
				timers.Await(t, testGrace)
				for _, pid := range ps {
					if !proctest.Running(pid) {
						t.Fatalf("process %d died of SIGTERM, though it ignores it", pid)
					}
				}
				timers.Fire(t, testGrace)
			}
			res, err := wait()
			if err != nil {
				t.Fatal(err)
			}
			for _, pid := range ps {
				proctest.Eventually(t, "process "+strconv.Itoa(pid)+" to die", func() bool { return !proctest.Running(pid) })
			}
			if !res.Cancelled {
				t.Errorf("result %+v", res)
			}
			want := "Command was cancelled.\nshell=" + strconv.Itoa(ps[0])
			if h := res.HistoryText("x"); !strings.Contains(h, want) {
				t.Errorf("history %q lacks %q", h, want)
			}
		})
	}
}

// TestBoundedCapture: a command printing 50 MB leaves a Result of
// OutputLimit code units, and no more than a bounded amount in memory.
func TestBoundedCapture(t *testing.T) {
	r, _ := newRunner(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var streamed int64
	res, err := r.Run(t.Context(), "printf '\\n\\n  start'; head -c 52428800 /dev/zero | tr '\\0' a; echo END", func(c string) { streamed += int64(len(c)) })
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if streamed < 50<<20 {
		t.Errorf("streamed %d bytes", streamed)
	}
	if len(res.Output) != OutputLimit || !strings.HasPrefix(res.Output, "startaaa") || !res.Truncated {
		t.Errorf("Output %d bytes starting %q, truncated %v", len(res.Output), res.Output[:min(10, len(res.Output))], res.Truncated)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("the heap grew by %d bytes", grown)
	}
	h := res.HistoryText("x")
	if !strings.HasSuffix(h, strings.Repeat("a", 100)+"\n... (truncated)\n```") {
		t.Errorf("history ends %q", h[len(h)-60:])
	}
	var c capture
	for range 1000 {
		c.write(strings.Repeat("b", 1000))
	}
	if len(c.head) != captureBytes || !c.more {
		t.Errorf("capture kept %d bytes", len(c.head))
	}
}

func TestBinaryOutput(t *testing.T) {
	r, _ := newRunner(t)
	var chunks []string
	res, err := r.Run(t.Context(), `printf 'ab\0cd'; echo more`, func(c string) { chunks = append(chunks, c) })
	if err != nil {
		t.Fatal(err)
	}
	if !res.Binary || res.Output != "" {
		t.Errorf("result %+v", res)
	}
	if len(chunks) == 0 || chunks[len(chunks)-1] != BinaryNotice {
		t.Errorf("streamed %q", chunks)
	}
	if !strings.Contains(res.HistoryText("x"), "```\n[Command produced binary output, which is not shown.]\n```") {
		t.Errorf("history %q", res.HistoryText("x"))
	}
	// A NUL after the first 512 bytes is not binary output, as in gemini-cli.
	res, err = r.Run(t.Context(), `head -c 600 /dev/zero | tr '\0' x; printf '\0'`, nil)
	if err != nil || res.Binary || len(res.Output) != 601 {
		t.Errorf("late NUL: %+v, %v", res, err)
	}
}

func TestDirectoryChange(t *testing.T) {
	r, _ := newRunner(t)
	sub := filepath.Join(r.Dir(), "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), `cd "sub dir" && echo moved`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != sub || !res.DirChanged {
		t.Errorf("result %+v", res)
	}
	want := "```\nWARNING: shell mode is stateless; the directory change to '" + sub + "' will not persist.\n\nmoved\n```"
	if h := res.HistoryText(`cd "sub dir" && echo moved`); !strings.HasSuffix(h, want) {
		t.Errorf("history %q, want it to end %q", h, want)
	}
	// The next command starts in the workspace again.
	if res, _ := r.Run(t.Context(), "pwd", nil); res.Output != r.Dir() || res.DirChanged {
		t.Errorf("stateless: %+v", res)
	}
	// Two spellings of the workspace are no change: through a symlink,
	// and its physical path from inside it.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(r.Dir(), link); err != nil {
		t.Fatal(err)
	}
	lr, err := New(Config{Dir: link, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"true", "cd -P ."} {
		res, err := lr.Run(t.Context(), cmd, nil)
		if err != nil || res.Dir == "" || res.DirChanged {
			t.Errorf("%s through a symlink: %+v, %v", cmd, res, err)
		}
	}
}

// TestPrivateTempDir: the wrapper's file lives in a directory only the
// user can enter, removed when the command is done.
func TestPrivateTempDir(t *testing.T) {
	tmp := t.TempDir()
	dir := t.TempDir()
	r, err := New(Config{Dir: dir, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), "stat -c %a "+tmp+"/agentry-shellmode-*", nil)
	if err != nil || res.Output != "700" {
		t.Errorf("mode %q, %v", res.Output, err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left behind %v", entries)
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "AIza-secret")
	t.Setenv("SHELLMODE_TEST_VISIBLE", "yes")
	r, _ := newRunner(t)
	res, err := r.Run(t.Context(), `echo "${GEMINI_API_KEY:-withheld} $SHELLMODE_TEST_VISIBLE $GEMINI_CLI"`, nil)
	if err != nil || res.Output != "withheld yes 1" {
		t.Errorf("output %q, %v", res.Output, err)
	}
}

func TestNotRun(t *testing.T) {
	r, _ := newRunner(t)
	if _, err := r.Run(t.Context(), " \n\t", nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	marker := filepath.Join(r.Dir(), "ran")
	if _, err := r.Run(ctx, "touch ran", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a cancelled command ran")
	}
	if _, err := New(Config{Dir: filepath.Join(r.Dir(), "missing")}); !errors.Is(err, ErrDir) {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := New(Config{}); !errors.Is(err, ErrDir) {
		t.Errorf("no dir: %v", err)
	}
	bad, err := New(Config{Dir: r.Dir(), Shell: "/nonexistent/bash"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Run(t.Context(), "true", nil); err == nil {
		t.Error("a missing shell ran")
	}
}

// TestHistoryText pins the history item to gemini-cli's
// addShellCommandToGeminiHistory and its callers' status lines.
func TestHistoryText(t *testing.T) {
	const head = "I ran the following shell command:\n```sh\n"
	const mid = "\n```\n\nThis produced the following result:\n```\n"
	const tail = "\n```"
	long := strings.Repeat("x", OutputLimit-1) + "😀" // the emoji straddles the limit
	for _, tc := range []struct {
		name    string
		command string
		res     Result
		want    string
	}{
		{"output", "ls", Result{Output: "a\nb"}, head + "ls" + mid + "a\nb" + tail},
		{"no output", "true", Result{}, head + "true" + mid + "(Command produced no output)" + tail},
		{"exit code", "make", Result{ExitCode: 2, Output: "boom"}, head + "make" + mid + "Command exited with code 2.\nboom" + tail},
		{"signal wins over the exit code", "x", Result{ExitCode: -1, Signal: syscall.SIGKILL}, head + "x" + mid + "Command terminated by signal: 9.\n(Command produced no output)" + tail},
		{"cancel wins over the signal", "x", Result{ExitCode: -1, Signal: syscall.SIGTERM, Cancelled: true, Output: "partial"}, head + "x" + mid + "Command was cancelled.\npartial" + tail},
		{"warning first", "cd /tmp; false", Result{ExitCode: 1, Dir: "/tmp", DirChanged: true},
			head + "cd /tmp; false" + mid + "WARNING: shell mode is stateless; the directory change to '/tmp' will not persist.\n\nCommand exited with code 1.\n(Command produced no output)" + tail},
		{"unchanged dir", "pwd", Result{Dir: "/w", Output: "/w"}, head + "pwd" + mid + "/w" + tail},
		{"binary", "cat a.out", Result{Binary: true}, head + "cat a.out" + mid + "[Command produced binary output, which is not shown.]" + tail},
		{"escapes", "echo `date` \\n", Result{Output: "```\n} \\"},
			head + "echo \\`date\\` \\\\n" + mid + "\\`\\`\\`\n} \\\\" + tail},
		{"at the limit", "x", Result{Output: strings.Repeat("y", OutputLimit)}, head + "x" + mid + strings.Repeat("y", OutputLimit) + tail},
		{"over the limit with the status", "x", Result{ExitCode: 1, Output: strings.Repeat("y", OutputLimit)},
			head + "x" + mid + "Command exited with code 1.\n" + strings.Repeat("y", OutputLimit-len("Command exited with code 1.\n")) + "\n... (truncated)" + tail},
		{"surrogate pair cut", "x", Result{Output: long}, head + "x" + mid + strings.Repeat("x", OutputLimit-1) + "\uFFFD\n... (truncated)" + tail},
		{"more than kept", "x", Result{Output: "short", Truncated: true}, head + "x" + mid + "short\n... (truncated)" + tail},
	} {
		if got := tc.res.HistoryText(tc.command); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, trimMiddle(got), trimMiddle(tc.want))
		}
	}
}

func trimMiddle(s string) string {
	if len(s) < 300 {
		return s
	}
	return s[:150] + "…" + s[len(s)-150:]
}

func TestCaptureTrims(t *testing.T) {
	var c capture
	for _, s := range []string{"\n \n", "\x1b[31m", "\u3000red\x1b[0m  ", "\n"} {
		c.write(s)
	}
	if got, more := c.text(); got != "red" || more {
		t.Errorf("text %q, %v", got, more)
	}
	// Invalid UTF-8 is shown as U+FFFD, as a decoder would.
	c = capture{}
	c.write("a\xffb")
	if got, _ := c.text(); got != "a\uFFFDb" {
		t.Errorf("text %q", got)
	}
}
