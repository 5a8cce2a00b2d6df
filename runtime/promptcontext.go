package runtime

import (
	"context"
	"slices"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/handle"
)

// PromptContext supplies context that goes into the history with each
// prompt the session runs — the user's, a hook's continuation, a loop
// recovery turn — ahead of the prompt's own parts, as gemini-cli's IDE
// context goes into its history as a user turn right before the prompt
// (and merges with it into one turn on the wire). Being stored with the
// prompt, it is in every later request, in the transcript and in a
// resumed or rewound session, as the model saw it. ide/idecontext's
// Source is one.
type PromptContext interface {
	// PromptContext returns the parts for the next prompt of session
	// sessionID, whose stored history is history (the prompt not yet in
	// it); none leaves the prompt as it is.
	PromptContext(ctx context.Context, sessionID string, history session.Events) []*genai.Part
	// HistoryRewritten tells that session sessionID's history was
	// rewritten — rewound, or compressed (/compress or automatically) —
	// so the context earlier prompts carried may be gone from it.
	HistoryRewritten(sessionID string)
}

// historyRewritten tells the session's PromptContext that its history
// was rewritten.
func (s *Session) historyRewritten() {
	if s != nil && s.promptCtx != nil {
		s.promptCtx.HistoryRewritten(s.cfg.sessionID)
	}
}

// promptContext asks the session's PromptContext for the parts of the
// next prompt; none without one, or when the history cannot be read.
func (s *Session) promptContext(ctx context.Context) []*genai.Part {
	if s.promptCtx == nil {
		return nil
	}
	events, err := sessionEvents(s.svc)(ctx, s.cfg.appName, s.cfg.userID, s.cfg.sessionID)
	if err != nil {
		// A session not created yet (its first prompt) has no history.
		events = nil
	}
	return s.promptCtx.PromptContext(ctx, s.cfg.sessionID, events)
}

// withPromptParts returns c with parts ahead of its own; c itself is not
// changed.
func withPromptParts(parts []*genai.Part, c *genai.Content) *genai.Content {
	if len(parts) == 0 || c == nil {
		return c
	}
	out := *c
	out.Parts = append(slices.Clip(parts), c.Parts...)
	return &out
}

// recordedPrompt is what the transcript records of a prompt that carries
// extra parts: the parts the model sees, and the prompt as the user wrote
// it for display.
func recordedPrompt(parts []*genai.Part, st *stream) (*genai.Content, string) {
	if len(parts) == 0 {
		return st.content, st.display
	}
	display := st.display
	if display == "" {
		display = handle.PromptText(st.content)
	}
	return withPromptParts(parts, st.content), display
}
