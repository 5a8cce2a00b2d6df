package wsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// The server's notification methods.
const (
	// MethodEvent carries an event of a turn the client did not start.
	MethodEvent = "session/event"
	// MethodAttached says which session the connection follows.
	MethodAttached = "session/attached"
)

// Notification is a frame the server sends without a request.
type Notification struct {
	// Method is MethodEvent, MethodAttached, or a method this client does
	// not know (then only Params is set).
	Method string
	// Params are the notification's params as sent.
	Params json.RawMessage
	// EventID is a session/event's place in the session.
	EventID int64
	// RawEvent is a session/event's event as sent.
	RawEvent json.RawMessage
	// Event is RawEvent decoded by DecodeEvent; nil when it does not
	// decode (RawEvent still holds it).
	Event a2a.Event
	// Attached is session/attached's params.
	Attached *Attached
}

// Attached is session/attached: the session the connection follows.
type Attached struct {
	ContextID string `json:"contextId"`
	// TaskID is the session's active turn, "" when it is idle.
	TaskID string `json:"taskId"`
	// LastEventID is the session's last event when the connection
	// attached.
	LastEventID int64 `json:"lastEventId"`
	// Replayed counts the retained events sent again after a reconnect.
	Replayed int `json:"replayed"`
	// Gap is set when events after the client's lastEventId were no
	// longer retained: the active turn comes as a task instead.
	Gap bool `json:"gap"`
}

// notification reads a notification frame.
func (c *Conn) notification(f wireFrame) (Notification, error) {
	n := Notification{Method: f.Method, Params: f.Params}
	switch f.Method {
	case MethodEvent:
		var p struct {
			EventID int64           `json:"eventId"`
			Event   json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			return n, fmt.Errorf("%w: %s: %w", errNotJSONRPC, f.Method, err)
		}
		n.EventID, n.RawEvent = p.EventID, p.Event
		if p.EventID > 0 {
			c.noteEventID(p.EventID)
		}
		ev, err := DecodeEvent(p.Event)
		if err != nil {
			c.log.Debug("wsclient: an event that does not decode", "eventId", p.EventID, "err", err)
		}
		n.Event = ev
	case MethodAttached:
		var a Attached
		if err := json.Unmarshal(f.Params, &a); err != nil {
			return n, fmt.Errorf("%w: %s: %w", errNotJSONRPC, f.Method, err)
		}
		n.Attached = &a
		c.noteEventID(a.LastEventID)
	}
	return n, nil
}

// Events yields the server's notifications in the order they came, until
// the connection ends: after Close it just stops; otherwise its last
// item is the connection's error. Range over it for the connection's
// life, from one goroutine: notifications nobody takes wait in a queue of
// Options.MaxQueued, and a full queue closes the connection
// (ErrFellBehind).
func (c *Conn) Events() iter.Seq2[Notification, error] {
	return func(yield func(Notification, error) bool) {
		for {
			// The queue ends with the connection, with its error.
			n, ok, err := c.notes.pop(context.Background())
			if !ok {
				if err != nil && !errors.Is(err, ErrClosed) {
					yield(Notification{}, err)
				}
				return
			}
			if !yield(n, nil) {
				return
			}
		}
	}
}

// DecodeEvent decodes an event payload: A2A 1.0's StreamResponse
// ({"task":…}, {"message":…}, {"statusUpdate":…}, {"artifactUpdate":…}),
// or A2A 0.3's event with its "kind" (what version=0.3 asks the server
// for), converted to 1.0's types.
func DecodeEvent(raw json.RawMessage) (a2a.Event, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("wsclient: the event is not a JSON object")
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Kind != "" {
		legacy, err := a2alegacy.UnmarshalEventJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("wsclient: an A2A 0.3 event: %w", err)
		}
		return a2av0.ToV1Event(legacy)
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(raw, &sr); err != nil {
		return nil, fmt.Errorf("wsclient: %w", err)
	}
	return sr.Event, nil
}

// Final reports whether ev ends the stream of the request it answers: a
// task or status in a final state (completed, failed, canceled, rejected)
// or waiting for the caller (input-required, auth-required), or a message
// (an answer without a task).
func Final(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.Task:
		return finalState(e.Status.State)
	case *a2a.TaskStatusUpdateEvent:
		return finalState(e.Status.State)
	case *a2a.Message:
		return true
	}
	return false
}

func finalState(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}
