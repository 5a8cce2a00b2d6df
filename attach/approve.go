package attach

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/devclient"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
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
	req := devclient.ApprovalRequest(tc)
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
	msg := a2a.NewMessageForTask(a2a.MessageRoleUser, a2a.TaskInfo{TaskID: t.task, ContextID: s.ID()}, devclient.Confirmation(req, o, args))
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
