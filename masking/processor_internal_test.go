package masking

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

func TestMatchCallIDs(t *testing.T) {
	a := map[string]any{"output": "same"}
	session := []sessionResponse{
		{"adk-1", "read", a},
		{"adk-2", "read", map[string]any{"output": "other branch"}}, // left out of the request
		{"adk-3", "read", map[string]any{"output": "same"}},         // equal content, another call
		{"m1", "shell", map[string]any{"output": "model's id"}},
		{"adk-4", "shell", map[string]any{"output": "x"}},
	}
	strip := func(id, name string, resp map[string]any) *genai.FunctionResponse {
		return &genai.FunctionResponse{ID: id, Name: name, Response: resp}
	}
	first := strip("", "read", map[string]any{"output": "same"})
	second := strip("", "read", map[string]any{"output": "same"})
	own := strip("m1", "shell", map[string]any{"output": "model's id"})
	wrongName := strip("", "read", map[string]any{"output": "x"})
	unknown := strip("", "read", map[string]any{"output": "never stored"})
	contents := []*genai.Content{
		userContent(&genai.Part{FunctionResponse: first}),
		userContent(&genai.Part{FunctionResponse: second}, &genai.Part{FunctionResponse: own}),
		userContent(&genai.Part{FunctionResponse: wrongName}, &genai.Part{FunctionResponse: unknown}),
	}
	idOf := matchCallIDs(contents, session)
	for fr, want := range map[*genai.FunctionResponse]string{first: "adk-1", second: "adk-3", own: "m1", wrongName: "", unknown: ""} {
		if got := idOf(fr); got != want {
			t.Errorf("%s %v: id %q, want %q", fr.Name, fr.Response, got, want)
		}
	}
}

// fakeContext is the little of agent.Context the processor uses.
type fakeContext struct {
	agent.Context
	ctx context.Context
}

func (c fakeContext) SessionID() string           { return "s" }
func (c fakeContext) AppName() string             { return "app" }
func (c fakeContext) UserID() string              { return "user" }
func (c fakeContext) Deadline() (time.Time, bool) { return c.ctx.Deadline() }
func (c fakeContext) Done() <-chan struct{}       { return c.ctx.Done() }
func (c fakeContext) Err() error                  { return c.ctx.Err() }
func (c fakeContext) Value(key any) any           { return c.ctx.Value(key) }

// TestProcessorLeavesThePendingRequest: the trailing user content is the
// request being sent, outside gemini-cli's history, so even with the
// latest turn unprotected its fresh responses are neither counted nor
// masked; the rest of the history is, and persisted under the request's
// own call ids.
func TestProcessorLeavesThePendingRequest(t *testing.T) {
	m := newTestMasker(t, Config{ProtectTokens: -1, MinPrunableTokens: -1, DisableProtectLatestTurn: true})
	big := func() map[string]any { return map[string]any{"output": strings.Repeat("x", 4000)} }
	history := []*genai.Content{
		userContent(&genai.Part{Text: "go"}),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "old", Name: "read_file"}}}},
		userContent(frPart("old", "read_file", big())),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "new", Name: "read_file"}}}},
		userContent(frPart("new", "read_file", big())),
	}
	req := &model.LLMRequest{Contents: append([]*genai.Content(nil), history...)}
	var got []Masked
	var sid string
	p := NewProcessor(m, nil, func(_ context.Context, sessionID string, masked []Masked) error {
		sid, got = sessionID, masked
		return nil
	})
	if err := p.ProcessRequest(fakeContext{ctx: t.Context()}, req); err != nil {
		t.Fatal(err)
	}
	if err := p.Settle(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	if sid != "s" || len(got) != 1 || got[0].CallID != "old" {
		t.Fatalf("persisted %q %+v, want the old response only", sid, got)
	}
	if !isMasked(req.Contents[2].Parts[0]) || isMasked(req.Contents[4].Parts[0]) {
		t.Error("the request's contents are not the masked view")
	}
	if isMasked(history[2].Parts[0]) {
		t.Error("the caller's contents were modified")
	}

	// A second turn over the masked view finds nothing to do.
	called := false
	p = NewProcessor(m, nil, func(context.Context, string, []Masked) error { called = true; return nil })
	if err := p.ProcessRequest(fakeContext{ctx: t.Context()}, req); err != nil {
		t.Fatal(err)
	}
	if err := p.Settle(t.Context(), "s"); err != nil || called {
		t.Errorf("second pass: persist called %v (%v)", called, err)
	}
}

// TestProcessorSettles: the request is masked at once; the spill files
// are written, and only then is the pass persisted, in the background;
// Settle waits for it and reports its error once, a cancelled Settle
// leaves the pass pending, and the next request settles the previous
// pass first.
func TestProcessorSettles(t *testing.T) {
	m := newTestMasker(t, Config{ProtectTokens: -1, MinPrunableTokens: -1})
	big := func() map[string]any { return map[string]any{"output": strings.Repeat("x", 4000)} }
	history := []*genai.Content{
		userContent(&genai.Part{Text: "go"}),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "a", Name: "read_file"}}}},
		userContent(frPart("a", "read_file", big())),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "b", Name: "read_file"}}}},
		userContent(frPart("b", "read_file", big())),
		userContent(&genai.Part{Text: "next"}),
	}
	entered, release := make(chan []bool, 1), make(chan struct{})
	failure := errors.New("store is gone")
	p := NewProcessor(m, nil, func(_ context.Context, _ string, masked []Masked) error {
		var present []bool
		for _, mk := range masked {
			_, err := os.Stat(mk.Path)
			present = append(present, err == nil)
		}
		entered <- present
		<-release
		return failure
	})
	req := &model.LLMRequest{Contents: append([]*genai.Content(nil), history...)}
	if err := p.ProcessRequest(fakeContext{ctx: t.Context()}, req); err != nil {
		t.Fatal(err)
	}
	// ProcessRequest has returned while persist is still blocked.
	// The latest turn (b's response) is protected.
	if !isMasked(req.Contents[2].Parts[0]) || isMasked(req.Contents[4].Parts[0]) {
		t.Fatal("the request is not masked when ProcessRequest returns")
	}
	if present := <-entered; len(present) != 1 || !present[0] {
		t.Errorf("spill files present when persisting: %v, want all", present)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Settle(cancelled, "s"); !errors.Is(err, context.Canceled) {
		t.Errorf("Settle with a cancelled context = %v, want context.Canceled", err)
	}
	close(release)
	if err := p.Settle(t.Context(), "s"); !errors.Is(err, failure) {
		t.Errorf("Settle = %v, want the persist error", err)
	}
	if err := p.Settle(t.Context(), "s"); err != nil {
		t.Errorf("second Settle = %v, want nil: the error is reported once", err)
	}

	// The session was never persisted, so the next request masks again;
	// the one after it reports that pass's failure before doing anything.
	entered, release = make(chan []bool, 1), make(chan struct{})
	close(release)
	req = &model.LLMRequest{Contents: append([]*genai.Content(nil), history...)}
	if err := p.ProcessRequest(fakeContext{ctx: t.Context()}, req); err != nil {
		t.Fatal(err)
	}
	<-entered
	req = &model.LLMRequest{Contents: append([]*genai.Content(nil), history...)}
	if err := p.ProcessRequest(fakeContext{ctx: t.Context()}, req); !errors.Is(err, failure) {
		t.Errorf("next ProcessRequest = %v, want the pending pass's error", err)
	}
	if isMasked(req.Contents[2].Parts[0]) {
		t.Error("a request was masked after the previous pass failed")
	}
}
