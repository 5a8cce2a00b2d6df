// Package modeltest is a scripted model backend for tests: it answers
// calls with scripted turns and records each request; with it a resolver,
// a configurable tool and retry timers that never sleep. It knows nothing
// of sessions, so runtime's own tests use it as well as the packages that
// build sessions (through package sessiontest).
package modeltest

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// Turn is one scripted model response.
type Turn struct {
	Chunks []*genai.GenerateContentResponse
	// Block, when set, makes the stream yield its chunks and then wait for
	// the request's context to end.
	Block bool
	// Err, when set, fails the call instead.
	Err error
}

// Script is an llm.Backend that answers calls with scripted turns, in
// order, and records each request.
type Script struct {
	// Started receives the request number when a stream starts (buffered
	// for 100).
	Started chan int

	mu       sync.Mutex
	turns    []Turn
	requests []Request
}

// Request is a request a Script received.
type Request struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
}

// NewScript returns a Script answering with turns.
func NewScript(turns ...Turn) *Script {
	return &Script{turns: turns, Started: make(chan int, 100)}
}

// Add appends turns to the script.
func (s *Script) Add(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Requests returns the requests received so far.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// GenerateContent answers a unary call (a utility call) with the next
// turn, its chunks' parts joined into one response.
func (s *Script) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
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

// GenerateContentStream answers with the next turn's chunks.
func (s *Script) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, Request{model, contents, cfg})
		if len(s.turns) == 0 {
			s.mu.Unlock()
			yield(nil, fmt.Errorf("script: no turn left for request %d", n))
			return
		}
		tn := s.turns[0]
		s.turns = s.turns[1:]
		s.mu.Unlock()
		s.Started <- n
		if tn.Err != nil {
			yield(nil, tn.Err)
			return
		}
		for _, c := range tn.Chunks {
			if !yield(c, nil) {
				return
			}
		}
		if tn.Block {
			<-ctx.Done()
			yield(nil, context.Cause(ctx))
		}
	}
}

// CountTokens counts one token.
func (s *Script) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 1}, nil
}

// FixedResolver resolves every model name to one backend, or fails with
// Err.
type FixedResolver struct {
	B   llm.Backend
	Err error
}

// Resolve implements runtime.ModelResolver.
func (r FixedResolver) Resolve(_ context.Context, name string) (llm.Target, error) {
	if r.Err != nil {
		return llm.Target{}, r.Err
	}
	ref, err := llm.ParseModel(name)
	if err != nil {
		return llm.Target{}, err
	}
	return llm.Target{Ref: ref, Backend: r.B}, nil
}

// TextTurn is a turn streaming chunks of text, the last one finishing it.
func TextTurn(chunks ...string) Turn {
	var t Turn
	for i, c := range chunks {
		r := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: c}}}}}}
		if i == len(chunks)-1 {
			r.Candidates[0].FinishReason = genai.FinishReasonStop
			r.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 3, TotalTokenCount: 13}
		}
		t.Chunks = append(t.Chunks, r)
	}
	return t
}

// CallTurn is a turn with optional text and function calls.
func CallTurn(text string, calls ...*genai.FunctionCall) Turn {
	var parts []*genai.Part
	if text != "" {
		parts = append(parts, &genai.Part{Text: text})
	}
	for _, c := range calls {
		parts = append(parts, &genai.Part{FunctionCall: c})
	}
	return Turn{Chunks: []*genai.GenerateContentResponse{{
		Candidates:    []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: genai.FinishReasonStop}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 5, CandidatesTokenCount: 2, TotalTokenCount: 7},
	}}}
}

// FC is a function call.
func FC(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

// FakeTool is a configurable tool: it answers "ok <name>", or runs Run.
type FakeTool struct {
	ToolName string
	ToolKind tools.Kind
	Run      func(ctx context.Context, c tools.Call) (tools.Result, error)

	mu    sync.Mutex
	calls int
}

// Name implements tools.Tool.
func (f *FakeTool) Name() string { return f.ToolName }

// DisplayName implements tools.Tool.
func (f *FakeTool) DisplayName() string { return "Fake " + f.ToolName }

// Kind implements tools.Tool.
func (f *FakeTool) Kind() tools.Kind { return f.ToolKind }

// Declaration implements tools.Tool.
func (f *FakeTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: f.ToolName, Description: "fake tool " + f.ToolName}
}

// Describe implements tools.Tool.
func (f *FakeTool) Describe(args map[string]any) string { return fmt.Sprint(args) }

// Execute implements tools.Tool.
func (f *FakeTool) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.Run != nil {
		return f.Run(ctx, c)
	}
	return tools.Result{LLMContent: "ok " + f.ToolName}, nil
}

// Calls returns how many times the tool ran.
func (f *FakeTool) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Timers makes backoff timers that fire at once and records the delays
// they were started with; Block makes them never fire, for abort tests,
// and Started, when set, receives every delay as a timer starts.
type Timers struct {
	Block   bool
	Started chan time.Duration

	mu     sync.Mutex
	delays []time.Duration
}

// New returns a timer, for runtime.RetryConfig.NewTimer.
func (f *Timers) New() backoff.Timer { return &fakeTimer{f: f} }

// Delays returns the delays slept so far.
func (f *Timers) Delays() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.delays)
}

type fakeTimer struct {
	f *Timers
	c chan time.Time
}

func (t *fakeTimer) Start(d time.Duration) {
	t.f.mu.Lock()
	if d > 0 { // an immediate retry is not a sleep
		t.f.delays = append(t.f.delays, d)
	}
	block, started := t.f.Block, t.f.Started
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

// FunctionResponses returns the function responses in a request's
// contents.
func FunctionResponses(r Request) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out = append(out, p.FunctionResponse)
			}
		}
	}
	return out
}
