// Package listing holds what a listing shows of a stored session, the
// Summary that agentry's session store reads from its database and that
// the runtime reads from any other session service's sessions.
package listing

import (
	"strings"
	"time"

	"google.golang.org/genai"
)

// Summary is what a listing shows of a stored session, read without
// loading the session's events.
type Summary struct {
	// ID is the session id.
	ID string
	// Created and Updated are when the session was created and last
	// appended to.
	Created, Updated time.Time
	// State is the session's own state (no app: or user: keys).
	State map[string]any
	// Prompts counts the user's messages: the events the user authored
	// that hold text (state-only events hold none).
	Prompts int
	// FirstPrompt is the text of the first of them, and LastPromptAt the
	// time of the last (zero without prompts).
	FirstPrompt  string
	LastPromptAt time.Time
	// Replies counts the events of every other author: model responses
	// and tool results.
	Replies int
}

// AddUserEvent counts an event the user authored, at time at: one with
// text is a prompt (state-only events hold none). sessions.Store.Summaries
// calls it for each stored user event, in order; a listing over another session
// service calls it the same way.
func (s *Summary) AddUserEvent(at time.Time, c *genai.Content) {
	text := promptText(c)
	if text == "" {
		return
	}
	if s.Prompts == 0 {
		s.FirstPrompt = text
	}
	s.Prompts++
	s.LastPromptAt = at
}

// promptText is the text of a user content: its text parts, one a line;
// "" for a content without text (none, or a function response). The
// editor's context that goes ahead of a prompt (ide/idecontext) is not
// the user's text and is left out.
func promptText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for i, p := range c.Parts {
		if i == 0 && p != nil && editorContext(p.Text) {
			continue
		}
		if p != nil && p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// editorContext reports whether text is the editor's context in one of
// gemini-cli's two forms (ide/idecontext's FullHeader and DeltaHeader).
func editorContext(text string) bool {
	return strings.HasPrefix(text, "Here is the user's editor context as a JSON object. This is for your information only.\n```json\n") ||
		strings.HasPrefix(text, "Here is a summary of changes in the user's editor context, in JSON format. This is for your information only.\n```json\n")
}
