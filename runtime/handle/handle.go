// Package handle is the running stream as the plugins acting for it see
// it: its ids and prompt, the events they may add to it, and the ways
// they may stop it. The session puts the handle on every invocation's
// context; a plugin's callback reaches it with From.
//
// The package knows neither the session nor its event types, so the
// plugins that use it need not import the runtime, and the runtime can
// assemble them.
package handle

import (
	"context"
	"strings"

	"google.golang.org/genai"
)

// Stream is one running stream of a session.
type Stream interface {
	// SessionID is the session's id.
	SessionID() string
	// ID is the stream's id.
	ID() string
	// Initial reports whether the stream is the session's first.
	Initial() bool
	// Prompt is the user's message that started the stream.
	Prompt() *genai.Content

	// Custom emits a custom event of kind with data.
	Custom(kind string, data map[string]any)
	// Warn emits a non-fatal error event with code in its _meta, which
	// drivers show as a warning.
	Warn(code, message string)

	// Cancel stops the stream with cause.
	Cancel(cause error)
	// Restart stops the current invocation with cause, which its
	// unanswered tool calls are closed with; the stream goes on with a new
	// invocation whose user turn is next.
	Restart(cause error, next *genai.Content)
	// RequireApproval makes the tool call callID need a human's
	// confirmation, whatever the approval policy says.
	RequireApproval(callID string)

	// Local returns the stream's value for key, made by init on its first
	// use: the per-stream state of a plugin, gone with the stream. key
	// should be of a type the plugin does not export.
	Local(key any, init func() any) any
}

type streamKey struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s Stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

// From returns the stream ctx carries, or nil outside a stream (a
// utility call, a test driving a plugin directly).
func From(ctx context.Context) Stream {
	s, _ := ctx.Value(streamKey{}).(Stream)
	return s
}

// PromptText is the text of a prompt's content: its text parts, one a
// line; "" for a content without text. Hooks get it as the prompt, and the
// loop check as the user's original request.
func PromptText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
