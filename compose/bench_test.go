package compose

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/subagents"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// BenchmarkResume1000 measures resuming a stored 1,000-event session — 250
// rounds of a prompt, a tool call, its 2 KB output and an answer — in the
// SQLite store, up to its first model request: opening the store, building
// the session from settings, loading the history, ADK's request building
// and the processor chain (compression check, masking, routing). The
// stored session was left masked, as a session's last turn leaves it. Each
// iteration resumes a fresh copy of the same database file.
func BenchmarkResume1000(b *testing.B) {
	s := config.Defaults()
	s.Workspace = b.TempDir()
	s.Home = filepath.Join(b.TempDir(), ".agentry")
	s.Trusted = true
	pristine := filepath.Join(b.TempDir(), "pristine.db")
	s.Session.Path = pristine
	quiet := slog.New(slog.DiscardHandler)
	backend := signalling{Instant: instant{Chunks: []*genai.GenerateContentResponse{{
		Candidates:    []*genai.Candidate{{Content: genai.NewContentFromText("ok", genai.RoleModel), FinishReason: genai.FinishReasonStop}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1000, TotalTokenCount: 1001},
	}}}, Called: make(chan struct{}, 1)}
	ctx := context.Background()
	{
		store, closeStore, err := OpenStore(ctx, &s, quiet)
		if err != nil {
			b.Fatal(err)
		}
		// Stored directly: a session built and closed with nothing in it
		// would be dropped as unused.
		if _, _, err := runtime.EnsureSession(ctx, store, "resume-1000", s.Workspace, "", runtime.TranscriptPath(s.TempDir(), time.Now(), "resume-1000")); err != nil {
			b.Fatal(err)
		}
		live, err := runtime.GetSession(ctx, store, "resume-1000")
		if err != nil {
			b.Fatal(err)
		}
		output := strings.Repeat("a line of tool output\n", 95) // ~2 KB
		for i := range 250 {
			id := fmt.Sprint("call-", i)
			contents := []*genai.Content{
				genai.NewContentFromText(fmt.Sprintf("prompt %d: please look at file %d", i, i), genai.RoleUser),
				{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "read_file", Args: map[string]any{"file_path": fmt.Sprint("f", i, ".go")}}}}},
				{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "read_file", Response: map[string]any{"output": output}}}}},
				genai.NewContentFromText(fmt.Sprintf("file %d looks fine", i), genai.RoleModel),
			}
			for j, c := range contents {
				ev := session.NewEvent(ctx, fmt.Sprint("inv-", i))
				ev.Author = "agentry"
				if j == 0 {
					ev.Author = "user"
				}
				ev.Content = c
				if err := store.AppendEvent(ctx, live, ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		// One turn masks the old outputs and stores the masked view, as
		// the session's last turn did before it was left.
		sess, err := FromSettings(ctx, &s, Options{SessionID: "resume-1000", Resolver: fixedResolver{B: backend}, SessionService: store, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		id, err := sess.Send(ctx, runtime.TextMessage("one more"))
		if err != nil {
			b.Fatal(err)
		}
		<-backend.Called
		for range sess.Stream(ctx, id) {
		}
		sess.Close()
		closeStore()
	}
	data, err := os.ReadFile(pristine)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		s.Session.Path = filepath.Join(dir, fmt.Sprint(i, ".db"))
		if err := os.WriteFile(s.Session.Path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		store, closeStore, err := OpenStore(ctx, &s, quiet)
		if err != nil {
			b.Fatal(err)
		}
		sess, err := FromSettings(ctx, &s, Options{SessionID: "resume-1000", Resolver: fixedResolver{B: backend}, SessionService: store, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		id, err := sess.Send(ctx, runtime.TextMessage("go on"))
		if err != nil {
			b.Fatal(err)
		}
		<-backend.Called
		b.StopTimer()
		for range sess.Stream(ctx, id) {
		}
		sess.Close()
		closeStore()
		os.Remove(s.Session.Path)
		b.StartTimer()
	}
}

// firstCall is a backend that answers every stream with a complete_task
// call and records when each call arrived.
type firstCall struct {
	instant
	at chan time.Time
}

func (b firstCall) GenerateContentStream(ctx context.Context, m string, c []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	select {
	case b.at <- time.Now():
	default:
	}
	return b.instant.GenerateContentStream(ctx, m, c, cfg)
}

// BenchmarkSubagentStart measures starting a local subagent the way a
// session built from settings does: from the invoke_agent call to the
// child's first model request — the child session (its tools, chain,
// plugins, stored session and transcript) and the first request's
// building — on the in-memory and the SQLite store. The metric is the
// median of that interval; ns/op is the whole call, the child's
// complete_task included. Budget: under 2 ms.
func BenchmarkSubagentStart(b *testing.B) {
	for _, store := range []string{config.SessionStoreMemory, config.SessionStoreSQLite} {
		b.Run(store, func(b *testing.B) {
			s := config.Defaults()
			s.Workspace = b.TempDir()
			s.Home = filepath.Join(b.TempDir(), ".agentry")
			s.Session.Store = store
			quiet := slog.New(slog.DiscardHandler)
			ctx := context.Background()
			svc, closeStore, err := OpenStore(ctx, &s, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer closeStore()
			backend := firstCall{at: make(chan time.Time, 1), instant: instant{Chunks: []*genai.GenerateContentResponse{{
				Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{
					FunctionCall: &genai.FunctionCall{Name: subagents.CompleteTaskToolName, Args: map[string]any{"result": "done"}},
				}}}, FinishReason: genai.FinishReasonStop}},
			}}}}
			def := agents.Definition{Name: "helper", Kind: agents.KindLocal, Description: "Helps.", SystemPrompt: "You help."}
			parent, err := FromSettings(ctx, &s, Options{Resolver: fixedResolver{B: backend}, Agents: []agents.Definition{def},
				SessionService: svc, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer parent.Close()
			var starts []time.Duration
			i := 0
			for b.Loop() {
				i++
				start := time.Now()
				res, err := subagents.Run(ctx, parent, "helper", "go", nil)
				if err != nil || res.TerminateReason != subagents.TerminateGoal {
					b.Fatalf("subagent %d: %v %+v", i, err, res)
				}
				starts = append(starts, (<-backend.at).Sub(start))
			}
			slices.Sort(starts)
			b.ReportMetric(float64(starts[len(starts)/2].Microseconds()), "start-µs")
		})
	}
}

// BenchmarkStreamedAnswer measures what each streamed chunk of an answer
// costs a session: an answer of 200 one-word chunks goes from the backend
// through the dispatcher's aggregation, ADK's flow and plugins, the
// translator and the event log to a Stream consumer. "plain" is a session
// with no processors; "settings" is one built from the default settings
// (processor chain, routing, loop detection), as a served session is.
//
// Besides the per-answer figures it reports ns, bytes and allocations per
// chunk (the whole answer's cost over its chunks, so the model call's
// fixed cost is spread over them), and retained-B/answer: the live heap
// the session's log keeps per answer after a GC.
func BenchmarkStreamedAnswer(b *testing.B) {
	const chunks = 200
	backend := newWordStream(chunks)
	b.Run("plain", func(b *testing.B) {
		s, err := runtime.New(context.Background(), runtime.Config{
			Model:          "gemini-2.5-flash",
			Resolver:       fixedResolver{B: backend},
			Instruction:    runtime.SystemPrompt,
			SessionService: &fixedHistory{Base: history(20)},
			Logger:         slog.New(slog.DiscardHandler),
		})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchStreamedAnswer(b, s, chunks)
	})
	b.Run("settings", func(b *testing.B) {
		settings := config.Defaults()
		settings.Workspace = b.TempDir()
		settings.Home = filepath.Join(b.TempDir(), ".agentry")
		settings.Model.Name = "gemini-2.5-flash"
		quiet := slog.New(slog.DiscardHandler)
		s, err := FromSettings(context.Background(), &settings, Options{
			Resolver: fixedResolver{B: backend}, SessionService: &fixedHistory{Base: history(20)},
			Agents: []agents.Definition{}, Logger: quiet,
		})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchStreamedAnswer(b, s, chunks)
	})
}

func benchStreamedAnswer(b *testing.B, s *runtime.Session, chunks int) {
	ctx := context.Background()
	msg := runtime.TextMessage("next question")
	answer := func() {
		id, err := s.Send(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		deltas := 0
		var end *runtime.AgentEnd
		for ev, err := range s.Stream(ctx, id) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Type == runtime.EventMessage && ev.Message.Role == runtime.RoleAgent {
				deltas++
			}
			end = ev.AgentEnd
		}
		if end == nil || end.Reason != runtime.EndCompleted || deltas != chunks {
			b.Fatalf("stream ended %+v after %d deltas, want %d", end, deltas, chunks)
		}
	}
	answer() // the first stream's one-off work (initialize, the first request) is not measured
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		answer()
		n++
	}
	b.StopTimer()
	elapsed := b.Elapsed()
	goruntime.ReadMemStats(&after)
	total := float64(n * chunks)
	b.ReportMetric(float64(elapsed.Nanoseconds())/total, "ns/chunk")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/total, "B/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "retained-B/answer")
	goruntime.KeepAlive(s)
}
