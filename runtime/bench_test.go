package runtime

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"testing"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	settingsroutes "github.com/agentry-dev/agentry/compose/routes"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/tools"
)

// fixedHistory is a session store whose every Get returns the same base
// history, so each benchmark iteration's model call sees exactly n events.
type fixedHistory struct{ base []*session.Event }

type fixedSession struct {
	id     string
	events []*session.Event
	state  map[string]any
}

func (s *fixedSession) ID() string                { return s.id }
func (s *fixedSession) AppName() string           { return "agentry" }
func (s *fixedSession) UserID() string            { return "user" }
func (s *fixedSession) State() session.State      { return mapState(s.state) }
func (s *fixedSession) Events() session.Events    { return eventList(s.events) }
func (s *fixedSession) LastUpdateTime() time.Time { return time.Time{} }

type mapState map[string]any

func (m mapState) Get(k string) (any, error) {
	v, ok := m[k]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}
func (m mapState) Set(k string, v any) error   { m[k] = v; return nil }
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
func (l eventList) Len() int                { return len(l) }
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

// BenchmarkModelCall measures everything agentry adds around one model call
// — the Send, ADK's request building over the history, the processor chain,
// the dispatcher's aggregation, the translation to protocol events and their
// fan-out to a Stream consumer — with a backend that answers instantly.
//
// routing=on adds the routing processor and the dispatcher's availability
// selection, so the two sub-benchmarks compare what routing costs.
func BenchmarkModelCall(b *testing.B) {
	for _, n := range []int{20, 500} {
		for _, routed := range []bool{false, true} {
			b.Run(fmt.Sprintf("history=%d/routing=%s", n, onOff(routed)), func(b *testing.B) {
				benchModelCall(b, n, routed)
			})
		}
	}
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

func benchModelCall(b *testing.B, n int, routed bool) {
	content := processors.NewContent(processors.ContentConfig{Roots: []string{b.TempDir()}, OS: "linux"})
	chain := processors.NewChain(content)
	var routes *routing.Service
	if routed {
		settings := config.Defaults()
		settings.Model.Name = "gemini-2.5-flash"
		var err error
		if routes, err = settingsroutes.New(&settings, nil, nil, slog.New(slog.DiscardHandler)); err != nil {
			b.Fatal(err)
		}
		chain = processors.NewChain(content, routing.NewProcessor(routes))
	}
	s, err := New(context.Background(), Config{
		Model:          "gemini-2.5-flash",
		Resolver:       fixedResolver{B: instant{chunks: textTurn("Hello ", "there, ", "friend.").Chunks}},
		Instruction:    SystemPrompt,
		Chain:          chain,
		Routing:        routes,
		SessionService: &fixedHistory{base: history(n)},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	msg := TextMessage("next question")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		id, err := s.Send(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		var end *AgentEnd
		for ev, err := range s.Stream(ctx, id) {
			if err != nil {
				b.Fatal(err)
			}
			end = ev.AgentEnd
		}
		if end == nil || end.Reason != EndCompleted {
			b.Fatalf("stream ended %+v", end)
		}
	}
}

// BenchmarkAbort measures the time from Abort to the stream's agent_end,
// with the invocation blocked in a model stream and in a shell command whose
// process group must be killed.
func BenchmarkAbort(b *testing.B) {
	b.Run("model-stream", func(b *testing.B) {
		sc := newScript()
		s, err := New(context.Background(), Config{Model: "gemini-2.5-flash", Resolver: fixedResolver{B: sc}})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchAbort(b, s, func() { sc.Add(turn{Chunks: textTurn("working").Chunks[:1], Block: true}) }, sc.Started)
	})
	b.Run("shell-command", func(b *testing.B) {
		ws := b.TempDir()
		set, err := tools.NewSet(tools.Config{Workspace: mustWorkspace(b, ws), TempDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer set.Close()
		sc := newScript()
		started := make(chan int, 1)
		s, err := New(context.Background(), Config{Model: "gemini-2.5-flash", Resolver: fixedResolver{B: sc}, Tools: set.Tools(), Policy: mustPolicy(b, "yolo")})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		unsub := s.Subscribe(func(ev Event) {
			if ev.Type == EventToolUpdate {
				select {
				case started <- 0:
				default:
				}
			}
		})
		defer unsub()
		benchAbort(b, s, func() {
			sc.Add(callTurn("", fc("", "run_shell_command", map[string]any{"command": "echo started; sleep 30"})))
			// Drain the script's own start signal; the shell's first
			// output says the command is running.
			go func() { <-sc.Started }()
		}, started)
	})
}

func benchAbort(b *testing.B, s *Session, arm func(), started <-chan int) {
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		arm()
		id, err := s.Send(ctx, TextMessage("go"))
		if err != nil {
			b.Fatal(err)
		}
		<-started
		t0 := time.Now()
		s.Abort(nil)
		var end *AgentEnd
		for ev, err := range s.Stream(ctx, id) {
			if err != nil {
				b.Fatal(err)
			}
			end = ev.AgentEnd
		}
		total += time.Since(t0)
		if end == nil || end.Reason != EndAborted {
			b.Fatalf("ended %+v", end)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-abort-to-end")
}

func mustWorkspace(b *testing.B, dir string) *tools.Workspace {
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	return ws
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

// wordStream is a backend that streams an answer of n one-word text
// chunks, "word0 " to "word<n-1> ", the last with a stop reason and usage,
// as a served session's model does.
type wordStream struct {
	chunks []*genai.GenerateContentResponse
}

func newWordStream(n int) wordStream {
	out := make([]*genai.GenerateContentResponse, n)
	for i := range out {
		c := &genai.Candidate{Content: genai.NewContentFromText(fmt.Sprintf("word%d ", i), genai.RoleModel)}
		out[i] = &genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}, ModelVersion: "gemini-2.5-flash"}
		if i == n-1 {
			c.FinishReason = genai.FinishReasonStop
			out[i].UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 100, CandidatesTokenCount: int32(n), TotalTokenCount: 100 + int32(n)}
		}
	}
	return wordStream{chunks: out}
}

func (w wordStream) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return w.chunks[len(w.chunks)-1], nil
}

func (w wordStream) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return instant(w).GenerateContentStream(context.Background(), "", nil, nil)
}

func (w wordStream) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}
