package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// a2aToken is agentry serve's token in these tests.
const a2aToken = "e2e-a2a-token-0123456789abcdef"

// a2aAgent starts agentry serve on a fake Gemini server scripted with
// steps; the environment holds the server's token in AGENTRY_A2A_TOKEN,
// as `agentry a2a` reads it.
func a2aAgent(t *testing.T, steps ...fakegemini.Step) (*env, *serveProc, *fakegemini.Server) {
	t.Helper()
	fake := fakegemini.New(t)
	fake.Enqueue(steps...)
	e := newEnv(t)
	e.geminiEnv(fake)
	e.set("AGENTRY_A2A_TOKEN=" + a2aToken)
	return e, e.serve("--port", "0", "-w", e.ws, "-m", "gemini-2.5-flash"), fake
}

// shellTurn is a model turn that says what it does and asks to run cmd
// (a command that needs approval), then the answer after the call.
func shellTurn(cmd, answer string) []fakegemini.Step {
	return []fakegemini.Step{
		fakegemini.Stream(genai.NewPartFromText("I'll run it."), genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": cmd})),
		fakegemini.Text(answer),
	}
}

// a2a runs `agentry a2a args…` with stdin, in a session of its own: it
// has no controlling terminal to ask on, wherever the tests run.
func (e *env) a2a(stdin string, args ...string) result {
	e.t.Helper()
	c := e.cmd(append([]string{"a2a"}, args...)...)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return e.runCmd(c, stdin, append([]string{"a2a"}, args...))
}

var summaryRE = regexp.MustCompile(`(?m)^Task completed \(context (\S+), task (\S+)\)\.$`)

// wantStderr checks that stderr holds each of want.
func wantStderr(t *testing.T, r result, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// proof is the content of the workspace's proof.txt, "" when absent.
func (e *env) proof() string {
	b, _ := os.ReadFile(filepath.Join(e.ws, "proof.txt"))
	return string(b)
}

// TestA2ACommand: `agentry a2a` against agentry serve over each binding:
// the prompt streams, the shell command's confirmation is asked and
// answered "y" from stdin, the command runs, the answer is printed and
// the exit code is 0; --context continues the conversation.
func TestA2ACommand(t *testing.T) {
	for _, transport := range []string{"jsonrpc", "rest", "grpc", "ws", "live", "auto"} {
		t.Run(transport, func(t *testing.T) {
			e, srv, fake := a2aAgent(t, append(shellTurn("echo a2a-ok > proof.txt", "Done."), fakegemini.Text("Again."))...)
			r := e.a2a("y\n", "--transport", transport, srv.url, "run", "the", "command")
			if r.code != 0 || r.stdout != "I'll run it.\nDone.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s\nserver:\n%s", r.code, r.stdout, r.stderr, srv.errText())
			}
			host := strings.TrimPrefix(srv.url, "http://")
			via := map[string]string{
				"jsonrpc": "JSONRPC 1.0 at " + srv.url + "/", "rest": "HTTP+JSON 1.0 at " + srv.url + "/rest",
				"grpc": "GRPC 1.0 at dns:///" + host, "ws": "WEBSOCKET at ws://" + host + "/ws",
				// The card declares bidiStreaming: auto takes the live stream.
				"live": "SendLiveMessage on GRPC 1.0 at dns:///" + host, "auto": "SendLiveMessage on GRPC 1.0 at dns:///" + host,
			}[transport]
			wantStderr(t, r, "agentry over "+via+"\n")
			wantStderr(t, r,
				"? run_shell_command needs your approval\n  command: echo a2a-ok > proof.txt\n  in: "+e.ws+"\n",
				// The served workspace is untrusted: no "always" answer
				// is offered there.
				"  y) Allow once\n", "  n) Reject",
				"Answer [y/n]: y\n",
				"▸ run_shell_command: echo a2a-ok > proof.txt\n✓ run_shell_command\n")
			if e.proof() != "a2a-ok\n" {
				t.Errorf("proof.txt = %q: the confirmed command did not run", e.proof())
			}
			m := summaryRE.FindStringSubmatch(r.stderr)
			if m == nil {
				t.Fatalf("no summary naming the context and task:\n%s", r.stderr)
			}
			wantStderr(t, r, "Continue the conversation with: agentry a2a --context "+m[1]+" "+srv.url+" PROMPT")

			r = e.a2a("", "--transport", transport, "--context", m[1], srv.url, "and again")
			if r.code != 0 || r.stdout != "Again.\n" {
				t.Fatalf("--context: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := fake.Requests()
			last, _ := json.Marshal(reqs[len(reqs)-1].Body.Contents)
			if !strings.Contains(string(last), "run the command") || !strings.Contains(string(last), "and again") {
				t.Errorf("the --context prompt did not continue the conversation; the model saw %s", last)
			}
		})
	}
}

// TestA2ACommandDeclines: --approve no declines the call without asking;
// with nothing to read an answer from (the prompt from the arguments and
// stdin empty, or the prompt on stdin and no terminal) the call is
// declined with a warning saying how to answer.
func TestA2ACommandDeclines(t *testing.T) {
	steps := append(shellTurn("echo a2a-ok > proof.txt", "Not run."), shellTurn("echo a2a-ok > proof.txt", "Not run either.")...)
	e, srv, _ := a2aAgent(t, append(steps, shellTurn("echo a2a-ok > proof.txt", "Still not run.")...)...)
	r := e.a2a("", "--approve", "no", srv.url, "run the command")
	if r.code != 0 || r.stdout != "I'll run it.\nNot run.\n" {
		t.Fatalf("--approve no: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantStderr(t, r, "✗ run_shell_command declined (--approve no): echo a2a-ok > proof.txt\n", "✗ run_shell_command cancelled\n")
	if strings.Contains(r.stderr, "needs your approval") {
		t.Errorf("--approve no asked:\n%s", r.stderr)
	}
	r = e.a2a("", srv.url, "run the command")
	if r.code != 0 || r.stdout != "I'll run it.\nNot run either.\n" {
		t.Fatalf("no answer: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantStderr(t, r, "? run_shell_command needs your approval",
		"Warning: run_shell_command was declined: nothing to read an answer from: the input ended. Answer confirmations with --approve yes|no",
		"✗ run_shell_command cancelled\n")
	// The prompt on stdin: answers would come from the terminal, and
	// there is none.
	r = e.a2a("run the command\n", srv.url)
	if r.code != 0 || r.stdout != "I'll run it.\nStill not run.\n" {
		t.Fatalf("prompt on stdin: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantStderr(t, r, "Warning: run_shell_command was declined: nothing to read an answer from: stdin held the prompt and there is no terminal")
	if e.proof() != "" {
		t.Errorf("a declined command ran: proof.txt = %q", e.proof())
	}
}

// TestA2ACommandJSON: -o json writes every event as a line of A2A 1.0
// JSON, a StreamResponse, and nothing else to stdout.
func TestA2ACommandJSON(t *testing.T) {
	for _, transport := range []string{"rest", "grpc", "live"} {
		t.Run(transport, func(t *testing.T) {
			e, srv, _ := a2aAgent(t, shellTurn("echo a2a-ok > proof.txt", "Done.")...)
			r := e.a2a("", "-o", "json", "--approve", "yes", "--transport", transport, srv.url, "run the command")
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			var kinds []string
			for i, l := range lines {
				var members map[string]json.RawMessage
				var sr a2a.StreamResponse
				if err := json.Unmarshal([]byte(l), &members); err != nil || len(members) != 1 {
					t.Fatalf("line %d is not a one-member JSON object: %v\n%s", i+1, err, l)
				}
				if err := json.Unmarshal([]byte(l), &sr); err != nil {
					t.Fatalf("line %d is not an A2A 1.0 stream response: %v\n%s", i+1, err, l)
				}
				for k := range members {
					kinds = append(kinds, k)
				}
				if u, ok := sr.Event.(*a2a.TaskStatusUpdateEvent); ok && i == len(lines)-1 && u.Status.State != a2a.TaskStateCompleted {
					t.Errorf("the last line is not the completed state: %s", l)
				}
			}
			if kinds[0] != "task" || kinds[len(kinds)-1] != "statusUpdate" {
				t.Errorf("lines of %v: want a task first and a status update last", kinds)
			}
			for _, w := range []string{`"kind":"TOOL_CALL_UPDATE"`, `"status":"PENDING"`, `"status":"SUCCEEDED"`, `"text":"Done."`} {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %s", w)
				}
			}
			if r.stderr != "✓ run_shell_command allowed once (--approve yes): echo a2a-ok > proof.txt\n" {
				t.Errorf("stderr %q", r.stderr)
			}
			if e.proof() != "a2a-ok\n" {
				t.Errorf("proof.txt = %q", e.proof())
			}
		})
	}
}

// TestA2ACommandPlain: with --plain the client does not ask for the
// development-tool extension; the approval comes as agentry's plain
// question, answered "yes" from stdin, and the answer as an artifact.
func TestA2ACommandPlain(t *testing.T) {
	for _, transport := range []string{"jsonrpc", "rest", "grpc", "live"} {
		t.Run(transport, func(t *testing.T) {
			e, srv, _ := a2aAgent(t, shellTurn("echo a2a-ok > proof.txt", "Done.")...)
			r := e.a2a("yes\n", "--plain", "--transport", transport, srv.url, "run the command")
			if r.code != 0 || r.stdout != "I'll run it.\n\nDone.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			wantStderr(t, r, "? Allow run_shell_command? It would run this command in "+e.ws+":\n\n    echo a2a-ok > proof.txt\n",
				"\n> yes\n", "Running run_shell_command: echo a2a-ok > proof.txt\n")
			if strings.Contains(r.stderr, "needs your approval") {
				t.Errorf("a plain client was asked the extension's confirmation:\n%s", r.stderr)
			}
			if e.proof() != "a2a-ok\n" {
				t.Errorf("proof.txt = %q", e.proof())
			}
		})
	}
}

// parkTask starts a task with the development-tool extension through a
// blocking JSON-RPC SendMessage, which returns once the task waits for
// the shell command's confirmation; it returns the task's id.
func parkTask(t *testing.T, srv *serveProc) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"run the command"}]}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a2aToken)
	req.Header.Set("A2A-Extensions", devtoolURI)
	code, b, _ := httpDo(t, req)
	var resp struct {
		Result struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || code != http.StatusOK || resp.Result.Task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("SendMessage: HTTP %d %v\n%s", code, err, b)
	}
	return resp.Result.Task.ID
}

// TestA2ACommandReattach: --task without a prompt follows a task another
// client started: a task waiting for a confirmation is asked about, the
// answer sent, and the task followed to its end; a finished task is
// reported as it ended.
func TestA2ACommandReattach(t *testing.T) {
	for _, transport := range []string{"jsonrpc", "rest", "grpc", "ws", "live", "auto"} {
		t.Run(transport, func(t *testing.T) {
			e, srv, _ := a2aAgent(t, shellTurn("echo a2a-ok > proof.txt", "Done.")...)
			task := parkTask(t, srv)
			r := e.a2a("y\n", "--transport", transport, "--task", task, srv.url)
			if r.code != 0 || r.stdout != "Done.\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s\nserver:\n%s", r.code, r.stdout, r.stderr, srv.errText())
			}
			wantStderr(t, r, "? run_shell_command needs your approval\n  command: echo a2a-ok > proof.txt\n", "Answer [y/n]: y\n",
				"✓ run_shell_command\n", ", task "+task+").")
			if e.proof() != "a2a-ok\n" {
				t.Errorf("proof.txt = %q", e.proof())
			}
			r = e.a2a("", "--transport", transport, "--task", task, srv.url)
			if r.code != 0 || !strings.Contains(r.stderr, "Task completed") || strings.Contains(r.stderr, "approval") {
				t.Errorf("following the finished task: exit %d; stderr:\n%s", r.code, r.stderr)
			}
		})
	}
}

// TestA2ACommandPlainWaiting: a plain question nothing can answer leaves
// the task waiting (exit code 3) and says how to answer it; --task then
// follows it, and the question is answered from stdin.
func TestA2ACommandPlainWaiting(t *testing.T) {
	e, srv, _ := a2aAgent(t, shellTurn("echo a2a-ok > proof.txt", "Done.")...)
	r := e.a2a("", "--plain", srv.url, "run the command")
	m := regexp.MustCompile(`(?m)^Answer it with: agentry a2a --task (\S+) ` + regexp.QuoteMeta(srv.url) + ` ANSWER$`).FindStringSubmatch(r.stderr)
	if r.code != 3 || m == nil {
		t.Fatalf("exit %d (want 3), no line saying how to answer; stderr:\n%s", r.code, r.stderr)
	}
	wantStderr(t, r, "Warning: the agent's question was not answered", "The task waits for input (context ")
	r = e.a2a("yes\n", "--plain", "--task", m[1], srv.url)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "Done.\n") {
		t.Fatalf("--task: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantStderr(t, r, "? Allow run_shell_command?", "> yes\n")
	if e.proof() != "a2a-ok\n" {
		t.Errorf("proof.txt = %q", e.proof())
	}
}

// TestA2ACommandBadInput: what cannot work is refused with a message that
// names the problem and the exit code says which kind: 2 for the command
// line, 1 for the agent.
func TestA2ACommandBadInput(t *testing.T) {
	e, srv, _ := a2aAgent(t)
	// An agent whose card offers JSON-RPC only, and a server with no card.
	card, err := json.Marshal(&a2a.AgentCard{Name: "jsonrpc-only", Version: "1", Description: "d",
		SupportedInterfaces: []*a2a.AgentInterface{{URL: "http://127.0.0.1:1/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}},
		Capabilities:        a2a.AgentCapabilities{Streaming: true}})
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(card)
	}))
	defer other.Close()

	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		env   string
		code  int
		want  string
	}{
		{"unknown transport", "", []string{"--transport", "smoke", srv.url, "hi"}, "", 2,
			`Error: agentry a2a: unknown transport "smoke": use one of auto, jsonrpc, rest, grpc, live, ws`},
		{"unknown flag", "", []string{"--colour", srv.url, "hi"}, "", 2, "Error: unknown flag: --colour"},
		{"no URL", "", nil, "", 2, "give the agent's URL"},
		{"no prompt", "", []string{srv.url}, "", 2, "no prompt: stdin was empty"},
		{"no agent card", "", []string{other.URL + "/agent", "hi"}, "", 1,
			"no agent card at " + other.URL + "/agent/.well-known/agent-card.json (HTTP 404 Not Found)"},
		{"no such binding", "", []string{"--transport", "grpc", other.URL, "hi"}, "", 1,
			"the agent card at " + other.URL + "/.well-known/agent-card.json has no GRPC interface (it lists JSONRPC 1.0): use --transport jsonrpc"},
		{"wrong token, JSON-RPC", "", []string{"--transport", "jsonrpc", srv.url, "hi"}, "AGENTRY_A2A_TOKEN=not-the-token", 1,
			"refused with HTTP 401 Unauthorized: invalid bearer token; is --token (or AGENTRY_A2A_TOKEN) the agent's bearer token?"},
		{"wrong token, gRPC", "", []string{"--transport", "grpc", "--token", "not-the-token", srv.url, "hi"}, "", 1,
			"invalid bearer token; is --token (or AGENTRY_A2A_TOKEN) the agent's bearer token?"},
		{"wrong token, ws", "", []string{"--transport", "ws", srv.url, "hi"}, "AGENTRY_A2A_TOKEN=not-the-token", 1,
			"the server refused the connection: 401 Unauthorized: invalid bearer token; is --token (or AGENTRY_A2A_TOKEN) the agent's bearer token?"},
		{"wrong token, live", "", []string{srv.url, "hi"}, "AGENTRY_A2A_TOKEN=not-the-token", 1,
			"SendLiveMessage on GRPC 1.0 at dns:///"},
		{"wrong token, live's reason", "", []string{srv.url, "hi"}, "AGENTRY_A2A_TOKEN=not-the-token", 1,
			"invalid bearer token; is --token (or AGENTRY_A2A_TOKEN) the agent's bearer token?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ce := *e
			if c.env != "" {
				ce.vars = append(append([]string(nil), e.vars...), c.env)
			}
			ce.t = t
			r := ce.a2a(c.stdin, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
				t.Errorf("exit %d (want %d), stdout %q, stderr:\n%s\nwant it to contain %q", r.code, c.code, r.stdout, r.stderr, c.want)
			}
			if strings.Contains(r.stderr, a2aToken) {
				t.Errorf("the token was printed:\n%s", r.stderr)
			}
		})
	}
}

// TestReadmeA2AExample runs the README's agentry a2a example, with
// `agentry` on PATH, from a directory holding examples/ as a clone does.
// Two changes only: the server listens on a free port (--port 0) instead
// of the default one, which the machine may be using, and the client is
// given that port; the two confirmations are answered "y" on stdin.
func TestReadmeA2AExample(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	copyExample(t, "quickstart.jsonl", filepath.Join(dir, "examples", "quickstart.jsonl"))
	cmds := strings.Split(strings.TrimSpace(readmeBlock(t, "<!-- a2a example -->")), "\n")
	if len(cmds) != 4 || !strings.HasPrefix(cmds[0], "export AGENTRY_A2A_TOKEN=") || !strings.HasPrefix(cmds[1], "agentry serve ") ||
		!strings.HasSuffix(cmds[1], " &") || !strings.HasPrefix(cmds[2], "agentry a2a http://127.0.0.1:41242 ") || cmds[3] != "kill %1" {
		t.Fatalf("the example is not the export, serve &, a2a, kill this test runs:\n%s", strings.Join(cmds, "\n"))
	}
	path := "PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH")
	sh := func(script string) *exec.Cmd {
		c := exec.Command("sh", "-ec", script)
		c.Dir = dir
		c.Env = []string{"HOME=" + e.home, path}
		return c
	}
	out, err := sh(cmds[0] + `; printf %s "$AGENTRY_A2A_TOKEN"`).Output()
	if err != nil || len(out) != 64 {
		t.Fatalf("the token line: %v %q", err, out)
	}
	token := "AGENTRY_A2A_TOKEN=" + string(out)

	serve := sh("exec " + strings.Replace(strings.TrimSuffix(cmds[1], " &"), "agentry serve ", "agentry serve --port 0 ", 1))
	serve.Env = append(serve.Env, token)
	srv := e.startServe(serve)

	a2aCmd := sh(strings.Replace(cmds[2], "http://127.0.0.1:41242", srv.url, 1))
	a2aCmd.Env = append(a2aCmd.Env, token)
	a2aCmd.Stdin = strings.NewReader("y\ny\n")
	a2aCmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr strings.Builder
	a2aCmd.Stdout, a2aCmd.Stderr = &stdout, &stderr
	if err := a2aCmd.Run(); err != nil {
		t.Fatalf("the example's agentry a2a: %v\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", err, stdout.String(), stderr.String(), srv.errText())
	}
	if !strings.HasSuffix(stdout.String(), "Done. I created `hello.sh`, read it back, and ran it: it prints \"hello from agentry\".\n") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	for _, w := range []string{"? write_file needs your approval", "? run_shell_command needs your approval\n  command: sh hello.sh", "Task completed"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	if strings.Contains(srv.errText(), "too weak") {
		t.Errorf("the example's token is one the server warns about:\n%s", srv.errText())
	}
}

// syncBuffer is a buffer one goroutine writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestA2ACommandInterrupt: SIGINT while the task runs a command cancels
// the task on the server and exits with 130.
func TestA2ACommandInterrupt(t *testing.T) {
	for _, transport := range []string{"jsonrpc", "ws", "live"} {
		t.Run(transport, func(t *testing.T) {
			e, srv, _ := a2aAgent(t, fakegemini.Call("run_shell_command", map[string]any{"command": "sleep 60"}))
			c := e.cmd("a2a", "--transport", transport, "--approve", "yes", srv.url, "wait a minute")
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			var stderr syncBuffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			deadline := time.After(30 * time.Second)
			for !strings.Contains(stderr.String(), "▸ run_shell_command: sleep 60") {
				select {
				case <-done:
					t.Fatalf("agentry a2a ended before the command ran; stderr:\n%s", stderr.String())
				case <-deadline:
					c.Process.Kill()
					t.Fatalf("the command never ran; stderr:\n%s", stderr.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			if err := c.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				c.Process.Kill()
				t.Fatalf("agentry a2a did not exit after SIGINT; stderr:\n%s", stderr.String())
			}
			if code := c.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d after SIGINT, want 130; stderr:\n%s", code, stderr.String())
			}
			m := regexp.MustCompile(`(?m)^Task canceled \(context \S+, task (\S+)\)\.$`).FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("no summary saying the task was canceled:\n%s", stderr.String())
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + m[1] + `"}}`
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url+"/", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a2aToken)
			if _, b, _ := httpDo(t, req); !strings.Contains(string(b), `"state":"TASK_STATE_CANCELED"`) {
				t.Errorf("the task on the server: %s", b)
			}
		})
	}
}

// TestA2ALiveReplayTwoConfirmations: agentry serve on a replayed model
// whose task asks two confirmations; `agentry a2a --transport live`
// answers both on its live stream, the task completes and the server
// half-closes (exit 0). (That the answers travel on the one stream is
// protocol's TestLive… and TestServeLiveStream's to show.)
func TestA2ALiveReplayTwoConfirmations(t *testing.T) {
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + a2aToken)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "echo one > proof.txt"})},
		[]map[string]any{call("run_shell_command", map[string]any{"command": "echo two >> proof.txt"})},
		[]map[string]any{text("Both ran.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	r := e.a2a("y\ny\n", "--transport", "live", srv.url, "run both")
	if r.code != 0 || r.stdout != "Both ran.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s\nserver:\n%s", r.code, r.stdout, r.stderr, srv.errText())
	}
	wantStderr(t, r, "SendLiveMessage", "command: echo one > proof.txt", "command: echo two >> proof.txt", "Task completed")
	if n := strings.Count(r.stderr, "Answer [y/n]: y"); n != 2 {
		t.Errorf("%d answers asked, want 2:\n%s", n, r.stderr)
	}
	if got := e.proof(); got != "one\ntwo\n" {
		t.Errorf("proof.txt = %q, want both commands' lines", got)
	}
}
