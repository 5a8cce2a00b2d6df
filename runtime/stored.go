package runtime

import (
	"context"

	"google.golang.org/adk/v2/session"
)

// SessionStore is the store sessions are kept in, as OpenStore opens it.
// A front end holds it, hands it to the sessions it builds and to the
// functions that read and rewrite stored sessions (ListSessions,
// LoadSession, Rewind, DeleteSession), and needs none of its methods.
type SessionStore = session.Service

// StoredConversation is a stored session with its history, as
// "agentry sessions show" prints a session that has no transcript.
type StoredConversation struct {
	StoredSession
	// Messages are the session's events that hold a content, in order.
	Messages []StoredMessage
}

// StoredMessage is one stored event's content.
type StoredMessage struct {
	// Role is the content's role: "user" or "model".
	Role string
	// Model is the model that answered a model message (after routing
	// and fallbacks), or "" when the event does not say.
	Model string
	// Parts are the content's parts that a reader sees; thoughts, and
	// parts with nothing to show, are left out.
	Parts []StoredPart
}

// StoredPartKind says what a StoredPart holds.
type StoredPartKind int

// The kinds of StoredPart.
const (
	// StoredText is text: StoredPart.Text.
	StoredText StoredPartKind = iota
	// StoredCall is a tool call: the tool's StoredPart.Name and its
	// StoredPart.Args.
	StoredCall
	// StoredResult is a tool's result: the tool's StoredPart.Name.
	StoredResult
)

// StoredPart is one part of a StoredMessage.
type StoredPart struct {
	// Kind says which fields are set.
	Kind StoredPartKind
	// Text is a text part's text.
	Text string
	// Name is the tool of a call or a result.
	Name string
	// Args are a call's arguments.
	Args map[string]any
}

// LoadSession returns a stored session with its history, or an error
// wrapping ErrNoSession.
func LoadSession(ctx context.Context, store SessionStore, id string) (*StoredConversation, error) {
	sess, err := GetSession(ctx, store, id)
	if err != nil {
		return nil, err
	}
	out := &StoredConversation{StoredSession: storedSession(summaryOf(sess))}
	for ev := range sess.Events().All() {
		if ev.Content == nil {
			continue
		}
		m := StoredMessage{Role: ev.Content.Role, Model: AnsweredBy(ev)}
		for _, p := range ev.Content.Parts {
			switch {
			case p == nil || p.Thought:
			case p.Text != "":
				m.Parts = append(m.Parts, StoredPart{Kind: StoredText, Text: p.Text})
			case p.FunctionCall != nil:
				m.Parts = append(m.Parts, StoredPart{Kind: StoredCall, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				m.Parts = append(m.Parts, StoredPart{Kind: StoredResult, Name: p.FunctionResponse.Name})
			}
		}
		out.Messages = append(out.Messages, m)
	}
	return out, nil
}
