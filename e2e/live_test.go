package e2e

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// normalise drops what legitimately differs between two runs of the same
// conversation: ids, timestamps, durations and the model's name.
func normalise(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	stdout = pgid.ReplaceAllString(stdout, "PGID: N")
	for _, l := range lines(t, stdout) {
		for _, k := range []string{"id", "streamId", "timestamp", "sessionId", "requestId", "workspace", "model"} {
			delete(l, k)
		}
		if m, ok := l["_meta"].(map[string]any); ok {
			delete(m, "durationMs")
		}
		if d, ok := l["data"].(map[string]any); ok {
			for _, k := range []string{"durationMs", "pid", "pgid"} {
				delete(d, k)
			}
		}
		out = append(out, l)
	}
	return out
}

// TestRecordReplayRoundTrip runs a live conversation through the real genai
// client against the fake Gemini server while recording it, then replays the
// recording: both runs produce the same events.
func TestRecordReplayRoundTrip(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Stream(genai.NewPartFromText("Let me look. "), genai.NewPartFromFunctionCall("list_directory", map[string]any{"dir_path": "."})),
		fakegemini.Stream(genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": "echo live"})),
		fakegemini.Text("There is ", "one file."),
	)
	record := filepath.Join(t.TempDir(), "rec.jsonl")
	live := newEnv(t)
	live.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	live.writeFile("notes.txt", "x")
	r := live.run("", "run", "-m", "gemini-2.5-flash", "-y", "--record", record, "-o", "events", "-p", "what is here?")
	if r.code != 0 {
		t.Fatalf("live run: exit %d: %s", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests reached the fake server, want 3", n)
	}
	rec, err := os.ReadFile(record)
	if err != nil || strings.Count(string(rec), "\n") != 3 || !strings.HasPrefix(string(rec), `{"method":"generateContentStream"`) {
		t.Fatalf("recording: %v\n%s", err, rec)
	}

	// Same workspace, fresh home: only the model's source differs.
	live.home = t.TempDir()
	r2 := live.run("", "run", "-m", "replay:"+record, "-y", "-o", "events", "-p", "what is here?")
	if r2.code != 0 {
		t.Fatalf("replay run: exit %d: %s", r2.code, r2.stderr)
	}
	if diff := cmp.Diff(normalise(t, r.stdout), normalise(t, r2.stdout)); diff != "" {
		t.Errorf("replayed events differ from the live run (-live +replay):\n%s", diff)
	}
}

// TestInterruptKillsShellCommand: Ctrl-C during a shell command ends the run
// with exit code 130, and the command's whole process group is gone.
func TestInterruptKillsShellCommand(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "sleep 300 & echo $! > sleep.pid; wait"})},
		[]map[string]any{text("never reached")},
	)
	c := e.cmd("run", "-m", "replay:"+replay, "-y", "-o", "stream-json", "-p", "sleep")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(e.ws, "sleep.pid")
	var pid int
	proctest.Eventually(t, "the shell command to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	if !proctest.Running(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}
	start := time.Now()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.Process.Kill()
		t.Fatalf("agentry did not stop after SIGINT; stderr:\n%s", stderr.String())
	}
	t.Logf("SIGINT to exit: %v", time.Since(start))
	if code := c.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	proctest.Eventually(t, "the shell command's child to be gone", func() bool { return !proctest.Running(pid) })
	ls := lines(t, stdout.String())
	last := ls[len(ls)-1]
	errObj, _ := last["error"].(map[string]any)
	if last["type"] != "result" || last["status"] != "error" || errObj["type"] != "FatalCancellationError" {
		t.Errorf("last line = %v", last)
	}
	res := ofType(ls, "tool_result")
	if len(res) != 1 || res[0]["status"] != "error" {
		t.Errorf("the cut-off call must be answered: %v", res)
	}
}

// TestSpinnerOnATerminal: with stderr on a terminal, a spinner names the
// running tool there; stdout still holds only the answer.
func TestSpinnerOnATerminal(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "sleep 0.5", "description": "nap"})},
		[]map[string]any{text("rested")},
	)
	c := e.cmd("run", "-m", "replay:"+replay, "-y", "-p", "sleep")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var stdout bytes.Buffer
	c.Stdout, c.Stderr = &stdout, tty
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var term bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&term, ptmx); close(copied) }()
	if err := c.Wait(); err != nil {
		t.Fatalf("agentry: %v\nterminal:\n%q", err, term.String())
	}
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	if stdout.String() != "rested\n" {
		t.Errorf("stdout = %q", stdout.String())
	}
	if !strings.Contains(term.String(), "Shell sleep 0.5") || !strings.ContainsAny(term.String(), "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") {
		t.Errorf("no spinner naming the tool on the terminal: %q", term.String())
	}
}

var pgid = regexp.MustCompile(`PGID: \d+`)
