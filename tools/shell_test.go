package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func shellData(t *testing.T, res Result) (exitCode int, stdout, stderr string) {
	t.Helper()
	return res.Data["exitCode"].(int), res.Data["stdout"].(string), res.Data["stderr"].(string)
}

func TestShellResults(t *testing.T) {
	s, root := newTestSet(t, Config{})
	writeFiles(t, root, map[string]string{"sub/here.txt": "x"})

	for _, tc := range []struct {
		name           string
		args           map[string]any
		exit           int
		stdout, stderr string
		content        []string // lines LLMContent must contain
		notContent     []string
		// display is what users see, gemini-cli's returnDisplay (stream-json
		// tool_result output in ../testdata/gemini-cli/tools.stream-json.stdout):
		// the output, else how the command ended; "-" skips the check.
		display string
	}{
		{
			name: "stdout", args: map[string]any{"command": "echo hello"},
			stdout: "hello\n", content: []string{"Output: hello"}, notContent: []string{"Exit Code", "Signal", "Background PIDs"},
			display: "hello",
		},
		{
			name: "stderr and exit code", args: map[string]any{"command": "echo out; echo err >&2; exit 3"},
			// The two pipes interleave in no fixed order.
			exit: 3, stdout: "out\n", stderr: "err\n", content: []string{"out", "err", "Exit Code: 3"},
			display: "-",
		},
		{
			name: "exit code without output", args: map[string]any{"command": "exit 4"},
			exit: 4, content: []string{"Exit Code: 4"}, display: "Command exited with code: 4",
		},
		{
			name: "empty output", args: map[string]any{"command": "true"},
			content: []string{"Output: (empty)"}, display: "",
		},
		{
			name: "dir_path", args: map[string]any{"command": "ls", "dir_path": "sub"},
			stdout: "here.txt\n", display: "here.txt",
		},
		{
			name: "environment", args: map[string]any{"command": `echo "$AGENTRY $GEMINI_CLI $PAGER"`},
			stdout: "1 1 cat\n", display: "1 1 cat",
		},
		{
			name: "ANSI stripped for the model only", args: map[string]any{"command": `printf '\033[31mred\033[0m\n'`},
			stdout: "\x1b[31mred\x1b[0m\n", content: []string{"Output: red\n"}, display: "red",
		},
		{
			name: "heredoc and trailing comment", args: map[string]any{"command": "cat <<EOF\nline\nEOF\n# done"},
			stdout: "line\n", display: "line",
		},
		{
			name: "killed by a signal", args: map[string]any{"command": "kill -9 $$"},
			exit: -1, content: []string{"Signal: 9"}, notContent: []string{"Exit Code"},
			display: "Command terminated by signal: 9",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRun(t, s, "run_shell_command", tc.args)
			if tc.display == "-" {
				if res.Display != "out\nerr" && res.Display != "err\nout" {
					t.Errorf("Display = %q, want the output", res.Display)
				}
			} else if res.Display != tc.display {
				t.Errorf("Display = %q, want %q", res.Display, tc.display)
			}
			exit, stdout, stderr := shellData(t, res)
			if exit != tc.exit || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", exit, stdout, stderr, tc.exit, tc.stdout, tc.stderr)
			}
			if !strings.HasPrefix(res.LLMContent, "<untrusted_context>\nOutput: ") || !strings.HasSuffix(res.LLMContent, "\n</untrusted_context>") {
				t.Errorf("LLMContent is not in gemini-cli's shape: %q", res.LLMContent)
			}
			pid, _ := res.Data["pid"].(int)
			if pid <= 0 || !strings.Contains(res.LLMContent, "Process Group PGID: "+strconv.Itoa(pid)) {
				t.Errorf("pid %v not reported as PGID in %q", res.Data["pid"], res.LLMContent)
			}
			for _, c := range tc.content {
				if !strings.Contains(res.LLMContent, c) {
					t.Errorf("LLMContent %q lacks %q", res.LLMContent, c)
				}
			}
			for _, c := range tc.notContent {
				if strings.Contains(res.LLMContent, c) {
					t.Errorf("LLMContent %q has %q", res.LLMContent, c)
				}
			}
		})
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want ErrorType
	}{
		{"empty command", map[string]any{"command": "  "}, ErrInvalidParams},
		{"no command", map[string]any{}, ErrInvalidParams},
		{"dir outside", map[string]any{"command": "true", "dir_path": "/"}, ErrPathNotInWorkspace},
		{"missing dir", map[string]any{"command": "true", "dir_path": "nope"}, ErrFileNotFound},
		{"file as dir", map[string]any{"command": "true", "dir_path": "sub/here.txt"}, ErrPathIsNotDirectory},
		{"negative delay", map[string]any{"command": "true", "delay_ms": -1.0}, ErrInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "run_shell_command", tc.args)
			wantToolError(t, err, tc.want)
		})
	}
}

func TestShellConfigEnv(t *testing.T) {
	s, _ := newTestSet(t, Config{Env: []string{"PATH=" + os.Getenv("PATH"), "ONLY_THIS=yes"}})
	res := mustRun(t, s, "run_shell_command", map[string]any{"command": `echo "$ONLY_THIS ${HOME:-nohome} $AGENTRY"`})
	if _, stdout, _ := shellData(t, res); stdout != "yes nohome 1\n" {
		t.Errorf("stdout = %q", stdout)
	}
}

func TestShellStartFailure(t *testing.T) {
	s, _ := newTestSet(t, Config{TempDir: filepath.Join(realDir(t), "missing")})
	_, err := run(t, s, "run_shell_command", map[string]any{"command": "true"})
	wantToolError(t, err, ErrShellExecute)
}

// TestShellStreams proves output reaches Call.Output while the command is
// still running: the command waits for a file that the Output callback
// creates only after it has seen the first line.
func TestShellStreams(t *testing.T) {
	s, root := newTestSet(t, Config{})
	tool, _ := s.Lookup("run_shell_command")
	gate := filepath.Join(root, "gate")
	var chunks []string
	call := Call{
		ID:   "stream",
		Args: map[string]any{"command": "echo first; while [ ! -e gate ]; do sleep 0.01; done; echo second >&2"},
		Output: func(c string) {
			chunks = append(chunks, c)
			if strings.Contains(c, "first") {
				if err := os.WriteFile(gate, nil, 0o644); err != nil {
					t.Error(err)
				}
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	res, err := tool.Execute(ctx, call)
	if err != nil {
		t.Fatalf("Execute: %v (the command never saw the gate: output was not streamed)", err)
	}
	if got := strings.Join(chunks, ""); got != "first\nsecond\n" {
		t.Errorf("streamed %q", got)
	}
	if _, stdout, stderr := shellData(t, res); stdout != "first\n" || stderr != "second\n" {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
}

func TestShellTimeout(t *testing.T) {
	s, _ := newTestSet(t, Config{ShellTimeout: 300 * time.Millisecond})
	res, err := run(t, s, "run_shell_command", map[string]any{"command": "echo started; sleep 30"})
	if err != nil {
		t.Fatalf("a timeout is reported to the model, not as an error: %v", err)
	}
	if res.Data["timedOut"] != true || res.Data["signal"] != int(syscall.SIGKILL) {
		t.Errorf("Data = %v", res.Data)
	}
	want := "Command was automatically cancelled because it exceeded the timeout of 0.3 seconds. Below is the output before it was cancelled:\nstarted"
	if !strings.Contains(res.LLMContent, want) {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}
	// gemini-cli's returnDisplay of a timed-out command.
	if d := "Command was automatically cancelled because it exceeded the timeout of 0.3 seconds.\n\nOutput before cancellation:\nstarted"; res.Display != d {
		t.Errorf("Display = %q, want %q", res.Display, d)
	}
}

var pidLine = regexp.MustCompile(`shell=(\d+) grandchild=(\d+)`)

// TestShellCancelKillsProcessGroup cancels a command whose grandchild
// would otherwise outlive it and checks that the whole group is gone.
func TestShellCancelKillsProcessGroup(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	tool, _ := s.Lookup("run_shell_command")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("user pressed escape")
	var mu sync.Mutex
	var shell, grandchild int
	call := Call{
		Args: map[string]any{"command": "bash -c 'sleep 300' & echo shell=$$ grandchild=$!; wait"},
		Output: func(c string) {
			if m := pidLine.FindStringSubmatch(c); m != nil {
				mu.Lock()
				shell, _ = strconv.Atoi(m[1])
				grandchild, _ = strconv.Atoi(m[2])
				mu.Unlock()
				cancel(stop)
			}
		},
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = tool.Execute(ctx, call)
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("Execute did not return within %v of cancellation", hangGuard)
	}
	if !errors.Is(err, stop) || TypeOf(err) != ErrCancelled {
		t.Fatalf("err = %v (type %s), want one wrapping the cancellation cause, of type %s", err, TypeOf(err), ErrCancelled)
	}
	if !strings.Contains(err.Error(), "grandchild=") {
		t.Errorf("partial output missing from %q", err.Error())
	}
	mu.Lock()
	pids := []int{shell, grandchild}
	mu.Unlock()
	if pids[0] == 0 || pids[1] == 0 {
		t.Fatal("never saw the PIDs")
	}
	for _, pid := range pids {
		processGone(t, pid)
	}
}

// TestShellPipeHolder checks that a process that leaves the group while
// holding the output pipes delays Execute only briefly, after normal exit
// and after cancellation.
func TestShellPipeHolder(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	t.Run("exit", func(t *testing.T) {
		res := mustRun(t, s, "run_shell_command", map[string]any{"command": "setsid sleep 300 & echo holder=$!"})
		_, stdout, _ := shellData(t, res)
		killHolder(t, stdout)
	})
	t.Run("cancel", func(t *testing.T) {
		tool, _ := s.Lookup("run_shell_command")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out strings.Builder
		// The holder says "ready" only once it has left the group, so the
		// cancellation cannot kill it first.
		call := Call{
			Args: map[string]any{"command": "setsid bash -c 'echo ready; exec sleep 300' & echo holder=$!; sleep 300"},
			Output: func(c string) {
				out.WriteString(c)
				if strings.Contains(out.String(), "ready") && strings.Contains(out.String(), "holder=") {
					cancel()
				}
			},
		}
		done := make(chan error, 1)
		go func() {
			_, err := tool.Execute(ctx, call)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v", err)
			}
		case <-time.After(hangGuard):
			t.Fatalf("Execute did not return within %v", hangGuard)
		}
		killHolder(t, out.String())
	})
}

func killHolder(t *testing.T, out string) {
	t.Helper()
	m := regexp.MustCompile(`holder=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no holder PID in %q", out)
	}
	pid, _ := strconv.Atoi(m[1])
	// kill(pid, 0) succeeds on a zombie too; the state in /proc tells.
	stat, err := os.ReadFile("/proc/" + m[1] + "/stat")
	if err != nil {
		t.Fatalf("the pipe holder should still run: %v", err)
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) == 0 || f[0] == "Z" {
		t.Fatalf("the pipe holder should still run: stat %q", stat)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	processGone(t, pid)
}

func TestShellBackground(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	res := mustRun(t, s, "run_shell_command", map[string]any{"command": "echo booting; exec sleep 300", "is_background": true, "delay_ms": 1000.0})
	pid, _ := res.Data["pid"].(int)
	if pid <= 0 {
		t.Fatalf("Data = %v", res.Data)
	}
	if !strings.Contains(res.LLMContent, "Command is running in background. PID: "+strconv.Itoa(pid)+". Initial output:\nbooting") {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("background process is not running: %v", err)
	}
	logFile := res.Data["logFile"].(string)

	// A command that fails at once is reported like a foreground one.
	res = mustRun(t, s, "run_shell_command", map[string]any{"command": "echo oops; exit 4", "is_background": true, "delay_ms": 5000.0})
	if !strings.Contains(res.LLMContent, "Output: oops\nExit Code: 4") {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	processGone(t, pid)
	if _, err := os.Stat(logFile); !os.IsNotExist(err) {
		t.Errorf("log file left behind: %v", err)
	}
	_, err := run(t, s, "run_shell_command", map[string]any{"command": "sleep 1", "is_background": true})
	wantToolError(t, err, ErrShellExecute, "closed")
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestShellLeftoverJobs checks that jobs a foreground command leaves
// running are reported and killed by Close.
func TestShellLeftoverJobs(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	res := mustRun(t, s, "run_shell_command", map[string]any{"command": "sleep 300 >/dev/null 2>&1 &"})
	bg, _ := res.Data["backgroundPIDs"].([]int)
	if len(bg) != 1 || !strings.Contains(res.LLMContent, "Background PIDs: "+strconv.Itoa(bg[0])) {
		t.Fatalf("Data = %v, LLMContent = %q", res.Data, res.LLMContent)
	}
	if err := syscall.Kill(bg[0], 0); err != nil {
		t.Fatalf("job is not running: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	processGone(t, bg[0])
}

func TestShellBoundsMemory(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	res := mustRun(t, s, "run_shell_command", map[string]any{"command": "head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END"})
	_, stdout, _ := shellData(t, res)
	if len(stdout) > 2*streamHeadTailBytes+200 {
		t.Errorf("kept %d bytes of stdout", len(stdout))
	}
	if !strings.Contains(stdout, "bytes omitted") || !strings.HasSuffix(stdout, "END\n") || !strings.HasPrefix(stdout, "aaaa") {
		t.Errorf("head/tail not kept: %q ... %q", stdout[:20], stdout[len(stdout)-20:])
	}
}

func TestShellCancelledBeforeStart(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	tool, _ := s.Lookup("run_shell_command")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool.Execute(ctx, Call{Args: map[string]any{"command": "echo never"}})
	if !errors.Is(err, context.Canceled) || TypeOf(err) != ErrCancelled {
		t.Errorf("err = %v", err)
	}
}
