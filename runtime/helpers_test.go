package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// The scripted backend, resolver, tool and timers of package modeltest,
// under the short names runtime's tests use.
type (
	turn            = modeltest.Turn
	script          = modeltest.Script
	recordedRequest = modeltest.Request
	fixedResolver   = modeltest.FixedResolver
	fakeTool        = modeltest.FakeTool
	timers          = modeltest.Timers
	fixedHistory    = modeltest.FixedHistory
	instant         = modeltest.Instant
	signalling      = modeltest.Signalling
)

var (
	newScript         = modeltest.NewScript
	textTurn          = modeltest.TextTurn
	callTurn          = modeltest.CallTurn
	fc                = modeltest.FC
	functionResponses = modeltest.FunctionResponses
	history           = modeltest.History
	newWordStream     = modeltest.NewWordStream
	summarize         = modeltest.Summarize
)

// newTestSession builds a session over b with the given tools.
func newTestSession(t *testing.T, b llm.Backend, cfg Config) *Session {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	if cfg.Resolver == nil {
		cfg.Resolver = fixedResolver{B: b}
	}
	if cfg.Retry.NewTimer == nil {
		// No test sleeps through a retry delay.
		cfg.Retry.NewTimer = (&timers{}).New
	}
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run sends text and collects the stream's events, failing on a hang.
func run(t *testing.T, s *Session, text string) []Event {
	t.Helper()
	id, err := s.Send(t.Context(), TextMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	return collectStream(t, s, id)
}

func collectStream(t *testing.T, s *Session, id string) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var evs []Event
	for ev, err := range s.Stream(ctx, id) {
		if err != nil {
			t.Fatalf("stream %s: %v (events so far: %v)", id, err, types(evs))
		}
		evs = append(evs, ev)
	}
	return evs
}

func types(evs []Event) []EventType {
	out := make([]EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func last(evs []Event) Event { return evs[len(evs)-1] }

func find(evs []Event, typ EventType) []Event {
	var out []Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// abortOnFirstDelta sends text and aborts the stream as soon as the agent's
// first message arrives, returning the stream's events.
func abortOnFirstDelta(t *testing.T, s *Session, text string) []Event {
	t.Helper()
	id, err := s.Send(t.Context(), TextMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for ev, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == EventMessage && ev.Message.Role == RoleAgent {
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
