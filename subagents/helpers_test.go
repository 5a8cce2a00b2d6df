package subagents

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
	"github.com/cenkalti/backoff/v4"
	"google.golang.org/genai"
)

// turn is one scripted model response.
type turn struct {
	chunks []*genai.GenerateContentResponse
	// block, when set, makes the stream yield its chunks and then wait for
	// the request's context to end.
	block bool
	err   error
}

// script is a Backend that answers stream calls with scripted turns and
// records each request.
type script struct {
	mu       sync.Mutex
	turns    []turn
	requests []recordedRequest
	started  chan int // receives the request number when a stream starts
}

type recordedRequest struct {
	model    string
	contents []*genai.Content
	config   *genai.GenerateContentConfig
}

func newScript(turns ...turn) *script {
	return &script{turns: turns, started: make(chan int, 100)}
}

func (s *script) add(turns ...turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

func (s *script) Requests() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedRequest(nil), s.requests...)
}

// GenerateContent answers a unary call (a utility call) with the next
// turn, its chunks' parts joined into one response.
func (s *script) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	var out *genai.GenerateContentResponse
	for r, err := range s.GenerateContentStream(ctx, model, contents, cfg) {
		if err != nil {
			return nil, err
		}
		if out == nil {
			c := *r.Candidates[0].Content
			c.Parts = append([]*genai.Part(nil), c.Parts...)
			out = &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &c}}}
		} else {
			out.Candidates[0].Content.Parts = append(out.Candidates[0].Content.Parts, r.Candidates[0].Content.Parts...)
		}
		out.Candidates[0].FinishReason = r.Candidates[0].FinishReason
		out.UsageMetadata = r.UsageMetadata
	}
	if out == nil {
		return nil, fmt.Errorf("script: the turn for a unary call has no chunks")
	}
	return out, nil
}

func (s *script) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, recordedRequest{model, contents, cfg})
		if len(s.turns) == 0 {
			s.mu.Unlock()
			yield(nil, fmt.Errorf("script: no turn left for request %d", n))
			return
		}
		tn := s.turns[0]
		s.turns = s.turns[1:]
		s.mu.Unlock()
		s.started <- n
		if tn.err != nil {
			yield(nil, tn.err)
			return
		}
		for _, c := range tn.chunks {
			if !yield(c, nil) {
				return
			}
		}
		if tn.block {
			<-ctx.Done()
			yield(nil, context.Cause(ctx))
		}
	}
}

func (s *script) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 1}, nil
}

// fixedResolver resolves every model name to one backend.
type fixedResolver struct {
	b   llm.Backend
	err error
}

func (r fixedResolver) Resolve(_ context.Context, name string) (llm.Target, error) {
	if r.err != nil {
		return llm.Target{}, r.err
	}
	ref, err := llm.ParseModel(name)
	if err != nil {
		return llm.Target{}, err
	}
	return llm.Target{Ref: ref, Backend: r.b}, nil
}

func textTurn(chunks ...string) turn {
	var t turn
	for i, c := range chunks {
		r := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: c}}}}}}
		if i == len(chunks)-1 {
			r.Candidates[0].FinishReason = genai.FinishReasonStop
			r.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 3, TotalTokenCount: 13}
		}
		t.chunks = append(t.chunks, r)
	}
	return t
}

func callTurn(text string, calls ...*genai.FunctionCall) turn {
	var parts []*genai.Part
	if text != "" {
		parts = append(parts, &genai.Part{Text: text})
	}
	for _, c := range calls {
		parts = append(parts, &genai.Part{FunctionCall: c})
	}
	return turn{chunks: []*genai.GenerateContentResponse{{
		Candidates:    []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: genai.FinishReasonStop}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 5, CandidatesTokenCount: 2, TotalTokenCount: 7},
	}}}
}

func fc(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

// fakeTool is a configurable tool.
type fakeTool struct {
	name string
	kind tools.Kind
	run  func(ctx context.Context, c tools.Call) (tools.Result, error)

	mu    sync.Mutex
	calls int
}

func (f *fakeTool) Name() string        { return f.name }
func (f *fakeTool) DisplayName() string { return "Fake " + f.name }
func (f *fakeTool) Kind() tools.Kind    { return f.kind }
func (f *fakeTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: f.name, Description: "fake tool " + f.name}
}
func (f *fakeTool) Describe(args map[string]any) string { return fmt.Sprint(args) }
func (f *fakeTool) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.run != nil {
		return f.run(ctx, c)
	}
	return tools.Result{LLMContent: "ok " + f.name}, nil
}

func (f *fakeTool) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// newTestSession builds a session over b with the given tools.
func newTestSession(t *testing.T, b llm.Backend, cfg runtime.Config) *runtime.Session {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	if cfg.Resolver == nil {
		cfg.Resolver = fixedResolver{b: b}
	}
	if cfg.Retry.NewTimer == nil {
		// No test sleeps through a retry delay.
		cfg.Retry.NewTimer = (&timers{}).New
	}
	s, err := runtime.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run sends text and collects the stream's events, failing on a hang.
func run(t *testing.T, s *runtime.Session, text string) []runtime.Event {
	t.Helper()
	id, err := s.Send(t.Context(), runtime.TextMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	return collectStream(t, s, id)
}

func collectStream(t *testing.T, s *runtime.Session, id string) []runtime.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var evs []runtime.Event
	for ev, err := range s.Stream(ctx, id) {
		if err != nil {
			t.Fatalf("stream %s: %v (events so far: %v)", id, err, types(evs))
		}
		evs = append(evs, ev)
	}
	return evs
}

func types(evs []runtime.Event) []runtime.EventType {
	out := make([]runtime.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func last(evs []runtime.Event) runtime.Event { return evs[len(evs)-1] }

func find(evs []runtime.Event, typ runtime.EventType) []runtime.Event {
	var out []runtime.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// functionResponses returns the function responses in a request's contents.
func functionResponses(r recordedRequest) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, c := range r.contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out = append(out, p.FunctionResponse)
			}
		}
	}
	return out
}

// timers makes backoff timers that fire at once and records the delays
// they were started with; block makes them never fire, for abort tests.
type timers struct {
	mu      sync.Mutex
	delays  []time.Duration
	block   bool
	started chan time.Duration
}

func (f *timers) New() backoff.Timer { return &fakeTimer{f: f} }

type fakeTimer struct {
	f *timers
	c chan time.Time
}

func (t *fakeTimer) Start(d time.Duration) {
	t.f.mu.Lock()
	if d > 0 { // an immediate retry is not a sleep
		t.f.delays = append(t.f.delays, d)
	}
	block, started := t.f.block, t.f.started
	t.f.mu.Unlock()
	t.c = make(chan time.Time, 1)
	if started != nil {
		started <- d
	}
	if !block {
		t.c <- time.Time{}
	}
}

func (t *fakeTimer) Stop() {}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// lastUserText is the text of the last user content of a request.
func lastUserText(r recordedRequest) string {
	for i := len(r.contents) - 1; i >= 0; i-- {
		c := r.contents[i]
		if c.Role == genai.RoleUser {
			var b strings.Builder
			for _, p := range c.Parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

// toolOutput returns the function response the model got for call id.
func toolOutput(t *testing.T, b *script, id string) map[string]any {
	t.Helper()
	for _, r := range b.Requests() {
		for _, fr := range functionResponses(r) {
			if fr.ID == id {
				return fr.Response
			}
		}
	}
	t.Fatalf("no function response for %s", id)
	return nil
}

type approverFunc func(context.Context, runtime.ApprovalRequest) (runtime.Outcome, error)

func (f approverFunc) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	return f(ctx, r)
}
