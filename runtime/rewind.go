package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/transcript"
)

// ErrNoMessage reports a message id a session's transcript does not hold.
var ErrNoMessage = errors.New("no such message")

// ErrBusy reports an operation that needs the session idle while a stream
// runs.
var ErrBusy = errors.New("session is busy")

// RewindResult says what a rewind kept.
type RewindResult struct {
	// Messages is the number of transcript messages kept.
	Messages int
	// Events is the number of events the rebuilt session holds.
	Events int
}

// Rewind is gemini-cli's /rewind on a stored session: the transcript drops
// message messageID and every message after it (the named message goes
// too), and the session's history is rebuilt from the messages kept —
// prompts as user events, gemini messages as model events whose tool calls
// become function calls followed by their responses, invocation ids
// derived from the prompt each message belongs to. The session's state is
// kept. The history is replaced in one transaction before the transcript
// is cut, so a failure leaves the session as it was.
func Rewind(ctx context.Context, svc session.Service, sessionID, messageID string) (RewindResult, error) {
	store, ok := svc.(RewritableStore)
	if !ok {
		return RewindResult{}, fmt.Errorf("%w: rewind needs the sqlite or postgres session store", ErrSetup)
	}
	sess, err := GetSession(ctx, svc, sessionID)
	if err != nil {
		return RewindResult{}, err
	}
	p, _ := sess.State().Get(StateTranscript)
	path, _ := p.(string)
	if path == "" {
		return RewindResult{}, fmt.Errorf("%w: session %s has no transcript to rewind", ErrNoMessage, sessionID)
	}
	rec, err := transcript.Load(path)
	if err != nil {
		return RewindResult{}, fmt.Errorf("%w: session %s: %w", ErrSetup, sessionID, err)
	}
	keep := -1
	for i, m := range rec.Messages {
		if m.ID == messageID {
			keep = i
			break
		}
	}
	if keep < 0 {
		return RewindResult{}, fmt.Errorf("%w: session %s has no message %q; `agentry sessions show %s` lists the message ids", ErrNoMessage, sessionID, messageID, sessionID)
	}
	events, err := eventsFromMessages(rec.Messages[:keep], "agentry")
	if err != nil {
		return RewindResult{}, fmt.Errorf("session %s: %w", sessionID, err)
	}
	if err := store.ReplaceEvents(ctx, appName, userID, sessionID, events, nil); err != nil {
		return RewindResult{}, err
	}
	w, err := transcript.OpenAppend(path)
	if err == nil {
		err = w.RewindTo(messageID)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return RewindResult{}, fmt.Errorf("session %s: history rewound but the transcript was not: %w", sessionID, err)
	}
	return RewindResult{Messages: keep, Events: len(events)}, nil
}

// Rewind rewinds this session (see the package-level Rewind) while no
// stream runs, and emits session_update so drivers refresh their view.
func (s *Session) Rewind(ctx context.Context, messageID string) (RewindResult, error) {
	// The rewind takes the place of a stream: a Send meanwhile is queued
	// and starts when the rewind is done.
	release, err := s.streams.Hold(ctx)
	if errors.Is(err, ErrBusy) {
		return RewindResult{}, fmt.Errorf("%w: wait for the running prompt to end, or abort it, before rewinding", ErrBusy)
	}
	if err != nil {
		return RewindResult{}, err
	}
	defer release()
	res, err := Rewind(ctx, s.svc, s.cfg.sessionID, messageID)
	if err != nil {
		return res, err
	}
	if s.rec != nil {
		s.rec.Rewound()
	}
	if s.compressor != nil {
		s.compressor.Reset()
	}
	s.historyRewritten()
	st := &stream{id: s.cfg.newID()}
	s.emit(st, Event{Type: EventSessionUpdate, SessionUpdate: &SessionUpdate{
		Model:  s.dispatch.Model(),
		Config: map[string]any{"rewoundTo": messageID, "messages": res.Messages},
	}})
	return res, nil
}

// eventsFromMessages converts transcript messages to session events, as
// gemini-cli converts its ConversationRecord when it rebuilds a session.
// Info, warning and error messages are not part of the model's history
// and are left out; a call without a recorded result is answered as
// cancelled, so the history stays one the model accepts.
func eventsFromMessages(msgs []transcript.Message, agentName string) ([]*session.Event, error) {
	var out []*session.Event
	invocation := "rewind-start"
	for _, m := range msgs {
		ts, err := time.Parse(time.RFC3339Nano, m.Timestamp)
		if err != nil {
			ts = time.Time{}
		}
		parts, err := decodeParts(m.Content)
		if err != nil {
			return nil, fmt.Errorf("message %s: content: %w", m.ID, err)
		}
		switch m.Type {
		case transcript.TypeUser:
			if len(parts) == 0 {
				continue
			}
			invocation = "rewind-" + m.ID
			out = append(out, &session.Event{
				ID: m.ID, InvocationID: invocation, Author: "user", Timestamp: ts,
				LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: parts}},
			})
		case transcript.TypeGemini:
			var responses []*genai.Part
			for _, tc := range m.ToolCalls {
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: tc.Args}})
				responses = append(responses, resultResponse(tc))
			}
			if len(parts) == 0 {
				continue
			}
			meta := map[string]any{}
			if len(m.Thoughts) > 0 {
				meta["agentry:thoughts"] = m.Thoughts
			}
			if m.Tokens != nil {
				meta["agentry:tokens"] = m.Tokens
			}
			ev := &session.Event{
				ID: m.ID, InvocationID: invocation, Author: agentName, Timestamp: ts,
				LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}},
			}
			if len(meta) > 0 {
				ev.CustomMetadata = meta
			}
			out = append(out, ev)
			if len(responses) > 0 {
				out = append(out, &session.Event{
					ID: m.ID + "-responses", InvocationID: invocation, Author: agentName, Timestamp: ts,
					LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: responses}},
				})
			}
		}
	}
	return out, nil
}

// resultResponse is the function response part of a recorded call.
func resultResponse(tc transcript.ToolCall) *genai.Part {
	parts, err := decodeParts(tc.Result)
	if err == nil {
		for _, p := range parts {
			if p.FunctionResponse != nil {
				fr := *p.FunctionResponse
				fr.ID, fr.Name = tc.ID, tc.Name
				return &genai.Part{FunctionResponse: &fr}
			}
		}
	}
	resp := map[string]any{"error": "[Operation Cancelled] the call has no recorded result"}
	if err == nil && len(parts) > 0 && parts[0].Text != "" {
		resp = map[string]any{"output": parts[0].Text}
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: tc.ID, Name: tc.Name, Response: resp}}
}

// decodeParts reads gemini-cli's PartListUnion: an array of parts, one
// part, or a string.
func decodeParts(raw json.RawMessage) ([]*genai.Part, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var out []*genai.Part
		for _, it := range items {
			ps, err := decodeParts(it)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
		return out, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if s == "" {
			return nil, nil
		}
		return []*genai.Part{{Text: s}}, nil
	default:
		var p genai.Part
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		return []*genai.Part{&p}, nil
	}
}
