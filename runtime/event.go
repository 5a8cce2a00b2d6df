package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// EventType is the type of a protocol event.
type EventType string

// The event types of the agent protocol, with gemini-cli's spelling.
const (
	EventInitialize    EventType = "initialize"
	EventSessionUpdate EventType = "session_update"
	EventMessage       EventType = "message"
	EventAgentStart    EventType = "agent_start"
	EventAgentEnd      EventType = "agent_end"
	EventToolRequest   EventType = "tool_request"
	EventToolUpdate    EventType = "tool_update"
	EventToolResponse  EventType = "tool_response"
	EventUsage         EventType = "usage"
	EventError         EventType = "error"
	EventCustom        EventType = "custom"
)

// Event is one protocol event. The common fields are set on every event;
// exactly one payload pointer, the one matching Type, is set (agent_start
// has none). It serialises to gemini-cli's flat JSON shape: the common
// fields and the payload's fields in one object.
type Event struct {
	// ID is "<StreamID>-<n>", n counting the stream's events from 0.
	ID string
	// StreamID identifies the stream (one Send's activity) of the event.
	StreamID string
	// ThreadID identifies a subagent thread; empty on the main thread.
	ThreadID string
	// Timestamp is when the event was emitted.
	Timestamp time.Time
	// Type names the payload.
	Type EventType
	// Meta is free-form metadata (gemini-cli's _meta).
	Meta map[string]any

	Initialize    *Initialize
	SessionUpdate *SessionUpdate
	Message       *Message
	AgentEnd      *AgentEnd
	ToolRequest   *ToolRequest
	ToolUpdate    *ToolUpdate
	ToolResponse  *ToolResponse
	Usage         *Usage
	Error         *ErrorData
	Custom        *Custom
}

// Initialize binds a session to its id, workspace and agent. It is the first
// event of a session.
type Initialize struct {
	SessionID    string         `json:"sessionId"`
	Workspace    string         `json:"workspace"`
	AgentID      string         `json:"agentId"`
	ConfigSchema map[string]any `json:"configSchema,omitempty"`
}

// SessionUpdate reports a change of the session's title, model or config.
type SessionUpdate struct {
	Title  string         `json:"title,omitempty"`
	Model  string         `json:"model,omitempty"`
	Config map[string]any `json:"config,omitempty"`
}

// Role is the author of a message.
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAgent     Role = "agent"
	RoleDeveloper Role = "developer"
)

// Message is content from the user, the agent or the developer. An agent
// message streamed from the model carries one delta.
type Message struct {
	Role    Role          `json:"role"`
	Content []ContentPart `json:"content"`
}

// EndReason says why a stream ended.
type EndReason string

// Stream end reasons.
const (
	EndCompleted   EndReason = "completed"
	EndFailed      EndReason = "failed"
	EndAborted     EndReason = "aborted"
	EndMaxTurns    EndReason = "max_turns"
	EndMaxBudget   EndReason = "max_budget"
	EndMaxTime     EndReason = "max_time"
	EndRefusal     EndReason = "refusal"
	EndElicitation EndReason = "elicitation"
)

// AgentEnd ends a stream.
type AgentEnd struct {
	Reason         EndReason      `json:"reason"`
	ElicitationIDs []string       `json:"elicitationIds,omitempty"`
	Data           map[string]any `json:"data,omitempty"`
}

// ToolRequest is a tool call issued by the agent.
type ToolRequest struct {
	RequestID string         `json:"requestId"`
	Name      string         `json:"name"`
	Display   *ToolDisplay   `json:"display,omitempty"`
	Args      map[string]any `json:"args"`
}

// ToolUpdate is intermediate progress of a running tool call, such as a
// shell command's output. It never changes what the model receives.
type ToolUpdate struct {
	RequestID string         `json:"requestId"`
	Display   *ToolDisplay   `json:"display,omitempty"`
	Content   []ContentPart  `json:"content,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
}

// ToolResponse is the result of a tool call.
type ToolResponse struct {
	RequestID string         `json:"requestId"`
	Name      string         `json:"name"`
	Display   *ToolDisplay   `json:"display,omitempty"`
	Content   []ContentPart  `json:"content,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
	IsError   bool           `json:"isError,omitempty"`
}

// ToolDisplay is tool-controlled display information.
type ToolDisplay struct {
	Name          string          `json:"name,omitempty"`
	Description   string          `json:"description,omitempty"`
	ResultSummary string          `json:"resultSummary,omitempty"`
	Result        *DisplayContent `json:"result,omitempty"`
	Format        string          `json:"format,omitempty"`
}

// DisplayContent is one of text, diff, terminal or agent display content.
type DisplayContent struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Path       string `json:"path,omitempty"`
	BeforeText string `json:"beforeText,omitempty"`
	AfterText  string `json:"afterText,omitempty"`
	PID        string `json:"pid,omitempty"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	ThreadID   string `json:"threadId,omitempty"`
}

// Usage reports the tokens of one model call.
type Usage struct {
	Model        string `json:"model"`
	InputTokens  *int   `json:"inputTokens,omitempty"`
	OutputTokens *int   `json:"outputTokens,omitempty"`
	CachedTokens *int   `json:"cachedTokens,omitempty"`
	Cost         *Cost  `json:"cost,omitempty"`
}

// Cost is a monetary cost.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency,omitempty"`
}

// ErrorData reports an error. Status is a google.rpc.Code name.
type ErrorData struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	// Fatal is true when the stream is ending because of the error.
	Fatal bool `json:"fatal"`
}

// Custom carries what no other event type covers.
type Custom struct {
	Kind string         `json:"kind"`
	Data map[string]any `json:"data,omitempty"`
}

// ContentPart is one piece of message content: text, a thought, media or a
// reference. Type selects which fields apply.
type ContentPart struct {
	Type             string         `json:"type"`
	Text             string         `json:"text,omitempty"`
	Thought          string         `json:"thought,omitempty"`
	ThoughtSignature string         `json:"thoughtSignature,omitempty"`
	Data             string         `json:"data,omitempty"`
	URI              string         `json:"uri,omitempty"`
	MimeType         string         `json:"mimeType,omitempty"`
	Meta             map[string]any `json:"_meta,omitempty"`
}

// Content part types.
const (
	PartText      = "text"
	PartThought   = "thought"
	PartMedia     = "media"
	PartReference = "reference"
)

// TextPart returns a text content part.
func TextPart(text string) ContentPart { return ContentPart{Type: PartText, Text: text} }

// MarshalJSON writes the required field of each part type even when empty,
// so {"type":"text","text":""} round-trips.
func (p ContentPart) MarshalJSON() ([]byte, error) {
	type plain ContentPart
	b, err := marshalJSON(plain(p))
	if err != nil {
		return nil, err
	}
	switch {
	case p.Type == PartText && p.Text == "":
		return spliceField(b, "text", `""`), nil
	case p.Type == PartThought && p.Thought == "":
		return spliceField(b, "thought", `""`), nil
	}
	return b, nil
}

// spliceField appends "name":raw to the JSON object b.
func spliceField(b []byte, name, raw string) []byte {
	out := make([]byte, 0, len(b)+len(name)+len(raw)+4)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	out = append(out, raw...)
	return append(out, '}')
}

// timestampLayout is JavaScript's Date.toISOString format.
const timestampLayout = "2006-01-02T15:04:05.000Z"

func (e *Event) payload() any {
	switch e.Type {
	case EventInitialize:
		return e.Initialize
	case EventSessionUpdate:
		return e.SessionUpdate
	case EventMessage:
		return e.Message
	case EventAgentEnd:
		return e.AgentEnd
	case EventToolRequest:
		return e.ToolRequest
	case EventToolUpdate:
		return e.ToolUpdate
	case EventToolResponse:
		return e.ToolResponse
	case EventUsage:
		return e.Usage
	case EventError:
		return e.Error
	case EventCustom:
		return e.Custom
	}
	return nil
}

// MarshalJSON writes the event in gemini-cli's flat shape:
// {"id","streamId","threadId"?,"timestamp","type", payload fields…, "_meta"?}.
func (e Event) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(256)
	buf.WriteString(`{"id":`)
	writeJSONString(&buf, e.ID)
	buf.WriteString(`,"streamId":`)
	writeJSONString(&buf, e.StreamID)
	if e.ThreadID != "" {
		buf.WriteString(`,"threadId":`)
		writeJSONString(&buf, e.ThreadID)
	}
	buf.WriteString(`,"timestamp":"`)
	buf.WriteString(e.Timestamp.UTC().Format(timestampLayout))
	buf.WriteString(`","type":`)
	writeJSONString(&buf, string(e.Type))
	if p := e.payload(); p != nil && !isNilPointer(p) {
		b, err := marshalJSON(p)
		if err != nil {
			return nil, fmt.Errorf("marshal %s event: %w", e.Type, err)
		}
		if len(b) > 2 { // not "{}"
			buf.WriteByte(',')
			buf.Write(b[1 : len(b)-1])
		}
	} else if e.Type != EventAgentStart {
		return nil, fmt.Errorf("marshal %s event: missing payload", e.Type)
	}
	if len(e.Meta) > 0 {
		b, err := marshalJSON(e.Meta)
		if err != nil {
			return nil, fmt.Errorf("marshal %s event _meta: %w", e.Type, err)
		}
		buf.WriteString(`,"_meta":`)
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := marshalJSON(s) // a string always marshals
	buf.Write(b)
}

// marshalJSON encodes v without escaping <, > and &, as JavaScript's
// JSON.stringify does, so agentry's output matches gemini-cli's byte for
// byte. Event output goes to terminals and files, never into HTML.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func isNilPointer(p any) bool {
	switch v := p.(type) {
	case *Initialize:
		return v == nil
	case *SessionUpdate:
		return v == nil
	case *Message:
		return v == nil
	case *AgentEnd:
		return v == nil
	case *ToolRequest:
		return v == nil
	case *ToolUpdate:
		return v == nil
	case *ToolResponse:
		return v == nil
	case *Usage:
		return v == nil
	case *ErrorData:
		return v == nil
	case *Custom:
		return v == nil
	}
	return false
}

// UnmarshalJSON reads an event written by MarshalJSON or by gemini-cli.
func (e *Event) UnmarshalJSON(data []byte) error {
	var common struct {
		ID        string         `json:"id"`
		StreamID  string         `json:"streamId"`
		ThreadID  string         `json:"threadId"`
		Timestamp string         `json:"timestamp"`
		Type      EventType      `json:"type"`
		Meta      map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(data, &common); err != nil {
		return err
	}
	ts, err := time.Parse(time.RFC3339Nano, common.Timestamp)
	if err != nil {
		return fmt.Errorf("event %q: bad timestamp: %w", common.ID, err)
	}
	*e = Event{ID: common.ID, StreamID: common.StreamID, ThreadID: common.ThreadID, Timestamp: ts, Type: common.Type, Meta: common.Meta}
	var target any
	switch e.Type {
	case EventAgentStart:
		return nil
	case EventInitialize:
		e.Initialize = &Initialize{}
		target = e.Initialize
	case EventSessionUpdate:
		e.SessionUpdate = &SessionUpdate{}
		target = e.SessionUpdate
	case EventMessage:
		e.Message = &Message{}
		target = e.Message
	case EventAgentEnd:
		e.AgentEnd = &AgentEnd{}
		target = e.AgentEnd
	case EventToolRequest:
		e.ToolRequest = &ToolRequest{}
		target = e.ToolRequest
	case EventToolUpdate:
		e.ToolUpdate = &ToolUpdate{}
		target = e.ToolUpdate
	case EventToolResponse:
		e.ToolResponse = &ToolResponse{}
		target = e.ToolResponse
	case EventUsage:
		e.Usage = &Usage{}
		target = e.Usage
	case EventError:
		e.Error = &ErrorData{}
		target = e.Error
	case EventCustom:
		e.Custom = &Custom{}
		target = e.Custom
	default:
		return fmt.Errorf("event %q: unknown type %q", e.ID, e.Type)
	}
	return json.Unmarshal(data, target)
}
