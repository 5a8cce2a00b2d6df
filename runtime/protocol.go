// Package runtime is agentry's agent runtime: the AgentProtocol interface and
// its events, and the ADK-backed session that implements it. A session owns
// an ADK runner whose model is agentry's dispatcher (backends picked by
// model name) and whose tools go through agentry's scheduler (approval, live
// output). Drivers — the batch CLI, a parent agent, the A2A server — only
// see protocol events.
package runtime

import (
	"context"
	"errors"
	"iter"

	"github.com/agentry-dev/agentry/loopdetect"
	"github.com/agentry-dev/agentry/plugins/guard"
)

// AgentProtocol is a conversation with an agent, as gemini-cli's agent
// protocol defines it. Each Send that carries a message starts a stream of
// events: message{user}, agent_start, session_update{model}, the model's
// messages and tool calls, usage, and agent_end.
//
// Stream is the one way to follow a stream's events, and what drivers use
// (agentry run, batch, a parent agent's subagent tool). Events is the
// second, kept for looking back: a copy of the session's history so far,
// for commands that read earlier streams (the A2A server's restore lists
// the edits the conversation made) and for tests. A server that follows
// every stream of a session as one live feed uses Session.Subscribe,
// which is not part of the protocol.
type AgentProtocol interface {
	// Send hands the agent a payload. A message starts a new stream whose
	// id is returned before any of that stream's events is emitted; streams
	// of one session run one after another, in Send order. A payload that
	// starts no stream (an update) returns "".
	Send(ctx context.Context, p Send) (streamID string, err error)
	// Stream yields the events of one stream, from its first event (already
	// emitted ones are replayed), and ends after its agent_end. It fails if
	// ctx ends first or the stream is unknown. Replayed events are as
	// Events returns them: a consumer that calls Stream before the
	// stream's agent_end — or after it, when nobody followed the stream
	// live (no subscriber of the session's feed, no other Stream
	// consumer) and no later stream has started, as when a model answers
	// before its caller gets from Send to Stream — gets every event as
	// emitted, every text delta with its own id; otherwise each run of
	// text deltas comes as one merged event, with the same text.
	Stream(ctx context.Context, streamID string) iter.Seq2[Event, error]
	// Abort stops the active stream, and every stream queued behind it, with
	// cause (ErrAborted if nil). The session stays usable for the next Send.
	Abort(cause error)
	// Events returns a copy of every event emitted so far, in the order
	// subscribers saw them, with one difference: once a stream has
	// ended, each run of two or more text deltas of the stream is one
	// event — at its agent_end if anyone followed it live, else once a
	// Stream consumer has replayed it or the next stream starts. A run is consecutive message events of the
	// stream (no other event of the stream between them) with one role,
	// ThreadID and _meta whose parts are all plain text, or all plain
	// thought text (text and thoughts are never merged), without
	// signature, media or part _meta. Its event is the run's first
	// delta — ID, Timestamp, Meta — with a message of one part holding
	// the run's text concatenated; the run's other ids no longer appear.
	// Events of a stream still running are as emitted. A returned copy
	// never changes afterwards.
	Events() []Event
	// Close aborts any work and releases the session's resources.
	Close() error
}

// Send is a payload for AgentProtocol.Send: exactly one of Message and
// Update.
type Send struct {
	Message *SendMessage   `json:"message,omitempty"`
	Update  *SessionUpdate `json:"update,omitempty"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

// SendMessage is a user message.
type SendMessage struct {
	Content []ContentPart `json:"content"`
	// DisplayContent, when set, is what the user typed, shown in the user
	// message event in place of Content (which may have expanded @files).
	DisplayContent string `json:"displayContent,omitempty"`
}

// TextMessage returns a Send carrying one text message.
func TextMessage(text string) Send {
	return Send{Message: &SendMessage{Content: []ContentPart{TextPart(text)}}}
}

// Sentinel errors of the runtime.
var (
	// ErrAborted is the cause of a stream stopped by Abort.
	ErrAborted = errors.New("aborted")
	// ErrMaxTurns is the cause of a stream stopped at its model-call limit.
	ErrMaxTurns = guard.ErrMaxTurns
	// ErrLoopDetected is the cause of a stream stopped by a second loop
	// detection in one prompt. The session stays usable.
	ErrLoopDetected = loopdetect.ErrLoopDetected
	// ErrClosed reports a call on a closed session.
	ErrClosed = errors.New("session closed")
	// ErrInvalidSend reports a malformed Send payload.
	ErrInvalidSend = errors.New("invalid send")
	// ErrUnknownStream reports a stream id the session never issued.
	ErrUnknownStream = errors.New("unknown stream")
	// ErrSetup reports settings that are valid but cannot be used: a
	// workspace directory that does not exist, an unknown tool to exclude.
	ErrSetup = errors.New("cannot set up the session")
)
