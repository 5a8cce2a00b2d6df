package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/compression"
)

// recordingContext is a PromptContext that gives every prompt a numbered
// part and records what it is told.
type recordingContext struct {
	mu        sync.Mutex
	prompts   int
	histories []int
	rewritten int
}

func (r *recordingContext) PromptContext(_ context.Context, sessionID string, h session.Events) []*genai.Part {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompts++
	n := 0
	if h != nil {
		n = h.Len()
	}
	r.histories = append(r.histories, n)
	return []*genai.Part{{Text: fmt.Sprintf("context %d", r.prompts)}}
}

func (r *recordingContext) HistoryRewritten(string) {
	r.mu.Lock()
	r.rewritten++
	r.mu.Unlock()
}

func (r *recordingContext) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rewritten
}

// TestPromptContext: each prompt goes to the model with the context's
// parts ahead of it, in its turn, and stays so in later requests; the
// source is told when a compression — automatic or /compress — rewrote
// the history.
func TestPromptContext(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	long := strings.Repeat("an old and long answer ", 200)
	b := newScript(
		usageTurn(long, 10),
		usageTurn("second answer", 600),
		textTurn("<state_snapshot>draft</state_snapshot>"),
		textTurn("<state_snapshot>final</state_snapshot>"),
		usageTurn("third answer", 3000),
		textTurn("<state_snapshot>draft</state_snapshot>"),
		textTurn("<state_snapshot>final</state_snapshot>"),
		textTurn("fourth answer"),
	)
	pc := &recordingContext{}
	s := newTestSession(t, b, Config{
		SessionService: store, TempDir: dir, PromptContext: pc,
		Compression: &CompressionConfig{Store: store, TokenLimit: func(string) int { return 1000 }},
	})
	run(t, s, "first question")
	run(t, s, "second question")
	reqs := b.Requests()
	if got := partTexts(reqs[1].Contents); strings.Join(got, "|") != "context 1|first question|"+long+"|context 2|second question" {
		t.Errorf("second request = %q", got)
	}
	if pc.histories[0] != 0 || pc.histories[1] < 2 {
		t.Errorf("histories handed to the source: %v, want none then the first exchange", pc.histories)
	}
	if pc.count() != 0 {
		t.Fatalf("told of %d rewrites before any", pc.count())
	}
	run(t, s, "third question") // compressed automatically before its model call
	if pc.count() != 1 {
		t.Errorf("told of %d rewrites after an automatic compression, want 1", pc.count())
	}
	info, err := s.Compress(t.Context())
	if err != nil || info.Status != compression.StatusCompressed {
		t.Fatalf("Compress() = %+v, %v", info, err)
	}
	if pc.count() != 2 {
		t.Errorf("told of %d rewrites after /compress, want 2", pc.count())
	}
	run(t, s, "fourth question")
	reqs = b.Requests()
	got := partTexts(reqs[len(reqs)-1].Contents)
	if n := len(got); n < 2 || got[n-2] != "context 4" || got[n-1] != "fourth question" {
		t.Errorf("last request = %q, want the context then the prompt at the end", got)
	}
}

// partTexts is the text of every part of contents, in order.
func partTexts(contents []*genai.Content) []string {
	var out []string
	for _, c := range contents {
		for _, p := range c.Parts {
			out = append(out, p.Text)
		}
	}
	return out
}
