package sessions

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

func userEvent(id string, parts ...*genai.Part) *session.Event {
	return &session.Event{
		ID: id, InvocationID: "inv-1", Author: "user", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: parts}},
	}
}

// TestSummaries: each session's creation and update times, own state,
// prompts (the user's events holding text: not state-only events) and
// other events, oldest session first, without loading the sessions.
func TestSummaries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		s := b.open(t, WithClock(func() time.Time { return now }))
		// Created in this order, with ids out of order.
		late := create(t, s, "a-late", map[string]any{"ws": "/w", "user:name": "x"})
		now = now.Add(-time.Hour) // an earlier clock: b-early is the oldest
		early := create(t, s, "b-early", nil)
		now = now.Add(2 * time.Hour)
		create(t, s, "c-empty", nil)

		appendEv(t, s, early, userEvent("e1", genai.NewPartFromText("first "), genai.NewPartFromText("question")))
		appendEv(t, s, early, textEvent("e2", "an answer"))
		appendEv(t, s, early, userEvent("e3", genai.NewPartFromText("second question")))
		appendEv(t, s, early, textEvent("e4", "another"))
		// A state-only event of the user's is no prompt.
		appendEv(t, s, late, &session.Event{ID: "e5", InvocationID: "i", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"k": "v"}}})

		got, err := s.Summaries(t.Context(), testApp, testUser)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		want := []Summary{
			// Updated is the last event's time.
			{ID: "b-early", Created: start.Add(-time.Hour), Updated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), State: map[string]any{},
				Prompts: 2, FirstPrompt: "first \nquestion", LastPromptAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Replies: 2},
			{ID: "a-late", Created: start, Updated: start.Add(time.Hour), State: map[string]any{"ws": "/w", "k": "v"}},
			{ID: "c-empty", Created: start.Add(time.Hour), Updated: start.Add(time.Hour), State: map[string]any{}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Summaries (-want +got):\n%s", d)
		}
	})
}
