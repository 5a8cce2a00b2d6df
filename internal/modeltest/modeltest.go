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
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
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

// FixedHistory is a session store whose every Get returns the same base
// history, so each benchmark iteration's model call sees exactly n events.
// Live returns the copy the last Get or Create handed out, with the
// events appended to it since, as a store's live object holds them.
type FixedHistory struct {
	Base []*session.Event

	mu   sync.Mutex
	live *fixedSession
}

type fixedSession struct {
	id     string
	events []*session.Event
	state  map[string]any
}

func (s *fixedSession) ID() string { return s.id }

func (s *fixedSession) AppName() string { return "agentry" }

func (s *fixedSession) UserID() string { return "user" }

func (s *fixedSession) State() session.State { return mapState(s.state) }

func (s *fixedSession) Events() session.Events { return eventList(s.events) }

func (s *fixedSession) LastUpdateTime() time.Time { return time.Time{} }

type mapState map[string]any

func (m mapState) Get(k string) (any, error) {
	v, ok := m[k]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (m mapState) Set(k string, v any) error { m[k] = v; return nil }

func (m mapState) All() iter.Seq2[string, any] { return maps.All(m) }

func (l eventList) All() iter.Seq[*session.Event] {
	return func(y func(*session.Event) bool) {
		for _, e := range l {
			if !y(e) {
				return
			}
		}
	}
}

func (l eventList) Len() int { return len(l) }

func (l eventList) At(i int) *session.Event { return l[i] }

type eventList []*session.Event

func (f *FixedHistory) get(id string) *fixedSession {
	s := &fixedSession{id: id, events: f.Base[:len(f.Base):len(f.Base)], state: map[string]any{}}
	f.mu.Lock()
	f.live = s
	f.mu.Unlock()
	return s
}

// Live implements runtime.LiveStore: the copy handed out last.
func (f *FixedHistory) Live(_ context.Context, _, _, id string) (session.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live == nil || f.live.id != id {
		return nil, fmt.Errorf("session %s: no live copy", id)
	}
	return f.live, nil
}

// Create implements session.Service.
func (f *FixedHistory) Create(_ context.Context, r *session.CreateRequest) (*session.CreateResponse, error) {
	return &session.CreateResponse{Session: f.get(r.SessionID)}, nil
}

// Get implements session.Service: always the base history.
func (f *FixedHistory) Get(_ context.Context, r *session.GetRequest) (*session.GetResponse, error) {
	return &session.GetResponse{Session: f.get(r.SessionID)}, nil
}

// List implements session.Service.
func (f *FixedHistory) List(context.Context, *session.ListRequest) (*session.ListResponse, error) {
	return &session.ListResponse{}, nil
}

// Delete implements session.Service.
func (f *FixedHistory) Delete(context.Context, *session.DeleteRequest) error { return nil }

// AppendEvent implements session.Service, on the returned copy only.
func (f *FixedHistory) AppendEvent(_ context.Context, s session.Session, ev *session.Event) error {
	if ev.Partial {
		return nil
	}
	fs := s.(*fixedSession)
	fs.events = append(fs.events, ev)
	return nil
}

// History returns n alternating user and model events of a little text.
func History(n int) []*session.Event {
	out := make([]*session.Event, n)
	for i := range out {
		role, author := genai.RoleUser, "user"
		if i%2 == 1 {
			role, author = genai.RoleModel, "agentry"
		}
		ev := &session.Event{ID: fmt.Sprint("h", i), InvocationID: fmt.Sprint("inv", i/2), Author: author, Timestamp: time.Unix(int64(i), 0)}
		ev.LLMResponse = model.LLMResponse{Content: genai.NewContentFromText(fmt.Sprintf("message %d with a little text to carry", i), genai.Role(role))}
		out[i] = ev
	}
	return out
}

// Instant is a backend that answers at once with a two-chunk stream.
type Instant struct {
	Chunks []*genai.GenerateContentResponse
}

// GenerateContent implements llm.Backend.
func (b Instant) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return b.Chunks[0], nil
}

// GenerateContentStream implements llm.Backend.
func (b Instant) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		for _, c := range b.Chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// CountTokens implements llm.Backend.
func (b Instant) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

// Signalling is a backend that answers at once and reports each stream
// call on called.
type Signalling struct {
	Instant
	Called chan struct{}
}

// GenerateContentStream implements llm.Backend.
func (b Signalling) GenerateContentStream(ctx context.Context, m string, c []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	b.Called <- struct{}{}
	return b.Instant.GenerateContentStream(ctx, m, c, cfg)
}

// WordStream is a backend that streams an answer of n one-word text
// chunks, "word0 " to "word<n-1> ", the last with a stop reason and usage,
// as a served session's model does.
type WordStream struct {
	Chunks []*genai.GenerateContentResponse
}

// NewWordStream returns a WordStream of n chunks.
func NewWordStream(n int) WordStream {
	out := make([]*genai.GenerateContentResponse, n)
	for i := range out {
		c := &genai.Candidate{Content: genai.NewContentFromText(fmt.Sprintf("word%d ", i), genai.RoleModel)}
		out[i] = &genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}, ModelVersion: "gemini-2.5-flash"}
		if i == n-1 {
			c.FinishReason = genai.FinishReasonStop
			out[i].UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 100, CandidatesTokenCount: int32(n), TotalTokenCount: 100 + int32(n)}
		}
	}
	return WordStream{Chunks: out}
}

// GenerateContent implements llm.Backend.
func (w WordStream) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return w.Chunks[len(w.Chunks)-1], nil
}

// GenerateContentStream implements llm.Backend.
func (w WordStream) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return Instant(w).GenerateContentStream(context.Background(), "", nil, nil)
}

// CountTokens implements llm.Backend.
func (w WordStream) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}

// Summarize names each content by its first part: its text, fc:<tool> or
// fr:<tool>.
func Summarize(contents []*genai.Content) []string {
	var out []string
	for _, c := range contents {
		p := c.Parts[0]
		switch {
		case p.FunctionCall != nil:
			out = append(out, "fc:"+p.FunctionCall.Name)
		case p.FunctionResponse != nil:
			out = append(out, "fr:"+p.FunctionResponse.Name)
		default:
			out = append(out, p.Text)
		}
	}
	return out
}
