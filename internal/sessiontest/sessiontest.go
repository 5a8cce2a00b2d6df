// Package sessiontest helps the tests of packages that build runtime
// sessions from outside runtime (compose, subagents): a session over a
// scripted backend (package modeltest), and helpers that run a prompt and
// read its events.
package sessiontest

import (
	"context"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// NewSession builds a session over b: cfg with a default model, b as its
// resolver's backend and timers that never sleep, closed with the test.
func NewSession(t *testing.T, b llm.Backend, cfg runtime.Config) *runtime.Session {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	if cfg.Resolver == nil {
		cfg.Resolver = modeltest.FixedResolver{B: b}
	}
	if cfg.Retry.NewTimer == nil {
		// No test sleeps through a retry delay.
		cfg.Retry.NewTimer = (&modeltest.Timers{}).New
	}
	s, err := runtime.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Run sends text and collects the stream's events, failing on a hang.
func Run(t *testing.T, s runtime.AgentProtocol, text string) []runtime.Event {
	t.Helper()
	id, err := s.Send(t.Context(), runtime.TextMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	return CollectStream(t, s, id)
}

// CollectStream collects the events of stream id, failing after 30
// seconds (a hang guard, not a speed requirement).
func CollectStream(t *testing.T, s runtime.AgentProtocol, id string) []runtime.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var evs []runtime.Event
	for ev, err := range s.Stream(ctx, id) {
		if err != nil {
			t.Fatalf("stream %s: %v (events so far: %v)", id, err, Types(evs))
		}
		evs = append(evs, ev)
	}
	return evs
}

// Types returns the events' types.
func Types(evs []runtime.Event) []runtime.EventType {
	out := make([]runtime.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// Last returns the last event.
func Last(evs []runtime.Event) runtime.Event { return evs[len(evs)-1] }

// Find returns the events of type typ.
func Find(evs []runtime.Event, typ runtime.EventType) []runtime.Event {
	var out []runtime.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
