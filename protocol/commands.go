package protocol

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/internal/a2aparts"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// target is a context's session as the slash commands see it: the
// context's workspace, and busy while the context has a task running or
// waiting for a confirmation.
type target struct {
	Session
	c *convo
}

// Workspace is the context's workspace directory.
func (t target) Workspace() string { return t.c.workspace }

// Busy reports the context's active task.
func (t target) Busy() error { return t.c.busy() }

// Prompts lists the MCP prompts of the context's session, if it has any.
func (t target) Prompts(ctx context.Context) ([]runtime.PromptInfo, error) {
	if p, ok := t.Session.(commands.Prompter); ok {
		return p.Prompts(ctx)
	}
	return nil, nil
}

// GetPrompt gets one of the session's MCP prompts.
func (t target) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]runtime.ContentPart, error) {
	if p, ok := t.Session.(commands.Prompter); ok {
		return p.GetPrompt(ctx, server, name, args)
	}
	return nil, runtime.ErrNoPrompts
}

// reloadMemory makes every open context read the memory again, as
// gemini-cli refreshes its memory after /memory add.
func (s *Server) reloadMemory(context.Context) error {
	s.mu.Lock()
	open := make([]*convo, 0, len(s.contexts))
	for _, c := range s.contexts {
		open = append(open, c)
	}
	s.mu.Unlock()
	var errs []error
	for _, c := range open {
		if err := c.sess.ReloadMemory(); err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", c.id, err))
		}
	}
	return errors.Join(errs...)
}

// slashCommand is a command in the development-tool extension's shape,
// with empty lists rather than null.
func slashCommand(c commands.Command) devtool.SlashCommand {
	sc := devtool.SlashCommand{Name: c.Name, Description: c.Description,
		Arguments: []devtool.SlashCommandArgument{}, SubCommands: []devtool.SlashCommand{}}
	for _, a := range c.Arguments {
		sc.Arguments = append(sc.Arguments, devtool.SlashCommandArgument{Name: a.Name, Description: a.Description, IsRequired: a.Required})
	}
	for _, sub := range c.SubCommands {
		sc.SubCommands = append(sc.SubCommands, slashCommand(sub))
	}
	return sc
}

// commandsGet answers commands/get: the server's commands and, for the
// context named by the optional context_id param (agentry's addition, as
// in command/execute) or else the adopted session, its MCP prompts.
func (s *Server) commandsGet(w http.ResponseWriter, r *http.Request, env rpcEnvelope) {
	var params struct {
		ContextID  string `json:"context_id"`
		ContextID2 string `json:"contextId"`
	}
	if len(env.Params) > 0 {
		_ = json.Unmarshal(env.Params, &params)
	}
	id := cmp.Or(params.ContextID, params.ContextID2)
	var c *convo
	if id != "" {
		s.mu.Lock()
		c = s.contexts[id]
		s.mu.Unlock()
	} else {
		c = s.defaultConvo()
	}
	reg := s.cmds
	if c != nil {
		reg = reg.For(r.Context(), target{Session: c.sess, c: c})
	}
	var resp devtool.GetAllSlashCommandsResponse
	for _, c := range reg.Commands() {
		resp.Commands = append(resp.Commands, slashCommand(c))
	}
	writeRPC(w, env.ID, resp, 0, "")
}

// commandContext returns the open context id, reopening one closed for
// idleness; nil and the reason when there is none.
func (s *Server) commandContext(id string) (*convo, string) {
	s.mu.Lock()
	c := s.contexts[id]
	_, closed := s.idleClosed[id]
	s.mu.Unlock()
	if c == nil && closed {
		// Closed for idleness: reopened from the session store.
		var err error
		if c, err = s.convo(s.ctx, id, ""); err != nil {
			return nil, fmt.Sprintf("context %s cannot be reopened: %v", id, err)
		}
	}
	if c == nil {
		return nil, fmt.Sprintf("context %s has no session on this server; send it a message first", id)
	}
	return c, ""
}

// commandExecute answers command/execute: a first result with the
// execution id and status, then, over SSE, the command's progress as
// status updates of a task named by the execution id, ending with a
// final STATE_CHANGE (completed or failed). A command that cannot start
// gets one plain result with FAILED_TO_START and the reason. An MCP
// prompt of the context's session (commands.Registry.For) starts a task
// on the context with the prompt's messages, as a message would, and its
// events follow on the same stream (runPrompt).
func (s *Server) commandExecute(w http.ResponseWriter, r *http.Request, env rpcEnvelope) {
	var params map[string]any
	if len(env.Params) == 0 || json.Unmarshal(env.Params, &params) != nil || params == nil {
		writeRPC(w, env.ID, nil, rpcInvalidParams, `command/execute: params must be an object {"command_path": ["memory", "show"], "args": "…", "context_id": "…"}`)
		return
	}
	req, err := devtool.ParseExecuteRequest(params)
	if err != nil {
		writeRPC(w, env.ID, nil, rpcInvalidParams, "command/execute: "+err.Error())
		return
	}
	id := newID()
	failed := func(msg string) {
		writeRPC(w, env.ID, devtool.ExecuteSlashCommandResponse{ExecutionID: id, Status: devtool.CommandFailedToStart, Message: msg}, 0, "")
	}
	reg := s.cmds
	cmd, err := reg.Lookup(req.CommandPath)
	var c *convo
	if errors.Is(err, commands.ErrUnknown) && req.ContextID != "" {
		// Perhaps one of the context's MCP prompts.
		if c, _ = s.commandContext(req.ContextID); c != nil {
			reg = reg.For(r.Context(), target{Session: c.sess, c: c})
			cmd, err = reg.Lookup(req.CommandPath)
		}
	}
	if err != nil {
		failed(err.Error())
		return
	}
	if cmd.NeedsTarget && c == nil {
		if req.ContextID == "" {
			failed(fmt.Sprintf("/%s acts on a conversation: give its context_id", req.CommandPath[0]))
			return
		}
		var why string
		if c, why = s.commandContext(req.ContextID); c == nil {
			failed(why)
			return
		}
	}
	if cmd.MCPServer != "" {
		if err := c.busy(); err != nil {
			failed(err.Error())
			return
		}
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeRPC(w, env.ID, nil, rpcInternalError, "streaming is not supported on this connection")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rawID(env.ID), "result": result})
		fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
	}
	send(devtool.ExecuteSlashCommandResponse{ExecutionID: id, Status: devtool.CommandStarted})
	contextID := req.ContextID
	if contextID == "" {
		contextID = id
	}
	tr := newTranslator(a2a.TaskInfo{TaskID: a2a.TaskID(id), ContextID: contextID}, s.cfg.Model, s.now)
	// A command that needs no conversation runs without one, as it always
	// has, even when the client names a context.
	var t commands.Target
	if c != nil && cmd.NeedsTarget {
		tr.model = c.sess.Model()
		t = target{Session: c.sess, c: c}
	}
	update := func(ev *a2a.TaskStatusUpdateEvent) { send(a2a.StreamResponse{Event: ev}) }
	update(tr.stateChange(a2a.TaskStateWorking, "", ""))
	err = reg.Run(r.Context(), t, req.CommandPath, strings.TrimSpace(req.Args), func(text string) { update(tr.text(text)) })
	var sub *commands.Submission
	if errors.As(err, &sub) {
		err = s.runPrompt(r.Context(), c, sub.Message, func(ev a2a.Event) { send(a2a.StreamResponse{Event: ev}) })
	}
	if err != nil {
		update(tr.stateChange(a2a.TaskStateFailed, err.Error(), err.Error()))
		return
	}
	if c != nil {
		tr.model = c.sess.Model()
	}
	update(tr.stateChange(a2a.TaskStateCompleted, "", ""))
}

// runPrompt starts a task on c with msg as the user's message, as
// gemini-cli's a2a-server starts its agent from a command (its /init),
// and hands its events to yield until the execution ends or waits for a
// confirmation (answered as any task's is, with message/send and the
// task's id). The task is the context's turn: a client that leaves the
// command's stream leaves it to the server's disconnect policy, as one
// that leaves a message's stream does.
func (s *Server) runPrompt(ctx context.Context, c *convo, msg *runtime.SendMessage, yield func(a2a.Event)) error {
	parts, err := a2aparts.FromContent(msg.Content)
	if err != nil {
		return fmt.Errorf("the prompt's content: %w", err)
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	m.ContextID = c.id
	t, from, err := s.send(ctx, &a2a.SendMessageRequest{Message: m})
	if err != nil {
		return err
	}
	s.follow(ctx, t, from, func(ev a2a.Event, err error) bool {
		if err == nil {
			yield(ev)
		}
		return true
	})
	return nil
}

func rawID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
