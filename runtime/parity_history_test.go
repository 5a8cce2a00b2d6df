package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/tools"
)

// TestParityThoughtsNotResent: the model's thoughts are not sent back; its
// call keeps its own signature, and the session context and the prompt are
// one user turn (thought.stream-json.requests.json).
func TestParityThoughtsNotResent(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Stream(
			&genai.Part{Text: "thinking hard", Thought: true, ThoughtSignature: []byte("sig1")},
			&genai.Part{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"file_path": "three.txt"}}, ThoughtSignature: []byte("sig2")},
		),
		fakegemini.Text("ok"),
	)
	read := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead, Run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{LLMContent: "a\nb\nc\n"}, nil
	}}
	s, _ := contextSession(t, srv, Config{Tools: []tools.Tool{read}})
	if r := last(run(t, s, "go")).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s", r)
	}
	want := geminiCLIRequests(t, "thought.stream-json")
	got := sentContents(srv)
	if len(got) != len(want) {
		t.Fatalf("%d requests, gemini-cli sent %d", len(got), len(want))
	}
	for i := range got {
		if diff := cmp.Diff(shapeOf(want[i]), shapeOf(got[i])); diff != "" {
			t.Errorf("request %d (-gemini-cli +agentry):\n%s", i, diff)
		}
	}
}

// TestThoughtSignatureKept: a signature that came on the thought, with an
// unsigned call, goes back on the call (Gemini requires one there); the
// thought's text does not.
func TestThoughtSignatureKept(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Stream(
			&genai.Part{Text: "thinking", Thought: true, ThoughtSignature: []byte("sig1")},
			&genai.Part{FunctionCall: &genai.FunctionCall{Name: "lookup", Args: map[string]any{"key": "k"}}},
		),
		fakegemini.Text("ok"),
	)
	s, _ := contextSession(t, srv, Config{Tools: []tools.Tool{lookupTool()}})
	run(t, s, "go")
	got := shapeOf(sentContents(srv)[1])
	want := []string{"user: <session_context> | go", "model: call lookup signed sig1", "user: response lookup"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}

// TestInterruptedTurnsGetAPlaceholder: after an abort, the next prompt
// does not follow an unanswered user turn: gemini-cli's
// closeUnansweredToolResponseTurn (geminiChat.ts, 0.61.0) puts a model
// turn "[The previous response was interrupted before it completed.]"
// after function responses nobody answered; agentry does the same, and
// also after a prompt whose answer was cut off (gemini-cli drops such a
// prompt from its history instead).
func TestInterruptedTurnsGetAPlaceholder(t *testing.T) {
	started := make(chan struct{})
	slow := &fakeTool{ToolName: "slow", ToolKind: tools.KindRead, Run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		close(started)
		<-ctx.Done()
		return tools.Result{}, context.Cause(ctx)
	}}
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Call("slow", nil), fakegemini.Text("fine"), fakegemini.Hang("partial"), fakegemini.Text("done"))
	s, _ := contextSession(t, srv, Config{Tools: []tools.Tool{slow}})

	id, err := s.Send(t.Context(), TextMessage("first"))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	s.Abort(nil)
	collectStream(t, s, id)
	run(t, s, "second")
	abortOnFirstDelta(t, s, "third")
	run(t, s, "fourth")

	const placeholder = "model: " + processors.InterruptedResponse
	reqs := sentContents(srv)
	want := []string{
		"user: <session_context> | first",
		"model: call slow",
		"user: response slow",
		placeholder,
		"user: second",
	}
	if diff := cmp.Diff(want, shapeOf(reqs[1])); diff != "" {
		t.Errorf("after the aborted call (-want +got):\n%s", diff)
	}
	want = append(want, "model: fine", "user: third", placeholder, "user: fourth")
	if diff := cmp.Diff(want, shapeOf(reqs[3])); diff != "" {
		t.Errorf("after the aborted answer (-want +got):\n%s", diff)
	}
}
