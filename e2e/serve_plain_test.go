package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// a2aJSGRPC checks that the gRPC peers of @a2a-js/sdk are installed beside
// it (.ci/run installs them).
func a2aJSGRPC(t *testing.T, modules string) {
	t.Helper()
	for _, p := range []string{"@grpc/grpc-js", "@bufbuild/protobuf"} {
		if _, err := os.Stat(filepath.Join(modules, p, "package.json")); err != nil {
			t.Fatalf("AGENTRY_TEST_A2A_JS=%s holds no %s, which @a2a-js/sdk's gRPC transport needs: bash .ci/run installs it (%v)", modules, p, err)
		}
	}
}

// jsPlain is what e2e/testdata/a2a-js/plain.mjs prints.
type jsPlain struct {
	SDKVersion string `json:"sdkVersion"`
	Transport  string `json:"transport"`
	Card       struct {
		DevtoolListed   bool `json:"devtoolListed"`
		DevtoolRequired bool `json:"devtoolRequired"`
	} `json:"card"`
	First    []string `json:"first"`
	Question string   `json:"question"`
	BadReply struct {
		Error  *string `json:"error"`
		Reason *string `json:"reason"`
		HTTP   *struct {
			Status      int    `json:"status"`
			ContentType string `json:"contentType"`
		} `json:"http"`
	} `json:"badReply"`
	Second []string `json:"second"`
	Answer string   `json:"answer"`
	Task   struct {
		State     string `json:"state"`
		Artifacts []struct {
			Name string `json:"name"`
			Text string `json:"text"`
		} `json:"artifacts"`
		DevtoolMetadata bool `json:"devtoolMetadata"`
	} `json:"task"`
	ExtensionsSent []string `json:"extensionsSent"`
}

// TestServeA2AJSPlain: the A2A project's JavaScript SDK, used as a
// generic client that never asks for the development-tool extension,
// drives `agentry serve` over JSON-RPC, REST and gRPC: the answer arrives
// as an artifact, the write_file call's approval is a plain-text question
// answered "yes" on the same task, a reply that is none of the documented
// words is an error the SDK raises (with an HTTP error status on the HTTP
// bindings, not a 200 stream), and the task reads back with its answer
// and no development-tool metadata.
func TestServeA2AJSPlain(t *testing.T) {
	modules := a2aJSModules(t)
	a2aJSGRPC(t, modules)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("AGENTRY_TEST_A2A_JS is set but node is not on PATH: %v", err)
	}
	for _, binding := range []string{"JSONRPC", "HTTP+JSON", "GRPC"} {
		t.Run(binding, func(t *testing.T) {
			const token = "e2e-a2a-token-0123456789abcdef"
			e := newEnv(t)
			e.set("AGENTRY_A2A_TOKEN=" + token)
			replay := e.replayFile(
				[]map[string]any{text("I'll write it."), call("write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"})},
				[]map[string]any{text("Done.")},
			)
			srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
			var got jsPlain
			e.runA2AJS(node, modules, token, srv, "plain.mjs", binding, &got)
			t.Logf("@a2a-js/sdk %s over %s", got.SDKVersion, got.Transport)
			if got.Transport != binding+" 1.0" {
				t.Errorf("the SDK chose %q, want %s 1.0", got.Transport, binding)
			}
			if !got.Card.DevtoolListed || got.Card.DevtoolRequired {
				t.Errorf("card: the development-tool extension must be listed and optional: %+v", got.Card)
			}
			if len(got.ExtensionsSent) > 0 {
				t.Errorf("the client sent A2A-Extensions: %v", got.ExtensionsSent)
			}
			wantFirst := `Task(submitted) status:working artifact="I'll write it." status:input-required["Allow write_file? It would create ` + filepath.Join(e.ws, "a.txt") + `:"]`
			if g := strings.Join(got.First, " "); g != wantFirst {
				t.Errorf("first stream:\n got %s\nwant %s", g, wantFirst)
			}
			// An untrusted workspace offers no "always" answer.
			if !strings.Contains(got.Question, "+hi") || !strings.Contains(got.Question, "Reply yes to allow it once, or no to decline.") {
				t.Errorf("question:\n%s", got.Question)
			}
			br := got.BadReply
			if br.Error == nil || br.Reason == nil || *br.Reason != "INVALID_PARAMS" || !strings.Contains(*br.Error, "yes (or y)") {
				t.Errorf("a reply that is none of the words: %+v (want an INVALID_PARAMS error naming the replies)", br)
			}
			if binding != "GRPC" && (br.HTTP == nil || br.HTTP.Status != http.StatusBadRequest || br.HTTP.ContentType != "application/json") {
				t.Errorf("the refused stream's HTTP response: %+v, want 400 application/json", br.HTTP)
			}
			wantSecond := `status:working status:working["Running write_file: Writing to a.txt"] artifact+"\n\nDone." artifact+""! status:completed`
			if g := strings.Join(got.Second, " "); g != wantSecond {
				t.Errorf("second stream:\n got %s\nwant %s", g, wantSecond)
			}
			if got.Answer != "I'll write it.\n\nDone." {
				t.Errorf("answer %q", got.Answer)
			}
			if got.Task.State != "completed" || got.Task.DevtoolMetadata || len(got.Task.Artifacts) != 1 ||
				got.Task.Artifacts[0].Name != "answer" || got.Task.Artifacts[0].Text != got.Answer {
				t.Errorf("task read back: %+v", got.Task)
			}
			if b, err := os.ReadFile(filepath.Join(e.ws, "a.txt")); err != nil || string(b) != "hi\n" {
				t.Errorf("a.txt: %q %v", b, err)
			}
		})
	}
}

// geminiCLI is gemini-cli's executable, from AGENTRY_TEST_GEMINI_CLI
// (.ci/run installs the pinned version); without it the test fails under
// CI and is skipped elsewhere.
func geminiCLI(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTRY_TEST_GEMINI_CLI")
	if bin == "" {
		msg := "AGENTRY_TEST_GEMINI_CLI is not set: install gemini-cli at the version .ci/run pins, " +
			"`npm install --prefix DIR @google/gemini-cli@$(sed -n 's/^gemini_cli_version=//p' .ci/run)`, " +
			"and set AGENTRY_TEST_GEMINI_CLI=DIR/node_modules/.bin/gemini (bash .ci/run does both)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("AGENTRY_TEST_GEMINI_CLI=%s: %v", bin, err)
	}
	return bin
}

// TestServeGeminiCLIRemoteAgent: gemini-cli 0.61.0 calls `agentry serve`
// as a remote subagent (a user-level definition of kind remote with the
// agent card's URL and Bearer auth), as a user would set it up; gemini-cli
// sends no A2A-Extensions header. gemini-cli's model is the fake Gemini
// server, which records its requests: its first answer calls invoke_agent
// for agentry; the answer agentry gave (its replayed model's text) must be
// in the function response of gemini-cli's next model request.
func TestServeGeminiCLIRemoteAgent(t *testing.T) {
	gemini := geminiCLI(t)
	const token = "e2e-a2a-token-0123456789abcdef"
	const answer = "The answer is 42, said agentry."
	const query = "What is the answer? Reply with one sentence."
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	replay := e.replayFile([]map[string]any{text(answer)})
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)

	outs, stdout := askThroughGeminiCLI(t, gemini, srv, token, query)
	out := outs[0]
	if !strings.Contains(out, answer) {
		t.Fatalf("the invoke_agent result gemini-cli sent its model does not hold agentry's answer %q: %s", answer, out)
	}
	if strings.Contains(out, "Error") {
		t.Errorf("the invoke_agent result reports an error: %s", out)
	}
	if !strings.Contains(stdout, "agentry says 42.") {
		t.Errorf("gemini-cli did not print its model's final answer:\n%s", stdout)
	}

	// agentry's side: one plain task (the client activated no extension),
	// the query as its prompt, the answer as its artifact.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url+"/",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"includeArtifacts":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	code, body, _ := httpDo(t, req)
	var list struct {
		Result struct {
			Tasks []struct {
				Status  struct{ State string } `json:"status"`
				History []struct {
					Role  string `json:"role"`
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"history"`
				Artifacts []struct {
					Name  string `json:"name"`
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"artifacts"`
				Metadata map[string]any `json:"metadata"`
			} `json:"tasks"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &list); err != nil || code != http.StatusOK || len(list.Result.Tasks) != 1 {
		t.Fatalf("ListTasks: HTTP %d %s", code, body)
	}
	task := list.Result.Tasks[0]
	if task.Status.State != "TASK_STATE_COMPLETED" || len(task.History) == 0 || len(task.History[0].Parts) == 0 ||
		task.History[0].Parts[0].Text != query || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text != answer {
		t.Errorf("agentry's task: %s", body)
	}
	if _, ok := task.Metadata[devtoolURI]; ok {
		t.Errorf("agentry's task carries development-tool metadata: the client did not activate the extension: %s", body)
	}
}

// TestServeGeminiCLIRefused: with a2a.requireExtension, gemini-cli's
// message is refused; its client reads the refusal (an HTTP 400 with the
// JSON-RPC error, not a 200 stream) and its model is told why, code and
// message.
func TestServeGeminiCLIRefused(t *testing.T) {
	gemini := geminiCLI(t)
	const token = "e2e-a2a-token-0123456789abcdef"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN="+token, "AGENTRY_A2A_REQUIREEXTENSION=true")
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+e.replayFile())
	outs, _ := askThroughGeminiCLI(t, gemini, srv, token, "What is the answer?")
	out := outs[0]
	for _, want := range []string{"400", "-32008", "A2A-Extensions: " + devtoolURI} {
		if !strings.Contains(out, want) {
			t.Errorf("the invoke_agent result gemini-cli sent its model does not say %q: %s", want, out)
		}
	}
}

// askThroughGeminiCLI runs gemini-cli headless with agentry serve (srv)
// defined as its remote agent "agentry" and the fake Gemini server as its
// model, whose answers call invoke_agent with each query in turn and then
// say "agentry says 42.". It returns, for each call, the invoke_agent
// function response gemini-cli sent in its next model request, as JSON,
// and gemini-cli's stdout.
func askThroughGeminiCLI(t *testing.T, gemini string, srv *serveProc, token string, queries ...string) ([]string, string) {
	t.Helper()
	fake := fakegemini.New(t)
	// The calls carry a thought signature, as Gemini's do: without one
	// gemini-cli sends back a placeholder that is not base64, which the
	// fake's genai decoding refuses.
	for _, q := range queries {
		fake.Enqueue(fakegemini.Parts(&genai.Part{
			FunctionCall:     &genai.FunctionCall{Name: "invoke_agent", Args: map[string]any{"agent_name": "agentry", "prompt": q}},
			ThoughtSignature: []byte("signature"),
		}))
	}
	fake.Enqueue(fakegemini.Text("agentry says 42."))

	// gemini-cli's own home: the remote agent's definition, its token
	// named by an environment variable, as gemini-cli's remote-agent
	// documentation shows.
	home := t.TempDir()
	def := "---\nkind: remote\nname: agentry\ndescription: A coding agent served by agentry serve.\n" +
		"agent_card_url: " + srv.url + "/.well-known/agent-card.json\n" +
		"auth:\n  type: http\n  scheme: Bearer\n  token: $AGENTRY_TEST_A2A_TOKEN\n---\n"
	if err := os.MkdirAll(filepath.Join(home, ".gemini", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "agents", "agentry.md"), []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	// The Gemini API with a key (gemini-cli then honours
	// GOOGLE_GEMINI_BASE_URL), and nothing sent anywhere but loopback: no
	// usage statistics, no update check.
	settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false},` +
		` "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	// -m: a named model, so gemini-cli's router asks no classifier.
	// --yolo: gemini-cli asks before calling a remote agent. The workspace
	// is trusted by the environment, as in headless use.
	c := exec.CommandContext(ctx, gemini, "-m", "gemini-2.5-flash", "--yolo", "-o", "stream-json", "-p", "Ask agentry what the answer is.")
	c.Dir = t.TempDir()
	c.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + fake.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true", "AGENTRY_TEST_A2A_TOKEN=" + token,
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("gemini-cli: %v\nstdout:\n%s\nstderr:\n%s\nserver stderr:\n%s", err, stdout.String(), stderr.String(), srv.errText())
	}
	var calls []fakegemini.Request
	for _, r := range fake.Requests() {
		if r.Method == fakegemini.MethodStream || r.Method == fakegemini.MethodGenerate {
			calls = append(calls, r)
		}
	}
	if len(calls) != len(queries)+1 {
		t.Fatalf("gemini-cli made %d model calls, want %d\nstdout:\n%s\nstderr:\n%s", len(calls), len(queries)+1, stdout.String(), stderr.String())
	}
	var outs []string
	for i, c := range calls[1:] {
		resp := functionResponse(c.Body, "invoke_agent")
		if resp == nil {
			t.Fatalf("gemini-cli's model request %d has no invoke_agent function response: %s", i+2, c.Raw)
		}
		out, err := json.Marshal(resp.Response)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(out))
	}
	return outs, stdout.String()
}

// TestServeGeminiCLIApproval: agentry's write_file call needs approval;
// gemini-cli's model reads the plain question as the remote agent's
// result, answers "yes" through a second invoke_agent call (gemini-cli
// continues the waiting task), and reads agentry's answer after the file
// is written.
func TestServeGeminiCLIApproval(t *testing.T) {
	gemini := geminiCLI(t)
	const token = "e2e-a2a-token-0123456789abcdef"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	replay := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"})},
		[]map[string]any{text("Wrote a.txt.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	outs, _ := askThroughGeminiCLI(t, gemini, srv, token, "Write hi to a.txt.", "yes")
	for _, want := range []string{"Allow write_file? It would create " + filepath.Join(e.ws, "a.txt"), "+hi", "Reply yes to allow it once"} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("the first invoke_agent result does not ask %q: %s", want, outs[0])
		}
	}
	if !strings.Contains(outs[1], "Wrote a.txt.") || strings.Contains(outs[1], "Error") {
		t.Errorf("the second invoke_agent result does not hold agentry's answer: %s", outs[1])
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "a.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("a.txt: %q %v", b, err)
	}
}

// functionResponse finds the last function response named name in a
// request's contents.
func functionResponse(body *fakegemini.RequestBody, name string) *genai.FunctionResponse {
	if body == nil {
		return nil
	}
	var found *genai.FunctionResponse
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
				found = p.FunctionResponse
			}
		}
	}
	return found
}

// TestRemoteAgentIsAgentryServe: one agentry calls another as a remote
// subagent (`agentry run` with a remote definition pointing at `agentry
// serve`); the served card declares bidiStreaming, so the call runs over
// SendLiveMessage with the development-tool extension, and the served
// agent's answer text is the tool's result (a plain A2A client's would
// be its answer artifact).
func TestRemoteAgentIsAgentryServe(t *testing.T) {
	const token = "e2e-a2a-token-0123456789abcdef"
	served := newEnv(t)
	served.set("AGENTRY_A2A_TOKEN=" + token)
	srv := served.serve("--port", "0", "-w", served.ws, "-m", "replay:"+served.replayFile([]map[string]any{text("main.go looks fine.")}))

	e := newEnv(t)
	e.set("AGENTRY_TEST_SERVE_TOKEN=" + token)
	e.writeFile(filepath.Join(e.home, ".agentry", "agents", "helper.md"), "---\nkind: remote\nname: helper\ndescription: Another agentry.\n"+
		"agent_card_url: "+srv.url+"/.well-known/agent-card.json\nauth:\n  type: http\n  scheme: Bearer\n  token: $AGENTRY_TEST_SERVE_TOKEN\n---\n")
	replay := e.replayFile(
		[]map[string]any{call("invoke_agent", map[string]any{"agent_name": "helper", "prompt": "Review main.go"})},
		[]map[string]any{text("The helper approves.")},
	)
	r := e.run("", "run", "--yolo", "-m", "replay:"+replay, "-o", "stream-json", "-p", "get main.go reviewed")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nserver stderr:\n%s", r.code, r.stdout, r.stderr, srv.errText())
	}
	var outputs []string
	for _, l := range ofType(lines(t, r.stdout), "tool_result") {
		out, _ := l["output"].(string)
		outputs = append(outputs, fmt.Sprint(l["status"], ": ", out))
	}
	want := "success: Subagent 'helper' finished.\nTermination Reason: GOAL\nResult:\nmain.go looks fine."
	if len(outputs) != 1 || outputs[0] != want {
		t.Errorf("tool results %q, want [%q]\nstderr:\n%s", outputs, want, r.stderr)
	}
}

// TestServePlainApprovalsSetting: a2a.plainApprovals is read from the
// settings: "policy" denies, without asking, what the approval policy does
// not allow in a task of a client without the extension; a value that is
// neither ask nor policy stops the server with a message naming the key.
func TestServePlainApprovalsSetting(t *testing.T) {
	const token = "e2e-a2a-token-0123456789abcdef"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN="+token, "AGENTRY_A2A_PLAINAPPROVALS=sometimes")
	r := e.run("", "serve", "--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
	if r.code == 0 || !strings.Contains(r.stderr, `a2a.plainApprovals is "sometimes"`) {
		t.Fatalf("a2a.plainApprovals=sometimes: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	e = newEnv(t)
	e.set("AGENTRY_A2A_TOKEN="+token, "AGENTRY_A2A_PLAINAPPROVALS=policy")
	replay := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"})},
		[]map[string]any{text("I was not allowed to write it.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url+"/", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"write a.txt"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	code, body, _ := httpDo(t, req)
	var res struct {
		Result struct {
			Task struct {
				Status  struct{ State string } `json:"status"`
				History []struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"history"`
				Artifacts []struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &res); err != nil || code != http.StatusOK {
		t.Fatalf("SendMessage: HTTP %d %s", code, body)
	}
	task := res.Result.Task
	var notes []string
	for _, m := range task.History {
		for _, p := range m.Parts {
			notes = append(notes, p.Text)
		}
	}
	const denied = "write_file was not run: Tool execution for \"WriteFile\" requires user confirmation, which is not supported in non-interactive mode.\n"
	const hint = "Warning: write_file was refused: To allow it, run with --allowed-tools write_file or --approval-mode auto_edit, or add \"write_file\" to tools.allowed in settings.json.\n"
	if task.Status.State != "TASK_STATE_COMPLETED" || !slices.Contains(notes, denied) || !slices.Contains(notes, hint) ||
		len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text != "I was not allowed to write it." {
		t.Errorf("task: %s", body)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "a.txt")); err == nil {
		t.Error("a.txt was written")
	}
}
