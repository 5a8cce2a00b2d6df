package compose

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
	"github.com/cenkalti/backoff/v4"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
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

// abortOnFirstDelta sends text and aborts the stream as soon as the agent's
// first message arrives, returning the stream's events.
func abortOnFirstDelta(t *testing.T, s *runtime.Session, text string) []runtime.Event {
	t.Helper()
	id, err := s.Send(t.Context(), runtime.TextMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == runtime.EventMessage && ev.Message.Role == runtime.RoleAgent {
			s.Abort(nil)
		}
	}
	return evs
}

// requireCallClosed checks that request n to b answered the cut-off call id
// with a synthetic "[Operation Cancelled]" error, and nothing else.
func requireCallClosed(t *testing.T, b *script, n int, id string) {
	t.Helper()
	frs := functionResponses(b.Requests()[n])
	if len(frs) != 1 || frs[0].ID != id || !strings.Contains(fmt.Sprint(frs[0].Response["error"]), "[Operation Cancelled]") {
		t.Errorf("function responses in request %d = %+v, want %s answered as cancelled", n, frs, id)
	}
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

// Delays returns the delays slept so far.
func (f *timers) Delays() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.delays)
}

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

// TestAbortRealShellCommand aborts a real shell command whose child keeps
// running: the whole process group is gone afterwards, the call is answered,
// and the next Send on the same session succeeds.
// runningPID waits for a shell command to write its background process's
// pid to file, and checks that the process runs.
func runningPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	proctest.Eventually(t, "the command to start", func() bool {
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	if !proctest.Running(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}
	return pid
}

// summarize names each content by its first part: its text, fc:<tool> or
// fr:<tool>.
func summarize(contents []*genai.Content) []string {
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

// settingsWith returns the default settings with model name and mutations.
func settingsWith(name string, mutate func(*config.Settings)) config.Settings {
	s := config.Defaults()
	s.Model.Name = name
	if mutate != nil {
		mutate(&s)
	}
	return s
}

// silentChain is a user chain pro → flash whose fallbacks never ask.
func silentChain(s *config.Settings) {
	silent := map[string]string{"terminal": "silent", "transient": "silent", "not_found": "silent", "unknown": "silent"}
	s.Model.FallbackChains = [][]config.ModelPolicySettings{{
		{Model: "gemini-2.5-pro", Actions: silent},
		{Model: "gemini-2.5-flash", Actions: silent, LastResort: true},
	}}
}

// childTestSettings is s with a fresh workspace and home and the
// in-memory store, for sessions built from settings.
func childTestSettings(t *testing.T, s config.Settings) config.Settings {
	s.Workspace = t.TempDir()
	s.Home = filepath.Join(t.TempDir(), ".agentry")
	s.Session.Store = config.SessionStoreMemory
	return s
}

func readerDef(maxTurns int) agents.Definition {
	return agents.Definition{Name: "reader", Kind: agents.KindLocal, Description: "Reads files.",
		SystemPrompt: "You read files.", Tools: []string{"read"}, MaxTurns: maxTurns}
}

// fixedHistory is a session store whose every Get returns the same base
// history, so each benchmark iteration's model call sees exactly n events.
type fixedHistory struct{ base []*session.Event }

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

func (f *fixedHistory) get(id string) *fixedSession {
	return &fixedSession{id: id, events: f.base[:len(f.base):len(f.base)], state: map[string]any{}}
}

func (f *fixedHistory) Create(_ context.Context, r *session.CreateRequest) (*session.CreateResponse, error) {
	return &session.CreateResponse{Session: f.get(r.SessionID)}, nil
}

func (f *fixedHistory) Get(_ context.Context, r *session.GetRequest) (*session.GetResponse, error) {
	return &session.GetResponse{Session: f.get(r.SessionID)}, nil
}

func (f *fixedHistory) List(context.Context, *session.ListRequest) (*session.ListResponse, error) {
	return &session.ListResponse{}, nil
}

func (f *fixedHistory) Delete(context.Context, *session.DeleteRequest) error { return nil }

func (f *fixedHistory) AppendEvent(_ context.Context, s session.Session, ev *session.Event) error {
	if ev.Partial {
		return nil
	}
	fs := s.(*fixedSession)
	fs.events = append(fs.events, ev)
	return nil
}

func history(n int) []*session.Event {
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

// instant is a backend that answers at once with a two-chunk stream.
type instant struct {
	chunks []*genai.GenerateContentResponse
}

func (b instant) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return b.chunks[0], nil
}

func (b instant) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		for _, c := range b.chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (b instant) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

// signalling is a backend that answers at once and reports each stream
// call on called.
type signalling struct {
	instant
	called chan struct{}
}

func (b signalling) GenerateContentStream(ctx context.Context, m string, c []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	b.called <- struct{}{}
	return b.instant.GenerateContentStream(ctx, m, c, cfg)
}
