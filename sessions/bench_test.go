package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// benchEvent is a typical model turn: about 1 KB of text and a state key.
func benchEvent(i int) *session.Event {
	return &session.Event{
		ID:           fmt.Sprintf("ev-%08d", i),
		InvocationID: "inv-bench",
		Author:       "model",
		Timestamp:    time.Now(),
		LLMResponse: model.LLMResponse{
			Content:       genai.NewContentFromText(strings.Repeat("lorem ipsum ", 85), genai.RoleModel),
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1000, TotalTokenCount: 1100},
		},
		Actions: session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}},
	}
}

// turnEvents are the four events turn i appends, with the sizes of a
// typical turn with one tool call: the prompt, the model's call (after a
// signed thought), the tool's response, the model's answer. Like ADK's,
// each event has its own time, later than the last turn's.
func turnEvents(i int) []*session.Event {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	at := func(n int) time.Time { return start.Add(time.Duration(n) * 100 * time.Millisecond) }
	id := func(n int) string { return fmt.Sprintf("ev-%08d-%d", i, n) }
	inv := fmt.Sprintf("inv-%08d", i)
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12000, CandidatesTokenCount: 80, ThoughtsTokenCount: 40, TotalTokenCount: 12120}
	call := &genai.FunctionCall{ID: "call-" + id(1), Name: "read_file", Args: map[string]any{"absolute_path": "/work/project/internal/server/handler.go", "limit": 200.0}}
	return []*session.Event{
		{ID: id(0), InvocationID: inv, Author: "user", Timestamp: at(0),
			LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Why does the handler return 500 when the body is empty? Fix it and add a test.", genai.RoleUser)}},
		{ID: id(1), InvocationID: inv, Author: "agentry", Timestamp: at(1),
			LLMResponse: model.LLMResponse{
				Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
					{FunctionCall: call, ThoughtSignature: []byte(strings.Repeat("s", 120))},
				}},
				UsageMetadata: usage, ModelVersion: "gemini-2.5-pro", FinishReason: genai.FinishReasonStop,
			},
			Actions: session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}}},
		{ID: id(2), InvocationID: inv, Author: "agentry", Timestamp: at(2),
			LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{ID: call.ID, Name: call.Name, Response: map[string]any{"output": strings.Repeat("\tif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n", 40)}}},
			}}},
			Actions: session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}}},
		{ID: id(3), InvocationID: inv, Author: "agentry", Timestamp: at(3),
			LLMResponse: model.LLMResponse{
				Content:       genai.NewContentFromText(strings.Repeat("The decoder returns io.EOF for an empty body; ", 20), genai.RoleModel),
				UsageMetadata: usage, ModelVersion: "gemini-2.5-pro", FinishReason: genai.FinishReasonStop,
			},
			Actions: session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}}},
	}
}

// benchAppends appends batch(i) for each of b.N iterations to a new
// session of svc, timing each append, and reports the median and 99th
// percentile of single appends and the process's CPU time per
// iteration (background work such as checkpoints and the GC included).
func benchAppends(b *testing.B, svc session.Service, batch func(i int) []*session.Event) {
	ctx := context.Background()
	resp, err := svc.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	events := make([][]*session.Event, b.N)
	n := 0
	for i := range events {
		events[i] = batch(i)
		n += len(events[i])
	}
	took := make([]time.Duration, 0, n)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := proctest.CPU()
	for i := range b.N {
		for _, ev := range events[i] {
			start := time.Now()
			if err := svc.AppendEvent(ctx, resp.Session, ev); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
	}
	b.StopTimer()
	cpu1, _ := proctest.CPU()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e3, "p99-µs")
	if cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	}
}

func oneEvent(i int) []*session.Event { return []*session.Event{benchEvent(i)} }

// BenchmarkSQLiteAppend: budget p50 <= 40 µs, with WAL and
// synchronous=NORMAL (see OpenSQLite).
func BenchmarkSQLiteAppend(b *testing.B) {
	benchAppends(b, sqliteBackend(b).open(b), oneEvent)
}

// BenchmarkSQLiteTurn: a turn's four appends (turnEvents); the
// percentiles are of single appends, the rest per turn.
func BenchmarkSQLiteTurn(b *testing.B) {
	benchAppends(b, sqliteBackend(b).open(b), turnEvents)
}

// BenchmarkPostgresAppend: the same on the PostgreSQL test server.
func BenchmarkPostgresAppend(b *testing.B) {
	benchAppends(b, postgresBackend(b).open(b), oneEvent)
}

// BenchmarkPostgresTurn: a turn's four appends on PostgreSQL.
func BenchmarkPostgresTurn(b *testing.B) {
	benchAppends(b, postgresBackend(b).open(b), turnEvents)
}

// BenchmarkInMemoryAppend and BenchmarkInMemoryTurn: ADK's in-memory
// service, what a stored append is measured against.
func BenchmarkInMemoryAppend(b *testing.B) {
	benchAppends(b, session.InMemoryService(), oneEvent)
}

func BenchmarkInMemoryTurn(b *testing.B) {
	benchAppends(b, session.InMemoryService(), turnEvents)
}

// BenchmarkEncodeTurn encodes a turn's four events with appendEvent, into
// one reused buffer as the Store does, and, for comparison, json.Marshal.
func BenchmarkEncodeTurn(b *testing.B) {
	evs := turnEvents(0)
	b.Run("appendEvent", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			for _, ev := range evs {
				var err error
				if buf, err = appendEvent(buf[:0], ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ev := range evs {
				if _, err := json.Marshal(ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkGetLive1000: an unfiltered Get of a loaded 1,000-event session
// returns the live object without copying; budget < 50 µs.
func BenchmarkGetLive1000(b *testing.B) {
	ctx := context.Background()
	s := sqliteBackend(b).open(b)
	resp, err := s.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: "big"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if err := s.AppendEvent(ctx, resp.Session, benchEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
	req := &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: "big"}
	b.ReportAllocs()
	for b.Loop() {
		got, err := s.Get(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if got.Session != resp.Session || got.Session.Events().Len() != 1000 {
			b.Fatal("Get did not return the live 1,000-event session")
		}
	}
}

// benchReplace replaces the content of 1,000 of a 2,000-event session's
// events, as a long session's first masking pass does, with replace.
func benchReplace(b *testing.B, replace func(ctx context.Context, s *Store, contents map[string]*genai.Content) error) {
	ctx := context.Background()
	s := sqliteBackend(b).open(b)
	resp, err := s.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: "big"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		if err := s.AppendEvent(ctx, resp.Session, benchEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
	contents := map[string]*genai.Content{}
	for i := 0; i < 2000; i += 2 {
		contents[fmt.Sprintf("ev-%08d", i)] = genai.NewContentFromText("<tool_output_masked>…</tool_output_masked>", genai.RoleUser)
	}
	for b.Loop() {
		if err := replace(ctx, s, contents); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplace1000Batched: ReplaceEventContents, one transaction.
func BenchmarkReplace1000Batched(b *testing.B) {
	benchReplace(b, func(ctx context.Context, s *Store, contents map[string]*genai.Content) error {
		return s.ReplaceEventContents(ctx, testApp, testUser, "big", contents)
	})
}

// BenchmarkReplace1000OneByOne: ReplaceEventContent per event, the
// baseline the batch is measured against.
func BenchmarkReplace1000OneByOne(b *testing.B) {
	benchReplace(b, func(ctx context.Context, s *Store, contents map[string]*genai.Content) error {
		for id, c := range contents {
			if err := s.ReplaceEventContent(ctx, testApp, testUser, "big", id, c); err != nil {
				return err
			}
		}
		return nil
	})
}
