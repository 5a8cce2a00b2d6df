package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// everythingSettings writes user settings that connect
// @modelcontextprotocol/server-everything (AGENTRY_TEST_MCP_EVERYTHING: its
// start command) over stdio as the server "everything". Without the
// variable the test is skipped, except under CI, where it fails.
func everythingSettings(t *testing.T, e *env) {
	t.Helper()
	command := strings.Fields(os.Getenv("AGENTRY_TEST_MCP_EVERYTHING"))
	if len(command) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("AGENTRY_TEST_MCP_EVERYTHING is not set; CI must install @modelcontextprotocol/server-everything")
		}
		t.Skip("AGENTRY_TEST_MCP_EVERYTHING not set")
	}
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": command[0], "args": append(command[1:], "stdio")},
	}})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
}

// TestInteractiveMCPPrompts: server-everything's prompts are slash
// commands of the terminal: Tab completes one, /help lists it marked
// [MCP], "/<prompt> help" lists its arguments, a missing required
// argument is gemini-cli's error, and running one sends its messages —
// an embedded resource's text included — to the model as the user's turn.
func TestInteractiveMCPPrompts(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Sunny in Paris."), fakegemini.Text("Resource read."))
	e := newEnv(t)
	e.geminiEnv(srv)
	everythingSettings(t, e)
	tm := e.interactive("-m", "gemini-2.5-flash", "--trust-workspace")

	tm.Type("/args-pr")
	tm.Keys("Tab")
	tm.WaitFor("/args-prompt completed", func(s string) bool { return strings.Contains(s, "/args-prompt") })
	tm.Type(` --state=IDF Paris`)
	tm.Keys("Enter")
	tm.WaitText("Sunny in Paris.")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	if got := userTextsOf(reqs[0]); !strings.Contains(got, "What's weather in Paris, IDF?") {
		t.Errorf("the model got %q, want the prompt's text", got)
	}

	send(tm, "/help")
	// The list is longer than the screen: read it in the scrollback.
	tm.WaitFor("/help lists the prompts", func(string) bool {
		s := tm.Scrollback()
		return strings.Contains(s, "/args-prompt") && strings.Contains(s, "[MCP] A prompt with two arguments") && strings.Contains(s, "/simple-prompt")
	})
	send(tm, "/args-prompt help")
	tm.WaitText("(required: yes)")
	send(tm, "/resource-prompt Text")
	tm.WaitText("Missing required argument(s): --resourceId")

	send(tm, "/resource-prompt Text 3")
	tm.WaitText("Resource read.")
	proctest.Eventually(t, "the second model request", func() bool { return len(srv.Requests()) == 2 })
	got := userTextsOf(srv.Requests()[1])
	for _, want := range []string{"This prompt includes the Text resource with id: 3", "Resource 3: This is a plaintext resource"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model got %q, want %q in it", got, want)
		}
	}
	tm.Keys("C-d")
	tm.WaitExit()
}

// TestServeMCPPrompts: over A2A, commands/get with a context's id lists
// server-everything's prompts with their arguments, and command/execute
// of one starts a task on the context whose user message is the prompt's
// text, which the model gets, and streams the task to its end.
func TestServeMCPPrompts(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Hello."), fakegemini.Text("Simple done."))
	const token = "e2e-mcp-prompts-token-0123456789"
	e := newEnv(t)
	e.geminiEnv(srv)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	everythingSettings(t, e)
	s := e.serve("--port", "0", "-w", e.ws, "--trust-workspace", "-m", "gemini-2.5-flash")
	defer s.interrupt()
	hc := &http.Client{Transport: headerTransport{token}}

	rpc := func(method string, params any) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		resp, err := hc.Post(s.url+"/", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(s.url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatalf("message/send: %v\n%s", err, s.errText())
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send answered %T", res)
	}

	var list struct {
		Result struct {
			Commands []struct {
				Name      string `json:"name"`
				Arguments []struct {
					Name       string `json:"name"`
					IsRequired bool   `json:"is_required"`
				} `json:"arguments"`
			} `json:"commands"`
		} `json:"result"`
	}
	body := rpc("commands/get", map[string]any{"context_id": task.ContextID})
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("commands/get: %v: %s", err, body)
	}
	args := map[string]string{}
	for _, cmd := range list.Result.Commands {
		var as []string
		for _, a := range cmd.Arguments {
			as = append(as, fmt.Sprintf("%s:%v", a.Name, a.IsRequired))
		}
		args[cmd.Name] = strings.Join(as, ",")
	}
	if a, ok := args["simple-prompt"]; !ok || a != "" {
		t.Errorf("commands/get: simple-prompt %q, %v; got %v", a, ok, args)
	}
	if a := args["args-prompt"]; a != "city:true,state:false" {
		t.Errorf("commands/get: args-prompt arguments %q", a)
	}

	out := rpc("command/execute", map[string]any{"command_path": []string{"simple-prompt"}, "args": "", "context_id": task.ContextID})
	for _, want := range []string{`"STARTED"`, "This is a simple prompt without arguments.", "Simple done.", `"TASK_STATE_COMPLETED"`} {
		if !strings.Contains(out, want) {
			t.Errorf("command/execute's stream lacks %s:\n%s", want, out)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got := userTextsOf(reqs[1]); !strings.Contains(got, "This is a simple prompt without arguments.") {
		t.Errorf("the model got %q", got)
	}
}

// TestAttachMCPPrompts: agentry attach gets the served session's MCP
// prompts through the server's commands: /help lists one, and running it
// starts the session's turn with the prompt's text, shown and answered on
// both terminals.
func TestAttachMCPPrompts(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Simple answer."))
	e := newEnv(t)
	e.geminiEnv(srv)
	everythingSettings(t, e)
	host := e.interactive("-m", "gemini-2.5-flash", "--trust-workspace", "--a2a-port", "0")
	screen := host.Scrollback()
	port := regexp.MustCompile(`over A2A at http://127\.0\.0\.1:(\d+)`).FindStringSubmatch(screen)
	token := regexp.MustCompile(`A2A bearer token \(shown once\): (\S+)`).FindStringSubmatch(screen)
	if port == nil || token == nil {
		t.Fatalf("no port or token on the host terminal:\n%s", screen)
	}
	guest := termtest.Start(t, termtest.Options{
		Command: []string{binary, "attach", "ws://127.0.0.1:" + port[1] + "/ws"},
		Env:     append(e.environ(), "AGENTRY_A2A_TOKEN="+token[1]),
		Dir:     e.ws,
		Cols:    120, Rows: 40,
	})
	guest.WaitText(promptReady)
	send(guest, "/help")
	guest.WaitFor("/help lists the prompts", func(s string) bool { return strings.Contains(s, "/simple-prompt") })

	send(guest, "/simple-prompt")
	guest.WaitFor("the prompt's answer in the attached terminal", func(string) bool {
		sb := guest.Scrollback()
		return strings.Contains(sb, "This is a simple prompt without arguments.") && strings.Contains(sb, "Simple answer.")
	})
	host.WaitFor("the prompt's turn on the host", func(string) bool {
		return strings.Contains(host.Scrollback(), "Simple answer.")
	})
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(userTextsOf(reqs[0]), "This is a simple prompt without arguments.") {
		t.Errorf("model requests %d, the first with %q", len(reqs), userTextsOf(reqs[0]))
	}
}

// TestRunMCPPrompt: agentry run -p with an MCP prompt's command runs the
// prompt, as gemini-cli's non-interactive mode does; a missing required
// argument fails the run with gemini-cli's text.
func TestRunMCPPrompt(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Rainy."))
	e := newEnv(t)
	e.geminiEnv(srv)
	everythingSettings(t, e)
	r := e.run("", "run", "-m", "gemini-2.5-flash", "--trust-workspace", "-p", "/args-prompt Oslo")
	if r.code != 0 || !strings.Contains(r.stdout, "Rainy.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(userTextsOf(reqs[0]), "What's weather in Oslo?") {
		t.Fatalf("model requests %d, the first with %q", len(reqs), userTextsOf(reqs[0]))
	}
	r = e.run("", "run", "-m", "gemini-2.5-flash", "--trust-workspace", "-p", "/resource-prompt Text")
	if r.code != 42 || !strings.Contains(r.stderr, "Missing required argument(s): --resourceId") {
		t.Errorf("a missing argument: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}
