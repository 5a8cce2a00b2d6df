package attach

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// errAnswered withdraws a dialog whose call someone else answered.
var errAnswered = errors.New("attach: the tool call was answered elsewhere")

func approvalKey(task a2a.TaskID, callID string) string { return string(task) + "\x00" + callID }

// ask opens the terminal's dialog for a call that waits for confirmation;
// s.mu is held. The dialog closes by itself when the call's next update
// says it runs or ended (withdraw).
func (s *Session) ask(t *turn, tc devtool.ToolCall) {
	key := approvalKey(t.task, tc.ToolCallID)
	if s.approver == nil || s.approvals[key] != nil {
		return
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	s.approvals[key] = cancel
	req := approvalRequest(tc)
	s.approving.Go(func() {
		defer cancel(nil)
		s.approve(ctx, t, req, key)
	})
}

// withdraw closes the dialog of a call, if it is open; s.mu is held.
func (s *Session) withdraw(task a2a.TaskID, callID string) {
	key := approvalKey(task, callID)
	if cancel := s.approvals[key]; cancel != nil {
		cancel(errAnswered)
		delete(s.approvals, key)
	}
}

// withdrawTask closes every dialog of a task; s.mu is held.
func (s *Session) withdrawTask(task a2a.TaskID) {
	if task == "" {
		return
	}
	prefix := string(task) + "\x00"
	for key, cancel := range s.approvals {
		if len(key) > len(prefix) && key[:len(prefix)] == prefix {
			cancel(errAnswered)
			delete(s.approvals, key)
		}
	}
}

// approve asks the terminal's user and sends the answer, unless the
// dialog was withdrawn meanwhile.
func (s *Session) approve(ctx context.Context, t *turn, req runtime.ApprovalRequest, key string) {
	o, args, err := s.approver.ApproveEdit(ctx, req)
	s.mu.Lock()
	withdrawn := s.approvals[key] == nil
	delete(s.approvals, key)
	s.mu.Unlock()
	if withdrawn || err != nil {
		// Answered elsewhere, the turn or the session ended, or no
		// terminal runs: the call waits for another client.
		return
	}
	s.confirm(t, req, o, args)
}

// confirm sends the development-tool extension's ToolCallConfirmation
// for a call. The server's refusal — another client or the terminal
// answered first — is shown as a warning on the turn's stream.
func (s *Session) confirm(t *turn, req runtime.ApprovalRequest, o runtime.Outcome, args map[string]any) {
	data := map[string]any{"tool_call_id": req.CallID, "selected_option_id": string(o)}
	if o != runtime.Cancel {
		if content, ok := modifiedContent(req, args); ok {
			data["file_details"] = map[string]any{"new_content": content}
		}
	}
	msg := a2a.NewMessageForTask(a2a.MessageRoleUser, a2a.TaskInfo{TaskID: t.task, ContextID: s.ID()}, a2a.NewDataPart(data))
	st, err := s.conn.Start(s.ctx, "SendStreamingMessage", &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		s.warn(t, fmt.Sprintf("cannot send the answer for %s: %v", req.Tool, err))
		return
	}
	for f, err := range st.Frames() {
		var rpcErr *wsclient.Error
		switch {
		case errors.As(err, &rpcErr):
			s.warn(t, rpcErr.Message)
			return
		case err != nil:
			return
		case f.Event != nil:
			s.route(f.EventID, f.Event, nil)
		}
	}
}

// approvalRequest is what the terminal's dialog shows of a call's
// confirmation request: the call, and the command, the file change or
// the MCP tool the request details.
func approvalRequest(tc devtool.ToolCall) runtime.ApprovalRequest {
	req := runtime.ApprovalRequest{CallID: tc.ToolCallID, Tool: tc.ToolName, DisplayName: tc.ToolName,
		Description: tc.Description, Kind: tools.KindOther, Args: maps.Clone(tc.InputParameters)}
	if req.Args == nil {
		req.Args = map[string]any{}
	}
	cr := tc.ConfirmationRequest
	switch {
	case cr == nil:
	case cr.McpDetails != nil:
		req.MCP = &runtime.MCPDetails{ServerName: cr.McpDetails.ServerName, ToolName: cr.McpDetails.ToolName}
	case cr.ExecuteDetails != nil:
		req.Kind = tools.KindExecute
		req.Args["command"] = cr.ExecuteDetails.Command
		if d := cr.ExecuteDetails.WorkingDirectory; d != "" {
			req.Args["dir_path"] = d
		}
	case cr.FileEditDetails != nil:
		d := cr.FileEditDetails
		req.Kind = tools.KindEdit
		diff := &tools.FileDiff{Path: d.FilePath, After: d.NewContent}
		if d.OldContent != nil {
			diff.Before = *d.OldContent
		}
		req.Diff = diff
	case cr.GenericDetails != nil:
		if req.Description == "" {
			req.Description = cr.GenericDetails.Description
		}
	}
	return req
}

// modifiedContent is the file content the user wrote with "Modify with
// external editor": the terminal's ModifyArgs (runtime.ModifiedArgs) puts
// it into the call's arguments, which the extension's
// file_details.new_content carries instead.
func modifiedContent(req runtime.ApprovalRequest, args map[string]any) (string, bool) {
	if args == nil || req.Diff == nil {
		return "", false
	}
	key := "content"
	if req.Tool == "replace" {
		key = "new_string"
	}
	s, ok := args[key].(string)
	return s, ok
}
