package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// geminiSession is a session whose model calls go through the real genai
// client to a local fake Gemini server.
func geminiSession(t *testing.T, srv *fakegemini.Server, cfg Config) *Session {
	t.Helper()
	cfg.Resolver = llm.NewResolver(llm.ResolverConfig{Gemini: llm.GeminiConfig{APIKey: "test-key", BaseURL: srv.URL, UserAgent: "agentry/test"}})
	if cfg.Instruction == "" {
		cfg.Instruction = "You are a test agent."
	}
	return newTestSession(t, nil, cfg)
}

func TestGeminiTextStreaming(t *testing.T) {
	srv := fakegemini.New(t, fakegemini.WithAPIKey("test-key"))
	srv.Enqueue(fakegemini.Text("Hel", "lo, ", "world"))
	s := geminiSession(t, srv, Config{})
	evs := run(t, s, "greet me")

	var deltas []string
	for _, ev := range find(evs, EventMessage)[1:] {
		deltas = append(deltas, ev.Message.Content[0].Text)
	}
	if diff := cmp.Diff([]string{"Hel", "lo, ", "world"}, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if u := find(evs, EventUsage); len(u) != 1 || u[0].Usage.Model != "gemini-2.5-flash" || u[0].Usage.InputTokens == nil {
		t.Errorf("usage = %+v", u)
	}
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Errorf("reason = %s", r)
	}
	req := srv.Requests()[0]
	if req.Method != fakegemini.MethodStream || req.Model != "gemini-2.5-flash" || req.APIKey != "test-key" {
		t.Errorf("request = %s %s key %q", req.Method, req.Model, req.APIKey)
	}
	if ua := req.Header.Get("x-goog-api-client"); !strings.Contains(ua, "agentry/test") {
		t.Errorf("x-goog-api-client = %q", ua)
	}
	body := req.Body
	if got := body.Contents[len(body.Contents)-1]; got.Role != "user" || got.Parts[0].Text != "greet me" {
		t.Errorf("last content = %+v", got)
	}
	if si := body.SystemInstruction; si == nil || !strings.Contains(si.Parts[0].Text, "You are a test agent.") {
		t.Errorf("system instruction = %+v", si)
	}
}

func TestGeminiToolLoop(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Stream(genai.NewPartFromText("Checking. "), genai.NewPartFromFunctionCall("lookup", map[string]any{"key": "answer"})),
		fakegemini.Call("lookup", map[string]any{"key": "question"}),
		fakegemini.Text("It is ", "42."),
	)
	var keys []string
	lookup := &fakeTool{ToolName: "lookup", ToolKind: tools.KindRead, Run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		keys = append(keys, c.Args["key"].(string))
		return tools.Result{LLMContent: "value of " + c.Args["key"].(string)}, nil
	}}
	s := geminiSession(t, srv, Config{Tools: []tools.Tool{lookup}})
	evs := run(t, s, "what is the answer?")
	if diff := cmp.Diff([]string{"answer", "question"}, keys); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if n := len(find(evs, EventToolResponse)); n != 2 {
		t.Errorf("%d tool responses", n)
	}
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason = %s", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The tool is declared on every request.
	decls := reqs[0].Body.Tools[0].FunctionDeclarations
	if len(decls) != 1 || decls[0].Name != "lookup" {
		t.Errorf("declarations = %+v", decls)
	}
	// The third request holds the whole exchange: user, call, response,
	// call, response — the ids ADK assigned are stripped before sending.
	var roles []string
	var frs []map[string]any
	for _, c := range reqs[2].Body.Contents {
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				roles = append(roles, c.Role+":call")
			case p.FunctionResponse != nil:
				roles = append(roles, c.Role+":response")
				frs = append(frs, p.FunctionResponse.Response)
			case p.Text != "":
				roles = append(roles, c.Role+":text")
			}
		}
	}
	want := []string{"user:text", "model:text", "model:call", "user:response", "model:call", "user:response"}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("history sent (-want +got):\n%s", diff)
	}
	if len(frs) != 2 || frs[1]["output"] != "value of question" {
		t.Errorf("function responses = %v", frs)
	}
}

func TestGeminiAbortMidStream(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Hang("thinking about it"), fakegemini.Text("fresh start"))
	s := geminiSession(t, srv, Config{})
	evs := abortOnFirstDelta(t, s, "long task")
	if r := last(evs).AgentEnd.Reason; r != EndAborted {
		t.Fatalf("reason = %s, events %v", r, types(evs))
	}
	evs = run(t, s, "again")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("after abort: reason %s", r)
	}
}

// TestGeminiAPIError checks a model that stays unavailable: ten attempts,
// gemini-cli's cap, then a fatal error naming the API's status.
func TestGeminiAPIError(t *testing.T) {
	srv := fakegemini.New(t)
	for range 10 {
		srv.Enqueue(fakegemini.Unavailable())
	}
	s := geminiSession(t, srv, Config{})
	evs := run(t, s, "hi")
	errs := find(evs, EventError)
	if len(errs) != 1 || errs[0].Error.Status != "UNAVAILABLE" || errs[0].Meta["exitCode"] != ExitGeneric || !errs[0].Error.Fatal {
		t.Fatalf("error events = %+v", errs)
	}
	if r := last(evs).AgentEnd.Reason; r != EndFailed {
		t.Errorf("reason = %s", r)
	}
	if n := len(srv.Requests()); n != 10 {
		t.Errorf("%d requests, want 10", n)
	}
}
