package idecontext_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
)

func text(parts []*genai.Part) string {
	if len(parts) == 0 {
		return ""
	}
	return parts[0].Text
}

// TestPendingCall: while the history ends with the model's function call
// nothing is sent and nothing is remembered; the next prompt after the
// response carries the context (the full one, never sent before).
func TestPendingCall(t *testing.T) {
	ide := &fakeIDE{c: ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true}), n: 1}
	src := idecontext.New(ide)
	pending := events{
		userEvent("p", &genai.Part{Text: "go"}),
		modelEvent("m", &genai.Part{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "read_file"}}),
	}
	if got := src.PromptContext(t.Context(), "s", pending); got != nil {
		t.Fatalf("with a pending call: %q", text(got))
	}
	answered := append(pending, userEvent("r", &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "read_file"}}), modelEvent("m2", &genai.Part{Text: "done"}))
	if got := text(src.PromptContext(t.Context(), "s", answered)); !strings.HasPrefix(got, idecontext.FullHeader) {
		t.Errorf("after the response: %q, want the full context", got)
	}
}

// TestPendingCallKeepsForcedFull: a rewrite's forced full context waits
// through a pending call for the next prompt.
func TestPendingCallKeepsForcedFull(t *testing.T) {
	ide := &fakeIDE{c: ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true}), n: 1}
	src := idecontext.New(ide)
	if got := text(src.PromptContext(t.Context(), "s", nil)); !strings.HasPrefix(got, idecontext.FullHeader) {
		t.Fatalf("first prompt: %q", got)
	}
	src.HistoryRewritten("s")
	pending := events{modelEvent("m", &genai.Part{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "x"}})}
	if got := src.PromptContext(t.Context(), "s", pending); got != nil {
		t.Fatalf("with a pending call: %q", text(got))
	}
	if got := text(src.PromptContext(t.Context(), "s", events{modelEvent("m", &genai.Part{Text: "ok"})})); !strings.HasPrefix(got, idecontext.FullHeader) {
		t.Errorf("after the call: %q, want the forced full context", got)
	}
}

// TestForget: a forgotten session starts over with the full context; a
// rewrite of an unknown session is harmless.
func TestForget(t *testing.T) {
	ide := &fakeIDE{c: ws(idewire.File{Path: "/a", Timestamp: 1}), n: 1}
	src := idecontext.New(ide)
	src.HistoryRewritten("unknown")
	first := text(src.PromptContext(t.Context(), "s", nil))
	if first == "" || text(src.PromptContext(t.Context(), "s", nil)) != "" {
		t.Fatalf("first %q, then something again", first)
	}
	src.Forget("s")
	if got := text(src.PromptContext(t.Context(), "s", nil)); got != first {
		t.Errorf("after Forget: %q, want %q", got, first)
	}
}

// TestConcurrentSessions: sessions on one source have their own state,
// read and written from their own goroutines while the IDE updates (run
// with -race).
func TestConcurrentSessions(t *testing.T) {
	ide := &lockedIDE{}
	ide.set(ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true, Cursor: at(1, 1)}))
	src := idecontext.New(ide)
	const sessions, prompts = 8, 50
	var wg sync.WaitGroup
	stop := make(chan struct{})
	updated := make(chan struct{})
	go func() {
		defer close(updated)
		for i := 2; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ide.set(ws(idewire.File{Path: "/a", Timestamp: int64(i), IsActive: true, Cursor: at(i, 1)}))
		}
	}()
	fulls := make([]int, sessions)
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%d", s)
			for range prompts {
				got := text(src.PromptContext(t.Context(), id, nil))
				if strings.HasPrefix(got, idecontext.FullHeader) {
					fulls[s]++
				} else if got != "" && !strings.HasPrefix(got, idecontext.DeltaHeader) {
					t.Errorf("%s: %q", id, got)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-updated
	for s, n := range fulls {
		if n != 1 {
			t.Errorf("session s%d got the full context %d times, want once", s, n)
		}
	}
}

type lockedIDE struct {
	mu sync.Mutex
	c  idewire.Context
	n  uint64
}

func (l *lockedIDE) set(c idewire.Context) {
	l.mu.Lock()
	l.c, l.n = c, l.n+1
	l.mu.Unlock()
}

func (l *lockedIDE) Context() (idewire.Context, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.n
}
