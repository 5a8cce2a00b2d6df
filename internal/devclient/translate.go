// Package devclient is the client side of gemini-cli's development-tool
// extension (package devtool holds its schemas): a task's A2A updates
// translated back into the runtime events the serving session emitted
// (Translator), a PENDING ToolCall's confirmation request as a
// runtime.ApprovalRequest (ApprovalRequest), and the answer as the
// ToolCallConfirmation the server reads (Confirmation). agentry attach and
// the remote agent use it.
package devclient

import (
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// Translator turns one task's A2A events, in the development-tool
// extension's shapes, back into the runtime events the server's session
// emitted: protocol's translator run in reverse. It keeps each tool
// call's last state, since every update carries the whole call, and
// drops what would go backwards (a PENDING after EXECUTING, anything after
// the task's end): updates reach it over a stream and over notifications.
// It is used by one goroutine at a time.
type Translator struct {
	calls map[string]*callState
	// model is the model the task's updates named last.
	model string
	// state is the task's last state.
	state a2a.TaskState
	// seen is set once the first event is translated: only a first task
	// snapshot's history is the turn so far.
	seen  bool
	ended bool
}

// callState is what the translator knows of a tool call.
type callState struct {
	requested bool // its tool_request went out
	asked     bool // its confirmation request was handed on
	rank      int  // of its status: PENDING 0, EXECUTING 1, ended 2
	live      string
}

// Step is what one A2A event makes.
type Step struct {
	// Events are the runtime events, without ids, stream or time.
	Events []runtime.Event
	// Confirm is a call that now waits for the user's confirmation.
	Confirm *devtool.ToolCall
	// Settled are calls that no longer wait for one: they run or ended
	// (someone answered).
	Settled []string
	// Ended is set when the event ends the turn.
	Ended bool
}

// NewTranslator returns the translator of one task.
func NewTranslator() *Translator { return &Translator{calls: map[string]*callState{}} }

// statusRank orders a call's states.
func statusRank(s devtool.Status) int {
	switch s {
	case devtool.StatusPending:
		return 0
	case devtool.StatusExecuting:
		return 1
	}
	return 2
}

// Event translates one event of the task.
func (t *Translator) Event(ev a2a.Event) Step {
	var s Step
	if t.ended {
		return s
	}
	first := !t.seen
	t.seen = true
	switch e := ev.(type) {
	case *a2a.Task:
		t.noteModel(&s, e.Metadata)
		if first {
			// A client joining mid-turn gets the turn so far as the
			// task, its updates' messages merged into its history.
			done := map[string]bool{}
			for _, m := range e.History {
				if m == nil || m.Role == a2a.MessageRoleUser || done[m.ID] {
					continue
				}
				done[m.ID] = true
				t.parts(&s, "", m.Parts)
			}
			if m := e.Status.Message; m != nil && m.Role != a2a.MessageRoleUser && !done[m.ID] {
				t.parts(&s, "", m.Parts)
			}
			for _, a := range e.Artifacts {
				t.text(&s, a.Parts)
			}
		}
		t.end(&s, e.Status, devtool.Event{})
	case *a2a.TaskStatusUpdateEvent:
		dev, _ := devtool.EventFrom(e.Metadata)
		t.noteModel(&s, e.Metadata)
		if m := e.Status.Message; m != nil && dev.Kind != devtool.KindStateChange {
			t.parts(&s, dev.Kind, m.Parts)
		}
		if dev.Error != "" && e.Status.State == a2a.TaskStateWorking {
			// A warning: the run goes on.
			s.Events = append(s.Events, runtime.Event{Type: runtime.EventError,
				Error: &runtime.ErrorData{Status: runtime.StatusInternal, Message: dev.Error}})
		}
		t.end(&s, e.Status, dev)
	case *a2a.TaskArtifactUpdateEvent:
		if e.Artifact != nil {
			t.text(&s, e.Artifact.Parts)
		}
	case *a2a.Message:
		if e.Role != a2a.MessageRoleUser {
			t.text(&s, e.Parts)
		}
	}
	return s
}

// noteModel emits a session_update when the updates name a new model.
func (t *Translator) noteModel(s *Step, meta map[string]any) {
	dev, ok := devtool.EventFrom(meta)
	if !ok || dev.Model == "" || dev.Model == t.model {
		return
	}
	t.model = dev.Model
	s.Events = append(s.Events, runtime.Event{Type: runtime.EventSessionUpdate, SessionUpdate: &runtime.SessionUpdate{Model: dev.Model}})
}

// parts translates a status message's parts. kind is the update's
// DevelopmentToolEvent kind; "" (a task's history, which keeps messages
// without their updates' metadata) reads each part by its shape.
func (t *Translator) parts(s *Step, kind devtool.EventKind, parts a2a.ContentParts) {
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			s.Events = append(s.Events, agentMessage(runtime.TextPart(text.String())))
			text.Reset()
		}
	}
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			if kind == devtool.KindThought {
				flush()
				s.Events = append(s.Events, agentMessage(runtime.ContentPart{Type: runtime.PartThought, Thought: string(c)}))
				continue
			}
			text.WriteString(string(c))
		case a2a.Data:
			m, _ := c.Value.(map[string]any)
			switch {
			case kind == devtool.KindToolCallUpdate || kind == devtool.KindToolCallConfirmation || (kind == "" && m["tool_call_id"] != nil):
				flush()
				if tc, ok := toolCallOf(m); ok {
					t.toolCall(s, tc)
				}
			case kind == devtool.KindThought || (kind == "" && (m["subject"] != nil || m["description"] != nil)):
				flush()
				if th := thoughtText(m); th != "" {
					s.Events = append(s.Events, agentMessage(runtime.ContentPart{Type: runtime.PartThought, Thought: th}))
				}
			}
		}
	}
	flush()
}

// text emits the text parts of an artifact or a message.
func (t *Translator) text(s *Step, parts a2a.ContentParts) {
	var b strings.Builder
	for _, p := range parts {
		if p != nil {
			b.WriteString(p.Text())
		}
	}
	if b.Len() > 0 {
		s.Events = append(s.Events, agentMessage(runtime.TextPart(b.String())))
	}
}

func agentMessage(p runtime.ContentPart) runtime.Event {
	return runtime.Event{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleAgent, Content: []runtime.ContentPart{p}}}
}

// thoughtText is an AgentThought as the model wrote it: gemini-cli's
// "**Subject**" line, then the description.
func thoughtText(m map[string]any) string {
	subject, _ := m["subject"].(string)
	desc, _ := m["description"].(string)
	subject, desc = strings.TrimSpace(subject), strings.TrimSpace(desc)
	switch {
	case subject == "":
		return desc
	case desc == "":
		return "**" + subject + "**"
	}
	return "**" + subject + "**\n" + desc
}

// toolCallOf reads a ToolCall data part.
func toolCallOf(m map[string]any) (devtool.ToolCall, bool) {
	var tc devtool.ToolCall
	b, err := json.Marshal(m)
	if err != nil || json.Unmarshal(b, &tc) != nil || tc.ToolCallID == "" {
		return tc, false
	}
	return tc, true
}

// toolCall translates a ToolCall update: the first update of a call is
// its tool_request; EXECUTING is a tool_update with the new live output;
// SUCCEEDED, FAILED and CANCELLED are its tool_response.
func (t *Translator) toolCall(s *Step, tc devtool.ToolCall) {
	c := t.calls[tc.ToolCallID]
	if c == nil {
		c = &callState{}
		t.calls[tc.ToolCallID] = c
	}
	rank := statusRank(tc.Status)
	if rank < c.rank || c.rank == 2 {
		return // an older update, or one after the end
	}
	if !c.requested {
		c.requested = true
		req := &runtime.ToolRequest{RequestID: tc.ToolCallID, Name: tc.ToolName, Args: tc.InputParameters}
		if req.Args == nil {
			req.Args = map[string]any{}
		}
		if tc.Description != "" {
			req.Display = &runtime.ToolDisplay{Description: tc.Description}
		}
		s.Events = append(s.Events, runtime.Event{Type: runtime.EventToolRequest, ToolRequest: req})
	}
	if rank > 0 {
		s.Settled = append(s.Settled, tc.ToolCallID)
	}
	delta := liveDelta(c.live, tc.LiveContent)
	if tc.LiveContent != "" {
		c.live = tc.LiveContent
	}
	switch {
	case rank == 0:
		if tc.ConfirmationRequest != nil && !c.asked {
			c.asked = true
			call := tc
			s.Confirm = &call
		}
	case rank == 1:
		if c.rank == 0 || delta != "" {
			u := &runtime.ToolUpdate{RequestID: tc.ToolCallID}
			if delta != "" {
				u.Content = []runtime.ContentPart{runtime.TextPart(delta)}
			}
			s.Events = append(s.Events, runtime.Event{Type: runtime.EventToolUpdate, ToolUpdate: u})
		}
	default:
		if delta != "" {
			s.Events = append(s.Events, runtime.Event{Type: runtime.EventToolUpdate,
				ToolUpdate: &runtime.ToolUpdate{RequestID: tc.ToolCallID, Content: []runtime.ContentPart{runtime.TextPart(delta)}}})
		}
		s.Events = append(s.Events, runtime.Event{Type: runtime.EventToolResponse, ToolResponse: toolResponse(tc)})
	}
	c.rank = rank
}

// toolResponse is an ended call's result.
func toolResponse(tc devtool.ToolCall) *runtime.ToolResponse {
	r := &runtime.ToolResponse{RequestID: tc.ToolCallID, Name: tc.ToolName}
	if tc.Status != devtool.StatusSucceeded {
		r.IsError = true
		msg, errType := "", ""
		if tc.Error != nil {
			msg, errType = tc.Error.Message, tc.Error.Type
		}
		if tc.Status == devtool.StatusCancelled {
			errType = string(tools.ErrCancelled)
			if msg == "" {
				msg = "The tool call was cancelled."
			}
		}
		if msg != "" {
			r.Content = []runtime.ContentPart{runtime.TextPart(msg)}
		}
		if errType != "" {
			r.Data = map[string]any{"errorType": errType}
		}
		return r
	}
	o := tc.Output
	switch {
	case o == nil:
	case o.Diff != nil:
		d := o.Diff
		before := ""
		if d.OldContent != nil {
			before = *d.OldContent
		}
		r.Display = &runtime.ToolDisplay{Result: &runtime.DisplayContent{Type: "diff", Path: d.FilePath, BeforeText: before, AfterText: d.NewContent}}
		r.Data = map[string]any{"isNewFile": d.OldContent == nil}
	case o.StructuredData != nil:
		b, _ := json.Marshal(o.StructuredData)
		r.Content = []runtime.ContentPart{runtime.TextPart(string(b))}
		r.Data = map[string]any{"structuredContent": o.StructuredData}
	case o.Text != nil:
		r.Content = []runtime.ContentPart{runtime.TextPart(*o.Text)}
	}
	return r
}

// liveDelta is the output a call's live_content gained since old. The
// server resends the whole output on every update, keeping only its last
// 64 KiB: once it is cut at the front, the new output is what follows the
// longest end of old that new starts with. Periodic output can make that
// ambiguous; then some lines may show twice or not at all, which only
// the live view shows.
func liveDelta(old, cur string) string {
	switch {
	case cur == "":
		return ""
	case strings.HasPrefix(cur, old):
		return cur[len(old):]
	}
	const anchorLen, tries = 256, 64
	anchor := old[max(0, len(old)-anchorLen):]
	limit := min(len(cur), len(old))
	for range tries {
		i := strings.LastIndex(cur[:limit], anchor)
		if i < 0 {
			break
		}
		end := i + len(anchor)
		if strings.HasSuffix(old, cur[:end]) {
			return cur[end:]
		}
		limit = end - 1
	}
	return cur
}

// end handles a task's state: the turn ends completed, aborted (the task
// was cancelled) or failed (with a fatal error event); input-required
// waits for an answer and ends nothing.
func (t *Translator) end(s *Step, st a2a.TaskStatus, dev devtool.Event) {
	if st.State != a2a.TaskStateUnspecified {
		t.state = st.State
	}
	var reason runtime.EndReason
	switch st.State {
	case a2a.TaskStateCompleted:
		reason = runtime.EndCompleted
	case a2a.TaskStateCanceled:
		reason = runtime.EndAborted
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		reason = runtime.EndFailed
		msg := dev.Error
		if msg == "" && st.Message != nil {
			var b strings.Builder
			for _, p := range st.Message.Parts {
				if p != nil {
					b.WriteString(p.Text())
				}
			}
			msg = b.String()
		}
		if msg == "" {
			msg = "the task " + StateName(st.State)
		}
		s.Events = append(s.Events, runtime.Event{Type: runtime.EventError,
			Error: &runtime.ErrorData{Status: runtime.StatusInternal, Message: msg, Fatal: true}})
	default:
		return
	}
	s.Events = append(s.Events, runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: reason,
		Data: map[string]any{"taskState": StateName(st.State)}}})
	s.Ended = true
	t.ended = true
}

// StateName is a state as A2A 0.3 and gemini-cli spell it:
// "completed", "input-required".
func StateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// Ended reports whether the task's end has been translated: later events
// make nothing.
func (t *Translator) Ended() bool { return t.ended }

// End marks the task ended when the client ends the turn itself (an
// answer without a task, a lost connection): later events make nothing.
func (t *Translator) End() { t.ended = true }

// Running reports whether the task has started and not ended.
func (t *Translator) Running() bool {
	switch t.state {
	case a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return !t.ended
	}
	return false
}
