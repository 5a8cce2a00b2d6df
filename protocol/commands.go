package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/protocol/devtool"
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

// commandsGet answers commands/get.
func (s *Server) commandsGet(w http.ResponseWriter, env rpcEnvelope) {
	var resp devtool.GetAllSlashCommandsResponse
	for _, c := range s.cmds.Commands() {
		resp.Commands = append(resp.Commands, slashCommand(c))
	}
	writeRPC(w, env.ID, resp, 0, "")
}

// commandExecute answers command/execute: a first result with the
// execution id and status, then, over SSE, the command's progress as
// status updates of a task named by the execution id, ending with a
// final STATE_CHANGE (completed or failed). A command that cannot start
// gets one plain result with FAILED_TO_START and the reason.
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
	cmd, err := s.cmds.Lookup(req.CommandPath)
	if err != nil {
		failed(err.Error())
		return
	}
	var c *convo
	if cmd.NeedsTarget {
		if req.ContextID == "" {
			failed(fmt.Sprintf("/%s acts on a conversation: give its context_id", req.CommandPath[0]))
			return
		}
		s.mu.Lock()
		c = s.contexts[req.ContextID]
		_, closed := s.idleClosed[req.ContextID]
		s.mu.Unlock()
		if c == nil && closed {
			// Closed for idleness: reopened from the session store.
			var err error
			if c, err = s.convo(s.ctx, req.ContextID, ""); err != nil {
				failed(fmt.Sprintf("context %s cannot be reopened: %v", req.ContextID, err))
				return
			}
		}
		if c == nil {
			failed(fmt.Sprintf("context %s has no session on this server; send it a message first", req.ContextID))
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
	if c != nil {
		tr.model = c.sess.Model()
		t = target{Session: c.sess, c: c}
	}
	update := func(ev *a2a.TaskStatusUpdateEvent) { send(a2a.StreamResponse{Event: ev}) }
	update(tr.stateChange(a2a.TaskStateWorking, "", ""))
	err = s.cmds.Run(r.Context(), t, req.CommandPath, strings.TrimSpace(req.Args), func(text string) { update(tr.text(text)) })
	if err != nil {
		update(tr.stateChange(a2a.TaskStateFailed, err.Error(), err.Error()))
		return
	}
	if c != nil {
		tr.model = c.sess.Model()
	}
	update(tr.stateChange(a2a.TaskStateCompleted, "", ""))
}

func rawID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
