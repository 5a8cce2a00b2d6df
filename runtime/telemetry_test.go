package runtime

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/hooks"

	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
)

// TestTelemetrySpans: a run with a tool call exports, span by span, the
// run, each model call (named after the model, with its tokens) and the
// tool call, parented under the run.
func TestTelemetrySpans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	tel, err := telemetry.New(t.Context(), telemetry.Config{Exporter: telemetry.ExporterFile, File: path})
	if err != nil {
		t.Fatal(err)
	}
	b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("done"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Telemetry: tel})
	if end := last(run(t, s, "go")); end.AgentEnd.Reason != EndCompleted {
		t.Fatalf("run ended %+v", end.AgentEnd)
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type span struct {
		Type, Name, SpanID, ParentSpanID, Status string
		Attributes                               map[string]any
	}
	var spans []span
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var sp struct {
			Type       string         `json:"type"`
			Name       string         `json:"name"`
			SpanID     string         `json:"span_id"`
			Parent     string         `json:"parent_span_id"`
			Attributes map[string]any `json:"attributes"`
			Status     struct {
				Code string `json:"code"`
			} `json:"status"`
		}
		if err := json.Unmarshal(sc.Bytes(), &sp); err != nil {
			t.Fatal(err)
		}
		if sp.Type == "span" {
			spans = append(spans, span{sp.Type, sp.Name, sp.SpanID, sp.Parent, sp.Status.Code, sp.Attributes})
		}
	}
	byName := map[string][]span{}
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
	}
	runs, chats, tool := byName["invoke_agent"], byName["chat gemini-2.5-flash"], byName["execute_tool read"]
	if len(runs) != 1 || len(chats) != 2 || len(tool) != 1 {
		t.Fatalf("spans %v, want one invoke_agent, two chat gemini-2.5-flash, one execute_tool read", spans)
	}
	root := runs[0].SpanID
	for _, sp := range append(chats, tool...) {
		if sp.ParentSpanID != root {
			t.Errorf("span %s has parent %s, want the run %s", sp.Name, sp.ParentSpanID, root)
		}
		if sp.Status == "Error" {
			t.Errorf("span %s has status Error", sp.Name)
		}
	}
	if got := chats[0].Attributes["gen_ai.usage.input_tokens"]; got != float64(5) {
		t.Errorf("first model call input tokens %v, want 5", got)
	}
	if got := tool[0].Attributes["agentry.tool.status"]; got != "success" {
		t.Errorf("tool status %v, want success", got)
	}
	if got := runs[0].Attributes["agentry.session.id"]; got != s.ID() {
		t.Errorf("run session id %v, want %s", got, s.ID())
	}
}

// TestTelemetryRetriesAndHooks: a retried model call carries a retry
// event, and each hook event gets its own span under the run.
func TestTelemetryRetriesAndHooks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	tel, err := telemetry.New(t.Context(), telemetry.Config{Exporter: telemetry.ExporterFile, File: path})
	if err != nil {
		t.Fatal(err)
	}
	b := newScript(turn{Err: genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "overloaded"}},
		callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("done"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeTool: cmd(hookScript(t, "exit 0"))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Telemetry: tel, Hooks: r})
	run(t, s, "go")
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var retried, hook bool
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var sp struct {
			Type   string `json:"type"`
			Name   string `json:"name"`
			Events []struct {
				Name string `json:"name"`
			} `json:"events"`
		}
		if err := json.Unmarshal([]byte(line), &sp); err != nil {
			t.Fatal(err)
		}
		for _, ev := range sp.Events {
			retried = retried || sp.Name == "chat gemini-2.5-flash" && ev.Name == "retry"
		}
		hook = hook || sp.Name == "hook BeforeTool"
	}
	if !retried || !hook {
		t.Errorf("retry event on the chat span: %v, hook span: %v\n%s", retried, hook, data)
	}
}
