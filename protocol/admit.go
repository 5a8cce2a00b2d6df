package protocol

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// interceptor checks every call before a2a-go acts on it: the extension
// version a client asks for, and a message's fit with the task it names.
// A bad confirmation must be refused here: once a2a-go has started an
// execution for a task, an error fails the task, and a duplicate or
// stale confirmation must not destroy the run that waits for the real
// one.
type interceptor struct{ s *Server }

var _ a2asrv.CallInterceptor = interceptor{}

// Before implements a2asrv.CallInterceptor.
func (i interceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	// The HTTP guard let the request in with the server's token: it is
	// the server's one user (the task store scopes tasks by user).
	cc.User = a2asrv.NewAuthenticatedUser(User, nil)
	active, err := activate(cc)
	if err != nil {
		return ctx, nil, err
	}
	if err := i.s.check(req.Payload); err != nil {
		return ctx, nil, err
	}
	if p, ok := req.Payload.(*a2a.SendMessageRequest); ok {
		if !active && i.s.cfg.RequireExtension {
			return ctx, nil, a2a.NewError(a2a.ErrExtensionSupportRequired, fmt.Sprintf(
				"this agent requires the development-tool extension: send the header \"A2A-Extensions: %s\" (X-A2A-Extensions for A2A 0.3)", devtool.URI))
		}
		return ctx, nil, i.s.admit(ctx, p, active)
	}
	return ctx, nil, nil
}

// User is the name of the one user every authenticated request acts as.
const User = "agentry"

// SingleUser is the task-store authenticator of a server with one user:
// requests are authenticated by the HTTP guard before they get here, and
// the server's own writes act for the same user.
func SingleUser(context.Context) (string, error) { return User, nil }

// After implements a2asrv.CallInterceptor.
func (interceptor) After(context.Context, *a2asrv.CallContext, *a2asrv.Response) error { return nil }

// activate activates the development-tool extension when the client asks
// for a compatible version, and reports whether it did. An incompatible
// version is refused: the client expects a shape this server does not
// speak. a2a-go's own check would compare URIs exactly, refusing a
// compatible version spelled differently (…/v0.1/spec.md).
func activate(cc *a2asrv.CallContext) (bool, error) {
	ext := cc.Extensions()
	active := false
	for _, uri := range ext.RequestedURIs() {
		ours, err := devtool.Supports(uri)
		if !ours {
			continue
		}
		if errors.Is(err, devtool.ErrIncompatible) {
			return false, a2a.NewError(a2a.ErrExtensionSupportRequired, err.Error())
		}
		if err != nil {
			return false, a2a.NewError(a2a.ErrInvalidParams, err.Error())
		}
		ext.Activate(&a2a.AgentExtension{URI: devtool.URI})
		active = true
	}
	return active, nil
}

// extensionActive reports whether the request in ctx activated the
// development-tool extension. A context without a call (a driver's own
// Submit) counts as activated: the driver's followers speak it.
func extensionActive(ctx context.Context) bool {
	ext, ok := a2asrv.ExtensionsFrom(ctx)
	return !ok || ext.Active(&a2a.AgentExtension{URI: devtool.URI})
}

// admit decides whether a message may start or continue a task; active
// says whether the request activated the development-tool extension.
func (s *Server) admit(ctx context.Context, p *a2a.SendMessageRequest, active bool) error {
	m := p.Message
	if m == nil {
		return nil // a2a-go refuses it
	}
	conf, hasConf, err := confirmationIn(m)
	if err != nil {
		return a2a.NewError(a2a.ErrInvalidParams, err.Error())
	}
	if m.TaskID == "" {
		if hasConf {
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
				"a ToolCallConfirmation (tool call %s) must be sent with the taskId of the task waiting for it", conf.ToolCallID))
		}
		settings, _, err := devtool.SettingsFrom(m.Metadata)
		if err != nil {
			return a2a.NewError(a2a.ErrInvalidParams, err.Error())
		}
		dir, err := s.workspaceFor(settings.WorkspacePath)
		if err != nil {
			return a2a.NewError(a2a.ErrInvalidParams, err.Error())
		}
		if m.ContextID == "" {
			return nil
		}
		if !validContextID(m.ContextID) {
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
				"contextId %q: a new context's id must be 1 to 128 letters, digits, '-' or '_' (it names the session and its files); leave it out to get one", m.ContextID))
		}
		s.mu.Lock()
		c := s.contexts[m.ContextID]
		s.mu.Unlock()
		if c == nil {
			return nil
		}
		if settings.WorkspacePath != "" && c.workspace != dir {
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
				"context %s works in %s; a context cannot change its workspace (start a new context for %s)", c.id, c.workspace, dir))
		}
		if wsFrom(ctx) != nil {
			return nil // queued as the session's next turn
		}
		return c.busy()
	}

	t := s.getLive(m.TaskID)
	if t == nil {
		st, err := s.cfg.TaskStore.Get(ctx, m.TaskID)
		if err == nil {
			if err := checkTaskContext(m, st.Task); err != nil {
				return err
			}
		}
		if hasConf {
			if how := s.answerOf(m.TaskID, conf.ToolCallID); how != "" {
				return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
					"tool call %s of task %s was already answered (%s), and the task has ended since; this confirmation was ignored", conf.ToolCallID, m.TaskID, how))
			}
		}
		if err == nil && !st.Task.Status.State.Terminal() {
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
				"task %s cannot continue: its run is gone (the server restarted while it was %s); start a new task in context %s",
				m.TaskID, st.Task.Status.State, st.Task.ContextID))
		}
		// Unknown and finished tasks: a2a-go's own errors say so.
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := checkTaskContext(m, t.task); err != nil {
		return err
	}
	if t.task.Status.State.Terminal() {
		// Ended, and announced, but not yet dropped from the live tasks:
		// a client told the end may answer before that.
		if hasConf {
			if opt, done := t.answered[conf.ToolCallID]; done {
				return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
					"tool call %s of task %s was already answered (%s%s), and the task has ended since; this confirmation was ignored", conf.ToolCallID, t.id, opt, t.by(conf.ToolCallID)))
			}
		}
		return finishedTask(t.id, t.task)
	}
	if t.waiting == nil {
		if hasConf {
			if opt, done := t.answered[conf.ToolCallID]; done {
				return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
					"tool call %s of task %s was already answered (%s)%s; this confirmation is a duplicate and was ignored", conf.ToolCallID, t.id, opt, t.by(conf.ToolCallID)))
			}
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
				"task %s is not waiting for a confirmation, and has no tool call %s awaiting one", t.id, conf.ToolCallID))
		}
		return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
			"task %s is still running; send the next message as a new task in context %s when it ends", t.id, t.c.id))
	}
	want := t.waiting.req.CallID
	if !hasConf {
		// A plain reply: yes, always or no.
		outcome, ok := replyOutcome(m)
		if ok && !t.waiting.req.Offered(outcome) {
			ok = false // security.disableAlwaysAllow, an untrusted workspace
		}
		if !ok {
			if active {
				return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
					"task %s is waiting for a confirmation of tool call %s: send a data part {\"tool_call_id\": %q, \"selected_option_id\": \"proceed_once\" | \"proceed_always\" | \"proceed_always_and_save\" | \"cancel\"}, or reply with text: %s",
					t.id, want, want, replyWords))
			}
			return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
				"task %s is waiting for an answer about tool call %s (%s): reply with text: %s",
				t.id, want, t.waiting.req.Tool, replyWords))
		}
		if t.accepted != nil {
			return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
				"tool call %s of task %s was already answered (%s) by %s; this reply is a duplicate and was ignored", want, t.id, t.accepted.outcome, t.acceptedBy))
		}
		t.accepted = &answer{outcome: outcome}
		t.acceptedBy = answererFrom(ctx)
		return nil
	}
	if conf.ToolCallID != want {
		if opt, done := t.answered[conf.ToolCallID]; done {
			return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
				"tool call %s of task %s was already answered (%s)%s; the task now waits for tool call %s", conf.ToolCallID, t.id, opt, t.by(conf.ToolCallID), want))
		}
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
			"task %s has no tool call %s awaiting confirmation; it waits for tool call %s", t.id, conf.ToolCallID, want))
	}
	if t.accepted != nil {
		return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
			"tool call %s of task %s was already answered (%s) by %s; this confirmation is a duplicate and was ignored", want, t.id, t.accepted.outcome, t.acceptedBy))
	}
	ans, err := t.waiting.decide(conf)
	if err != nil {
		return err
	}
	t.accepted = &ans
	t.acceptedBy = answererFrom(ctx)
	return nil
}

// checkTaskContext refuses a message naming a task of another context:
// A2A makes a message's contextId, when given, that of its task. A
// confirmation is answered only from the conversation that was asked.
func checkTaskContext(m *a2a.Message, task *a2a.Task) error {
	if m.ContextID == "" || m.ContextID == task.ContextID {
		return nil
	}
	return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
		"contextId %q is not the context of task %s (%s): send the task's own contextId, or leave contextId out", m.ContextID, task.ID, task.ContextID))
}

// validContextID reports whether a client's context id may name a
// session: it becomes the session id, which names its transcript file.
func validContextID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// confirmationIn finds a ToolCallConfirmation among a message's data
// parts.
func confirmationIn(m *a2a.Message) (devtool.ToolCallConfirmation, bool, error) {
	for _, p := range m.Parts {
		d, ok := p.Content.(a2a.Data)
		if !ok {
			continue
		}
		c, ok, err := devtool.ParseConfirmation(d.Value)
		if ok || err != nil {
			return c, ok, err
		}
	}
	return devtool.ToolCallConfirmation{}, false, nil
}
