package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/safefs"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// command is one slash command: its schema and what running it does.
// run writes its output through out and returns the final error.
type command struct {
	devtool.SlashCommand
	// needsContext: the command acts on a conversation.
	needsContext bool
	run          func(ctx context.Context, s *Server, c *convo, args string, out func(string)) error
}

// commands returns the command tree. Leaves run; a parent with
// subcommands runs its first subcommand when given none (memory ->
// memory show), as gemini-cli does.
func (s *Server) commands() []command {
	var cmds []command
	if s.cfg.Memory != nil {
		cmds = append(cmds, command{SlashCommand: devtool.SlashCommand{
			Name: "memory", Description: "Show or add to the memory (context files) the agent reads",
			SubCommands: []devtool.SlashCommand{
				{Name: "show", Description: "Show the memory a session in this workspace reads, and its files"},
				{Name: "add", Description: "Add a fact to your global memory file", Arguments: []devtool.SlashCommandArgument{
					{Name: "fact", Description: "The text to remember", IsRequired: true}}},
			},
		}})
	}
	cmds = append(cmds,
		command{SlashCommand: devtool.SlashCommand{
			Name: "model", Description: "Show the conversation's model, or switch it",
			Arguments: []devtool.SlashCommandArgument{{Name: "name", Description: "The model to switch to (gemini-2.5-flash, flash, openai:<model> …)"}},
		}, needsContext: true, run: runModel},
		command{SlashCommand: devtool.SlashCommand{
			Name: "rewind", Description: "Remove a message and everything after it from the conversation",
			Arguments: []devtool.SlashCommandArgument{{Name: "message_id", Description: "The transcript id of the first message to remove", IsRequired: true}},
		}, needsContext: true, run: runRewind},
		command{SlashCommand: devtool.SlashCommand{
			Name: "tools", Description: "List the tools the agent can use",
			SubCommands: []devtool.SlashCommand{{Name: "list", Description: "List the conversation's tools with their descriptions"}},
		}, needsContext: true},
		command{SlashCommand: devtool.SlashCommand{
			Name: "restore", Description: "List the file edits of the conversation, or undo one",
			Arguments: []devtool.SlashCommandArgument{{Name: "tool_call_id", Description: "The edit to undo; without it, the edits are listed"}},
		}, needsContext: true, run: runRestore},
	)
	return cmds
}

// lookup finds the command at path and the function that runs it.
func (s *Server) lookup(path []string) (command, func(ctx context.Context, s *Server, c *convo, args string, out func(string)) error, error) {
	if len(path) == 0 {
		return command{}, nil, errors.New("command_path is empty")
	}
	for _, c := range s.commands() {
		if c.Name != path[0] {
			continue
		}
		sub := ""
		if len(path) > 1 {
			sub = path[1]
		}
		if len(path) > 2 {
			return c, nil, fmt.Errorf("/%s has no command %q", strings.Join(path[:2], " "), path[2])
		}
		switch c.Name {
		case "memory":
			switch sub {
			case "", "show":
				return c, runMemoryShow, nil
			case "add":
				return c, runMemoryAdd, nil
			}
		case "tools":
			if sub == "" || sub == "list" {
				return c, runToolsList, nil
			}
		default:
			if sub == "" {
				return c, c.run, nil
			}
		}
		return c, nil, fmt.Errorf("/%s has no subcommand %q", c.Name, sub)
	}
	names := make([]string, 0, 5)
	for _, c := range s.commands() {
		names = append(names, c.Name)
	}
	return command{}, nil, fmt.Errorf("unknown command /%s (commands: %s)", path[0], strings.Join(names, ", "))
}

// commandsGet answers commands/get.
func (s *Server) commandsGet(w http.ResponseWriter, env rpcEnvelope) {
	var resp devtool.GetAllSlashCommandsResponse
	for _, c := range s.commands() {
		sc := c.SlashCommand
		if sc.Arguments == nil {
			sc.Arguments = []devtool.SlashCommandArgument{}
		}
		if sc.SubCommands == nil {
			sc.SubCommands = []devtool.SlashCommand{}
		}
		for i := range sc.SubCommands {
			if sc.SubCommands[i].Arguments == nil {
				sc.SubCommands[i].Arguments = []devtool.SlashCommandArgument{}
			}
			if sc.SubCommands[i].SubCommands == nil {
				sc.SubCommands[i].SubCommands = []devtool.SlashCommand{}
			}
		}
		resp.Commands = append(resp.Commands, sc)
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
	cmd, run, err := s.lookup(req.CommandPath)
	if err != nil {
		failed(err.Error())
		return
	}
	var c *convo
	if cmd.needsContext {
		if req.ContextID == "" {
			failed(fmt.Sprintf("/%s acts on a conversation: give its context_id", cmd.Name))
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
	if c != nil {
		tr.model = c.sess.Model()
	}
	update := func(ev *a2a.TaskStatusUpdateEvent) { send(a2a.StreamResponse{Event: ev}) }
	update(tr.stateChange(a2a.TaskStateWorking, "", ""))
	err = run(r.Context(), s, c, strings.TrimSpace(req.Args), func(text string) { update(tr.text(text)) })
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

func runMemoryShow(ctx context.Context, s *Server, c *convo, _ string, out func(string)) error {
	ws := s.cfg.Workspace
	if c != nil {
		ws = c.workspace
	}
	text, files, err := s.cfg.Memory.Show(ctx, ws)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		out("Memory is empty: no context files were found.")
		return nil
	}
	out(fmt.Sprintf("Memory from %d file(s): %s\n\n%s", len(files), strings.Join(files, ", "), text))
	return nil
}

func runMemoryAdd(ctx context.Context, s *Server, _ *convo, args string, out func(string)) error {
	if args == "" {
		return errors.New("usage: /memory add <text to remember>")
	}
	file, err := s.cfg.Memory.Add(ctx, args)
	if err != nil {
		return err
	}
	// The open conversations read it too, from their next request, as
	// gemini-cli refreshes its memory after adding to it.
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
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remembered %q in %s, but not every open conversation could read it again: %w", args, file, err)
	}
	out(fmt.Sprintf("Remembered %q in %s; every conversation reads it from its next request.", args, file))
	return nil
}

func runModel(ctx context.Context, _ *Server, c *convo, args string, out func(string)) error {
	if args == "" {
		out("Model: " + c.sess.Model())
		return nil
	}
	if err := c.busy(); err != nil {
		return err
	}
	if _, err := c.sess.Send(ctx, runtime.Send{Update: &runtime.SessionUpdate{Model: args}}); err != nil {
		return err
	}
	out("Model set to " + c.sess.Model())
	return nil
}

func runRewind(ctx context.Context, _ *Server, c *convo, args string, out func(string)) error {
	if args == "" {
		return errors.New("usage: /rewind <message id> (the transcript id of the first message to remove)")
	}
	if err := c.busy(); err != nil {
		return err
	}
	res, err := c.sess.Rewind(ctx, args)
	if err != nil {
		return err
	}
	out(fmt.Sprintf("Rewound: %d message(s) kept, %d event(s) in the history.", res.Messages, res.Events))
	return nil
}

func runToolsList(_ context.Context, _ *Server, c *convo, _ string, out func(string)) error {
	var b strings.Builder
	b.WriteString("Available tools:\n")
	for _, t := range c.sess.Tools() {
		desc, _, _ := strings.Cut(t.Description, "\n")
		fmt.Fprintf(&b, "- %s (%s): %s\n", t.DisplayName, t.Name, desc)
	}
	out(b.String())
	return nil
}

// fileEdit is a file edit the conversation made, from its tool responses.
type fileEdit struct {
	callID, path, before, after string
	// created is set when the edit created the file, as its tool
	// reported (isNewFile); an empty before alone does not say so, since
	// the file may have existed empty.
	created bool
}

func editsOf(c *convo) []fileEdit {
	var out []fileEdit
	for _, ev := range c.sess.Events() {
		if ev.Type != runtime.EventToolResponse || ev.ToolResponse.IsError || ev.ThreadID != "" {
			continue
		}
		d := ev.ToolResponse.Display
		if d == nil || d.Result == nil || d.Result.Type != "diff" {
			continue
		}
		// A response without isNewFile (another tool's diff) is restored
		// to its content, never removed: removing could lose a file.
		created, _ := ev.ToolResponse.Data["isNewFile"].(bool)
		out = append(out, fileEdit{callID: ev.ToolResponse.RequestID, path: d.Result.Path,
			before: d.Result.BeforeText, after: d.Result.AfterText, created: created && d.Result.BeforeText == ""})
	}
	return out
}

// restoreRoot is the directory a restore is confined to: the workspace
// when the file lies in it, else (a file of another workspace root) the
// file's own directory, so that at least its name cannot be swapped for a
// symlink between the check and the write.
func restoreRoot(workspace, path string) string {
	if real, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = real
	}
	if workspace != "" {
		if rel, err := filepath.Rel(workspace, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return workspace
		}
	}
	return filepath.Dir(path)
}

// runRestore lists the conversation's edits or undoes one: the file gets
// its content from before the edit, if it still holds what the edit
// wrote (otherwise a later change would be lost, and it refuses).
func runRestore(_ context.Context, _ *Server, c *convo, args string, out func(string)) error {
	edits := editsOf(c)
	if args == "" || args == "list" {
		if len(edits) == 0 {
			out("No file edits in this conversation.")
			return nil
		}
		var b strings.Builder
		b.WriteString("File edits (newest last); /restore <tool_call_id> undoes one:\n")
		for _, e := range edits {
			fmt.Fprintf(&b, "- %s: %s\n", e.callID, e.path)
		}
		out(b.String())
		return nil
	}
	if err := c.busy(); err != nil {
		return err
	}
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		if e.callID != args {
			continue
		}
		root := restoreRoot(c.workspace, e.path)
		// The file should hold what the edit wrote: reading one byte more
		// tells a longer file apart without reading it all.
		cur, err := safefs.ReadFileIn(root, e.path, int64(len(e.after)))
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, safefs.ErrTooLarge) {
			return fmt.Errorf("restore %s: %w", e.path, err)
		}
		if err != nil || string(cur) != e.after {
			return fmt.Errorf("restore %s: the file changed after edit %s; it was left as it is", e.path, e.callID)
		}
		if e.created {
			if err := os.Remove(e.path); err != nil {
				return fmt.Errorf("restore %s: %w", e.path, err)
			}
			out(fmt.Sprintf("Removed %s, which edit %s created.", e.path, e.callID))
			return nil
		}
		if err := safefs.WriteFileIn(root, e.path, []byte(e.before), 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", e.path, err)
		}
		out(fmt.Sprintf("Restored %s to its content before edit %s.", e.path, e.callID))
		return nil
	}
	return fmt.Errorf("no file edit %s in this conversation (/restore lists them)", args)
}
