package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// lookupTool answers "value of <key>".
func lookupTool() *fakeTool {
	return &fakeTool{ToolName: "lookup", ToolKind: tools.KindRead, Run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		return tools.Result{LLMContent: "value of " + fmt.Sprint(c.Args["key"])}, nil
	}}
}

// shape is what a scenario's events say, without ids, times and models.
func shape(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		switch ev.Type {
		case EventMessage:
			out = append(out, fmt.Sprintf("message %s %q", ev.Message.Role, ev.Message.Content[0].Text))
		case EventToolRequest:
			out = append(out, fmt.Sprintf("tool_request %s %v", ev.ToolRequest.Name, ev.ToolRequest.Args))
		case EventToolResponse:
			out = append(out, fmt.Sprintf("tool_response %s %q", ev.ToolResponse.Name, ev.ToolResponse.Content[0].Text))
		case EventAgentEnd:
			out = append(out, "agent_end "+string(ev.AgentEnd.Reason))
		default:
			out = append(out, string(ev.Type))
		}
	}
	return out
}

// TestReplayMatchesLiveScenario runs one scenario — streamed text, a
// function call, a second call, a streamed answer — once through the genai
// client against the fake Gemini server and once from the committed replay
// file testdata/lookup.jsonl: the events agree.
func TestReplayMatchesLiveScenario(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Stream(genai.NewPartFromText("Checking. "), genai.NewPartFromFunctionCall("lookup", map[string]any{"key": "answer"})),
		fakegemini.Call("lookup", map[string]any{"key": "question"}),
		fakegemini.Text("It is ", "42."),
	)
	live := run(t, geminiSession(t, srv, Config{Tools: []tools.Tool{lookupTool()}}), "what is the answer?")

	replay := newTestSession(t, nil, Config{
		Model:    "replay:testdata/lookup.jsonl",
		Resolver: llm.NewResolver(llm.ResolverConfig{}),
		Tools:    []tools.Tool{lookupTool()},
	})
	replayed := run(t, replay, "what is the answer?")
	want := []string{
		"initialize", `message user "what is the answer?"`, "agent_start", "session_update",
		`message agent "Checking. "`, "tool_request lookup map[key:answer]", "usage", `tool_response lookup "value of answer"`,
		"tool_request lookup map[key:question]", "usage", `tool_response lookup "value of question"`,
		`message agent "It is "`, `message agent "42."`, "usage", "agent_end completed",
	}
	if diff := cmp.Diff(want, shape(live)); diff != "" {
		t.Errorf("live events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(shape(live), shape(replayed)); diff != "" {
		t.Errorf("replayed events differ from live ones (-live +replay):\n%s", diff)
	}
}
