package protocol

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// maxLiveContent bounds a ToolCall's live_content: the whole output is
// resent on every update, so a chatty command would otherwise make each
// update larger than the last. The tail is what a user watches.
const maxLiveContent = 64 << 10

// translator turns one task's runtime events into A2A status updates
// carrying the development-tool extension's schemas. It keeps every tool
// call's current state, since the extension sends the whole ToolCall on
// every update. It is used by one goroutine at a time.
type translator struct {
	info  a2a.TaskInfo
	model string
	now   func() time.Time

	calls map[string]*devtool.ToolCall
	// announced marks calls whose PENDING update went out. A call is
	// announced when its fate is known — it waits for the user (PENDING
	// with the confirmation request, as the extension's example flow
	// shows), starts, or fails — so each call has one PENDING update.
	announced map[string]bool
	// denied marks calls the client cancelled: their error response is
	// reported CANCELLED, not FAILED.
	denied map[string]bool
	// lastError is the message of the last error event, for a failed end.
	lastError string
	// meta caches the metadata of each kind for metaModel: updates share
	// these maps, which nobody modifies, instead of building two per
	// update.
	meta      map[devtool.EventKind]map[string]any
	metaModel string
	// at, when set, stamps the updates being built: the emission time of
	// the runtime event they come from, so a status timestamp says when
	// the agent did it, not when the update was written.
	at time.Time
}

func newTranslator(info a2a.TaskInfo, model string, now func() time.Time) *translator {
	return &translator{info: info, model: model, now: now,
		calls: map[string]*devtool.ToolCall{}, announced: map[string]bool{}, denied: map[string]bool{}}
}

// status builds a status update of kind whose message, unless content
// is nil, is one part of content. It is stamped now or, while translating
// a runtime event, with the time the session emitted it.
func (t *translator) status(state a2a.TaskState, kind devtool.EventKind, errText string, content a2a.PartContent) *a2a.TaskStatusUpdateEvent {
	// One allocation for the update, its timestamp, message and part: a
	// streamed answer makes one update per delta, and the garbage
	// collector's work grows with the number of objects.
	u := &update{}
	u.ts = t.at
	if u.ts.IsZero() {
		u.ts = t.now()
	}
	u.ev = a2a.TaskStatusUpdateEvent{
		TaskID: t.info.TaskID, ContextID: t.info.ContextID,
		Status:   a2a.TaskStatus{State: state, Timestamp: &u.ts},
		Metadata: t.metadata(kind, errText),
	}
	if content != nil {
		u.part.Content = content
		u.parts[0] = &u.part
		u.msg = a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent, Parts: u.parts[:], TaskID: t.info.TaskID, ContextID: t.info.ContextID}
		u.ev.Status.Message = &u.msg
	}
	return &u.ev
}

// update is a status update with what it points to.
type update struct {
	ev    a2a.TaskStatusUpdateEvent
	ts    time.Time
	msg   a2a.Message
	part  a2a.Part
	parts [1]*a2a.Part
}

// metadata returns an update's metadata.
func (t *translator) metadata(kind devtool.EventKind, errText string) map[string]any {
	if errText != "" {
		return devtool.Metadata(devtool.Event{Kind: kind, Model: t.model, Error: errText})
	}
	if t.meta == nil || t.metaModel != t.model {
		t.meta, t.metaModel = map[devtool.EventKind]map[string]any{}, t.model
	}
	m := t.meta[kind]
	if m == nil {
		m = devtool.Metadata(devtool.Event{Kind: kind, Model: t.model})
		t.meta[kind] = m
	}
	return m
}

// stateChange is a STATE_CHANGE update, optionally with a text message.
func (t *translator) stateChange(state a2a.TaskState, text, errText string) *a2a.TaskStatusUpdateEvent {
	if text == "" {
		return t.status(state, devtool.KindStateChange, errText, nil)
	}
	return t.status(state, devtool.KindStateChange, errText, a2a.Text(text))
}

func (t *translator) text(s string) *a2a.TaskStatusUpdateEvent {
	return t.status(a2a.TaskStateWorking, devtool.KindTextContent, "", a2a.Text(s))
}

func (t *translator) thought(s string) *a2a.TaskStatusUpdateEvent {
	th := thoughtOf(s)
	return t.status(a2a.TaskStateWorking, devtool.KindThought, "",
		a2a.Data{Value: map[string]any{"subject": th.Subject, "description": th.Description}})
}

func (t *translator) toolUpdate(tc *devtool.ToolCall) *a2a.TaskStatusUpdateEvent {
	return t.status(a2a.TaskStateWorking, devtool.KindToolCallUpdate, "", a2a.Data{Value: tc.Map()})
}

// thoughtOf splits a model thought into gemini-cli's subject and
// description: a leading **bold** line is the subject.
func thoughtOf(s string) devtool.AgentThought {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "**") {
		if end := strings.Index(s[2:], "**"); end >= 0 {
			return devtool.AgentThought{Subject: strings.TrimSpace(s[2 : 2+end]), Description: strings.TrimSpace(s[4+end:])}
		}
	}
	return devtool.AgentThought{Description: s}
}

// event translates one runtime event. Text deltas are merged by the
// caller before they get here; the result may be empty.
func (t *translator) event(ev runtime.Event) []a2a.Event {
	switch ev.Type {
	case runtime.EventSessionUpdate:
		if ev.SessionUpdate.Model != "" {
			t.model = ev.SessionUpdate.Model
		}
	case runtime.EventMessage:
		if ev.Message.Role != runtime.RoleAgent {
			return nil
		}
		var out []a2a.Event
		var text strings.Builder
		for _, p := range ev.Message.Content {
			switch p.Type {
			case runtime.PartThought:
				out = append(out, t.thought(p.Thought))
			case runtime.PartText:
				text.WriteString(p.Text)
			}
		}
		if text.Len() > 0 {
			out = append(out, t.text(text.String()))
		}
		return out
	case runtime.EventToolRequest:
		r := ev.ToolRequest
		tc := &devtool.ToolCall{ToolCallID: r.RequestID, Status: devtool.StatusPending, ToolName: r.Name, InputParameters: r.Args}
		if r.Display != nil {
			tc.Description = r.Display.Description
		}
		t.calls[r.RequestID] = tc
		return nil
	case runtime.EventToolUpdate:
		return t.liveOutput(ev)
	case runtime.EventToolResponse:
		return t.toolResponse(ev.ToolResponse)
	case runtime.EventError:
		t.lastError = ev.Error.Message
		if !ev.Error.Fatal {
			// A warning: the run goes on. It reaches the client as the
			// extension's error field on a working update.
			return []a2a.Event{t.stateChange(a2a.TaskStateWorking, "", ev.Error.Message)}
		}
	}
	return nil
}

// liveOutput appends a running call's output to its live_content. A
// subagent's events arrive as the invoke_agent call's updates; its text
// is what the user watches.
func (t *translator) liveOutput(ev runtime.Event) []a2a.Event {
	u := ev.ToolUpdate
	if child, ok := u.Data["event"].(*runtime.Event); ok && child.Type == runtime.EventToolResponse {
		if _, asked := t.calls[child.ToolResponse.RequestID]; asked {
			// The result of a subagent's call the client confirmed.
			return t.toolResponse(child.ToolResponse)
		}
	}
	tc := t.calls[u.RequestID]
	if tc == nil {
		return nil
	}
	var chunk strings.Builder
	for _, p := range u.Content {
		if p.Type == runtime.PartText {
			chunk.WriteString(p.Text)
		}
	}
	if child, ok := u.Data["event"].(*runtime.Event); ok && child.Type == runtime.EventMessage && child.Message.Role == runtime.RoleAgent {
		for _, p := range child.Message.Content {
			if p.Type == runtime.PartText {
				chunk.WriteString(p.Text)
			}
		}
	}
	if chunk.Len() == 0 {
		return nil
	}
	live := tc.LiveContent + chunk.String()
	if len(live) > maxLiveContent {
		live = live[len(live)-maxLiveContent:]
	}
	tc.LiveContent = live
	tc.Status = devtool.StatusExecuting
	return []a2a.Event{t.toolUpdate(tc)}
}

// announce returns the call's PENDING update if it has not gone out.
func (t *translator) announce(tc *devtool.ToolCall) []a2a.Event {
	if t.announced[tc.ToolCallID] {
		return nil
	}
	t.announced[tc.ToolCallID] = true
	st := tc.Status
	tc.Status = devtool.StatusPending
	ev := t.toolUpdate(tc)
	tc.Status = st
	return []a2a.Event{ev}
}

// executing marks a call as running.
func (t *translator) executing(callID string) []a2a.Event {
	tc := t.calls[callID]
	if tc == nil {
		return nil
	}
	out := t.announce(tc)
	tc.Status = devtool.StatusExecuting
	tc.ConfirmationRequest = nil
	return append(out, t.toolUpdate(tc))
}

func (t *translator) toolResponse(r *runtime.ToolResponse) []a2a.Event {
	tc := t.calls[r.RequestID]
	if tc == nil {
		tc = &devtool.ToolCall{ToolCallID: r.RequestID, ToolName: r.Name, InputParameters: map[string]any{}}
		t.calls[r.RequestID] = tc
	}
	defer delete(t.calls, r.RequestID)
	defer delete(t.announced, r.RequestID)
	out := t.announce(tc)
	tc.ConfirmationRequest = nil
	var text strings.Builder
	for _, p := range r.Content {
		if p.Type == runtime.PartText {
			text.WriteString(p.Text)
		}
	}
	if r.IsError {
		errType, _ := r.Data["errorType"].(string)
		tc.Status = devtool.StatusFailed
		if t.denied[r.RequestID] || errType == string(tools.ErrCancelled) {
			tc.Status = devtool.StatusCancelled
		}
		delete(t.denied, r.RequestID)
		tc.Error = &devtool.ErrorDetails{Message: text.String(), Type: errType}
		return append(out, t.toolUpdate(tc))
	}
	tc.Status = devtool.StatusSucceeded
	tc.LiveContent = ""
	switch {
	case r.Display != nil && r.Display.Result != nil && r.Display.Result.Type == "diff":
		d := r.Display.Result
		isNew, _ := r.Data["isNewFile"].(bool)
		tc.Output = &devtool.ToolOutput{Diff: fileDiff(d.Path, d.BeforeText, d.AfterText, !isNew)}
	case structuredOf(r.Data) != nil:
		// An MCP tool's structured result; its text is the same JSON
		// serialised, which a client gets whole here.
		tc.Output = &devtool.ToolOutput{StructuredData: structuredOf(r.Data)}
	default:
		s := text.String()
		tc.Output = &devtool.ToolOutput{Text: &s}
	}
	return append(out, t.toolUpdate(tc))
}

// structuredOf returns an MCP tool result's structured content (see
// mcptools) as a JSON object, or nil.
func structuredOf(data map[string]any) map[string]any {
	v, ok := data["structuredContent"]
	if !ok || v == nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	// Any other Go value the SDK decoded: as the JSON it stands for.
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil // not an object: the text output carries it
	}
	return m
}

// fileDiff builds the extension's FileDiff with a unified diff for
// display.
func fileDiff(path, before, after string, existed bool) *devtool.FileDiff {
	fd := &devtool.FileDiff{FileName: filepath.Base(path), FilePath: path, NewContent: after}
	if existed {
		fd.OldContent = &before
	}
	fd.FormattedDiff = tools.UnifiedDiff(fd.FileName, before, after)
	return fd
}

// confirmation marks a call as waiting for the user and returns its
// update, with the options and details the extension defines.
func (t *translator) confirmation(req runtime.ApprovalRequest, workDir string) []a2a.Event {
	tc := t.calls[req.CallID]
	if tc == nil {
		// A subagent's call: the parent has not seen it. Its display
		// name is "<agent> › <tool>"; the description says which agent
		// asks.
		tc = &devtool.ToolCall{ToolCallID: req.CallID, ToolName: req.Tool, InputParameters: req.Args, Description: req.Description}
		if agent, _, ok := strings.Cut(req.DisplayName, " › "); ok {
			tc.Description = agent + " › " + req.Description
		}
		t.calls[req.CallID] = tc
	}
	tc.Status = devtool.StatusPending
	if tc.Description == "" {
		tc.Description = req.Description
	}
	tc.ConfirmationRequest = confirmationRequest(req, workDir)
	t.announced[req.CallID] = true
	return []a2a.Event{t.toolUpdate(tc)}
}

// confirmationRequest describes what the user is asked to allow.
func confirmationRequest(req runtime.ApprovalRequest, workDir string) *devtool.ConfirmationRequest {
	always := "Allow this tool for the rest of the session"
	// gemini-cli's labels of proceed_always_and_save, by dialog.
	save := "Allow for all future sessions"
	cr := &devtool.ConfirmationRequest{}
	switch {
	case req.MCP != nil:
		cr.McpDetails = &devtool.McpDetails{ServerName: req.MCP.ServerName, ToolName: req.MCP.ToolName}
		always = fmt.Sprintf("Allow %s from server %s for the rest of the session", req.MCP.ToolName, req.MCP.ServerName)
		save = "Allow tool for all future sessions"
	case req.Kind == tools.KindExecute:
		cmd, _ := req.Args["command"].(string)
		dir, _ := req.Args["dir_path"].(string)
		if dir == "" {
			dir = workDir
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(workDir, dir)
		}
		cr.ExecuteDetails = &devtool.ExecuteDetails{Command: cmd, WorkingDirectory: dir}
		if root := strings.Fields(cmd); len(root) > 0 {
			always = fmt.Sprintf("Allow commands starting with %q for the rest of the session", root[0])
		}
		save = "Allow this command for all future sessions"
	case req.Diff != nil:
		cr.FileEditDetails = fileDiff(req.Diff.Path, req.Diff.Before, req.Diff.After, req.Diff.Before != "" || fileExists(req.Diff.Path))
		always = "Allow file edits for the rest of the session"
		save = "Allow for this file in all future sessions"
	default:
		desc := req.Description
		if desc == "" {
			desc = req.DisplayName
		}
		cr.GenericDetails = &devtool.GenericDetails{Description: desc}
	}
	cr.Options = []devtool.ConfirmationOption{{ID: devtool.OptionProceedOnce, Name: "Allow once"}}
	if req.Offered(runtime.ProceedAlways) {
		cr.Options = append(cr.Options,
			devtool.ConfirmationOption{ID: devtool.OptionProceedAlways, Name: "Allow always", Description: always})
	}
	if req.Offered(runtime.ProceedAlwaysAndSave) {
		cr.Options = append(cr.Options,
			devtool.ConfirmationOption{ID: devtool.OptionProceedAlwaysAndSave, Name: save,
				Description: "Allow it for the rest of the session and save a policy rule that allows it in later sessions"})
	}
	cr.Options = append(cr.Options,
		devtool.ConfirmationOption{ID: devtool.OptionCancel, Name: "Reject", Description: "Do not run it; the agent is told you declined"})
	return cr
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
