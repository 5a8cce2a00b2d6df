package sessions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
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

// benchAppend times each append and reports the median and 99th
// percentile.
func benchAppend(b *testing.B, s *Store) {
	ctx := context.Background()
	resp, err := s.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	events := make([]*session.Event, b.N)
	for i := range events {
		events[i] = benchEvent(i)
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := s.AppendEvent(ctx, resp.Session, events[i]); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkSQLiteAppend: budget p50 < 200 µs, with WAL and
// synchronous=NORMAL (see OpenSQLite).
func BenchmarkSQLiteAppend(b *testing.B) {
	benchAppend(b, sqliteBackend(b).open(b))
}

// BenchmarkPostgresAppend: the same on the PostgreSQL test server.
func BenchmarkPostgresAppend(b *testing.B) {
	benchAppend(b, postgresBackend(b).open(b))
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
