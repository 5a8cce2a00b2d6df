package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentry-dev/agentry/agents/remote"
	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/complete"
	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/compression"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/prompthist"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/shellmode"
	"github.com/agentry-dev/agentry/tools"
	"github.com/agentry-dev/agentry/transcript"
	"github.com/agentry-dev/agentry/tui"
)

// stdinKind says what a bare agentry reads: a terminal starts the
// interactive session, a pipe or a file is a headless prompt (gemini-cli's
// `echo … | gemini`), anything else (/dev/null) prints the help.
type stdinKind int

const (
	stdinOther stdinKind = iota
	stdinTerminal
	stdinPiped
)

// stdinOf says what kind of stdin in is.
func stdinOf(in io.Reader) stdinKind {
	f, ok := in.(*os.File)
	if !ok {
		if in == nil {
			return stdinOther
		}
		return stdinPiped
	}
	if term.IsTerminal(int(f.Fd())) {
		return stdinTerminal
	}
	st, err := f.Stat()
	if err != nil {
		return stdinOther
	}
	if st.Mode()&os.ModeNamedPipe != 0 || st.Mode().IsRegular() {
		return stdinPiped
	}
	return stdinOther
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// rootMode decides what a bare agentry (no command) does with its flags.
func rootMode(cmd *cobra.Command, rf *runFlags, args []string, io stdio) (interactive bool, err error) {
	if rf.promptInteractive != "" {
		if rf.prompt != "" || len(args) > 0 {
			return false, &inputError{"cannot use both --prompt-interactive (-i) and a prompt (-p or arguments); -i runs its prompt and stays"}
		}
		if stdinOf(io.in) != stdinTerminal || !isTerminal(io.out) {
			return false, &inputError{"--prompt-interactive (-i) needs a terminal on stdin and stdout; use -p for a headless run"}
		}
		return true, nil
	}
	if rf.prompt != "" || len(args) > 0 || rf.listSessions {
		return false, nil
	}
	if stdinOf(io.in) != stdinTerminal {
		return false, nil
	}
	if !isTerminal(io.out) {
		return false, &inputError{"the interactive session needs a terminal on stdout too; give a prompt with -p for a headless run"}
	}
	if cmd.Flags().Changed("output-format") {
		return false, &inputError{"--output-format applies to headless runs; give a prompt with -p"}
	}
	return true, nil
}

// current is the interactive session's conversation: /clear and /resume
// replace it.
type current struct {
	mu   sync.Mutex
	sess *runtime.Session
}

func (c *current) get() *runtime.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

func (c *current) set(s *runtime.Session) *runtime.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.sess
	c.sess = s
	return old
}

// runInteractive runs the interactive terminal over a session built from
// settings and flags exactly as a headless run builds it, with the
// terminal as the approver.
func runInteractive(ctx context.Context, cmd *cobra.Command, f *runFlags, io stdio, in *interrupts) int {
	p := newPrinter("text", io, f.rawOutput, time.Now())
	if err := applyYolo(cmd, f.yolo, f.approvalMode); err != nil {
		return p.fail(err)
	}
	settings, err := config.Load(config.LoadOptions{
		Workspace: f.workspace, Flags: cmd.Flags(), FlagKeys: flagKeys, TrustWorkspace: f.trustWorkspace,
	})
	if err != nil {
		return p.fail(err)
	}
	for _, w := range settings.Warnings {
		p.warn(w)
	}
	store, closeStore, err := compose.OpenStore(ctx, settings, nil)
	if err != nil {
		return p.fail(err)
	}
	defer closeStore()
	if f.resume != "" {
		if f.sessionID != "" {
			return p.fail(&inputError{"cannot use both --resume and --session-id; --resume ID continues the session ID"})
		}
		if f.sessionID, err = resumeID(ctx, store, f.resume, settings.Workspace); err != nil {
			return p.fail(err)
		}
	}

	approver := tui.NewApprover()
	// Served (--a2a-port), a session asks the server's approver, which
	// asks every client and the terminal at once.
	var sessApprover runtime.Approver = approver
	shared := &protocol.SharedApprover{}
	if f.a2aPort >= 0 {
		sessApprover = shared
	}
	// The IDE companion's connection, made at start with ide.enabled or
	// by /ide enable: the editor's context goes with every prompt, and
	// edits are shown as diffs in the editor, racing the terminal's
	// dialog (served, the terminal's approver is the one wrapped: the
	// server takes the IDE's answer as the terminal's).
	conn := newIDEConn(settings.Workspace)
	defer conn.Close()
	if settings.IDE.Enabled {
		go func() {
			if err := conn.Enable(ctx); err != nil {
				slog.Debug("ide: no connection at start", "err", err)
			}
		}()
	}
	var ideDiffs idediff.Differ = conn
	if f.a2aPort >= 0 {
		ideDiffs = nil
	}
	// With cluster.enabled, the sessions the terminal opens (/clear,
	// /resume) share one link to the fleet's model health rather than
	// each opening its own.
	var avail *routing.Availability
	if settings.Cluster.Enabled {
		var closeAvail func()
		if avail, closeAvail, err = newAvailability(ctx, settings, slog.Default()); err != nil {
			return p.fail(err)
		}
		defer closeAvail()
	}
	// An MCP server with oauth.enabled and no usable token walks its
	// browser flow while the first session opens, before the terminal
	// UI takes the screen; later, /mcp auth does.
	mcpPrompt := &startupPrompt{w: io.err}
	policies := newPolicyLoader(p.warn)
	open := func(ctx context.Context, id string) (*runtime.Session, error) {
		return compose.FromSettings(ctx, settings, compose.Options{
			SessionID: id, SessionService: store, Approver: sessApprover, RemoteAgents: remote.Invokers,
			IDEContext: conn, IDEDiffs: ideDiffs, Availability: avail, MCPAuthPrompt: mcpPrompt.prompt,
			Policies: policies.load(settings, true),
		})
	}
	first, err := open(ctx, f.sessionID)
	if err != nil {
		return p.fail(err)
	}
	if w := first.AllowedToolsWarning(); w != "" {
		p.warn(w)
	}
	cur := &current{sess: first}
	defer func() { cur.get().Close() }()

	var (
		served *servedRun
		turns  chan tui.Turn
	)
	if f.a2aPort >= 0 {
		turns = make(chan tui.Turn, maxPendingTurns)
		if served, err = serveRun(ctx, settings, first, f.a2aPort, io, "agentry", protocol.WithApprover(shared), protocol.WithLocalApprover(idediff.New(approver, conn, idediff.WithMode(func() runtime.ApprovalMode { return cur.get().ApprovalMode() }))), protocol.WithTurns(turnsTo(turns))); err != nil {
			return p.fail(err)
		}
		served.announce(io)
		defer served.stop()
	}
	// shown is the session as the terminal drives it: served, its turns
	// are tasks of the server, so that every client sees them.
	shown := func(s *runtime.Session) tui.Session {
		if served == nil {
			return s
		}
		return servedSession{Session: s, srv: served.srv}
	}

	var hist *history
	if h, err := prompthist.Open(prompthist.Config{Path: prompthist.Path(settings.TempDir())}); err != nil {
		p.warn(fmt.Sprintf("prompt history is off: %v", err))
	} else {
		hist = &history{h: h, session: first.ID()}
	}
	shell, err := shellmode.New(shellmode.Config{Dir: settings.Workspace})
	if err != nil {
		return p.fail(err)
	}
	ws, err := tools.NewWorkspace(settings.Workspace, settings.Context.IncludeDirectories...)
	if err != nil {
		return p.fail(err)
	}
	ideCmd := &ideSlash{settings: settings, enabled: settings.IDE.Enabled, link: conn, discover: func() (ide.Endpoint, *ide.Report, error) {
		return ide.Discover(ide.DiscoverOptions{Cwd: settings.Workspace})
	}}
	reg, err := commands.New(commands.Config{
		Memory:    memory{&workspaceSettings{base: settings, cache: map[string]*config.Settings{settings.Workspace: settings}}},
		Workspace: settings.Workspace,
		MCPAuth:   mcpAuthSlash(settings),
		ReloadAll: func(context.Context) error { return cur.get().ReloadMemory() },
		Extra:     []commands.Command{ideCmd.command()},
		Reserved:  reservedNames(),
	})
	if err != nil {
		return p.fail(err)
	}
	// The commands of the current session: the registry's and its MCP
	// prompts', which change with the session and its servers.
	sessionCommands := func(ctx context.Context) *commands.Registry { return reg.For(ctx, cur.get()) }

	// SIGTERM (or SIGINT from outside the terminal) ends the session
	// cleanly: the terminal is restored and the session closed; the
	// history is already stored after every turn.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sigs := in.handle()
	go func() {
		select {
		case <-sigs:
			stop()
		case <-ctx.Done():
		}
	}()

	cfg := tui.Config{
		Session:      shown(cur.get()),
		Turns:        turns,
		Approver:     approver,
		Workspace:    settings.Workspace,
		ApprovalMode: func() string { return string(cur.get().ApprovalMode()) },
		ContextWindow: func(model string) int {
			return compression.TokenLimit(model)
		},
		Commands:     tuiCommands(reg.Commands()),
		ListCommands: func() []tui.Command { return tuiCommands(sessionCommands(ctx).Commands()) },
		ParseCommand: func(line string) ([]string, string, bool) { return sessionCommands(ctx).Parse(line) },
		RunCommand: func(ctx context.Context, path []string, args string, out func(string)) error {
			err := sessionCommands(ctx).Run(ctx, cur.get(), path, args, out)
			var sub *commands.Submission
			if errors.As(err, &sub) {
				return &tui.SubmitPrompt{Content: sub.Message.Content, Display: sub.Message.DisplayContent}
			}
			return err
		},
		Expand: func(ctx context.Context, input string) ([]runtime.ContentPart, error) {
			parts, err := expandReferences(ctx, settings, input, func(string) {})
			if err != nil {
				return nil, err
			}
			out := make([]runtime.ContentPart, len(parts))
			for i, t := range parts {
				out[i] = runtime.TextPart(t)
			}
			return out, nil
		},
		Shell: func(ctx context.Context, command string, out func(string)) (string, error) {
			res, err := shell.Run(ctx, command, out)
			if err != nil {
				return "", err
			}
			if res.Cancelled {
				// The terminal says so; the model still learns what ran.
				return res.HistoryText(command), context.Canceled
			}
			return res.HistoryText(command), nil
		},
		Complete: completer{ws: ws, commands: func() []complete.Command { return completeCommands(sessionCommands(ctx).Commands()) }}.candidates,
		Messages: func(ctx context.Context) ([]tui.Message, error) {
			return storedMessages(ctx, store, cur.get().ID())
		},
		Rewind: func(ctx context.Context, messageID string) error {
			_, err := cur.get().Rewind(ctx, messageID)
			return err
		},
		Sessions: func(ctx context.Context) ([]tui.SessionInfo, error) {
			return storedSessions(ctx, store, settings.Workspace)
		},
		Switch: func(ctx context.Context, id string) (tui.Session, error) {
			if id != "" {
				if id, err = resumeID(ctx, store, id, settings.Workspace); err != nil {
					return nil, err
				}
			}
			next, err := open(ctx, id)
			if err != nil {
				return nil, err
			}
			if served != nil {
				if err := served.srv.Adopt(next, settings.Workspace, protocol.WithApprover(shared), protocol.WithLocalApprover(idediff.New(approver, conn, idediff.WithMode(func() runtime.ApprovalMode { return cur.get().ApprovalMode() }))), protocol.WithTurns(turnsTo(turns))); err != nil {
					next.Close()
					return nil, err
				}
				served.srv.Release(cur.get().ID(), next.ID())
			}
			if old := cur.set(next); old != nil {
				old.Close()
			}
			if hist != nil {
				hist.setSession(next.ID())
			}
			return shown(next), nil
		},
		ModifyArgs:    runtime.ModifiedArgs,
		Editor:        editorFromEnv(),
		InitialPrompt: f.promptInteractive,
		Input:         io.in,
		Output:        io.out,
		Env:           os.Environ(),
	}
	if hist != nil {
		cfg.History = hist
	}
	mcpPrompt.stop()
	if err := tui.Run(ctx, cfg); err != nil && !errors.Is(err, context.Canceled) {
		return p.fail(err)
	}
	return runtime.ExitOK
}

// editorFromEnv is the user's editor for "Modify with external editor":
// $VISUAL, else $EDITOR.
func editorFromEnv() string {
	if v := strings.TrimSpace(os.Getenv("VISUAL")); v != "" {
		return v
	}
	return strings.TrimSpace(os.Getenv("EDITOR"))
}

// storedMessages reads a session's conversation from its transcript for
// the terminal: printed when it resumes, listed by /rewind.
func storedMessages(ctx context.Context, store runtime.SessionStore, id string) ([]tui.Message, error) {
	sess, err := runtime.LoadSession(ctx, store, id)
	if err != nil {
		if errors.Is(err, runtime.ErrNoSession) {
			return nil, nil
		}
		return nil, err
	}
	rec := loadTranscript(sess.Transcript)
	if rec == nil {
		return nil, nil
	}
	out := make([]tui.Message, 0, len(rec.Messages))
	for _, m := range rec.Messages {
		var role string
		switch m.Type {
		case transcript.TypeUser:
			role = "user"
		case transcript.TypeGemini:
			role = "model"
		default:
			continue
		}
		raw := m.Content
		if role == "user" && len(m.DisplayContent) > 0 {
			raw = m.DisplayContent
		}
		text := messageText(raw)
		if strings.TrimSpace(text) == "" {
			continue
		}
		t, _ := time.Parse(time.RFC3339Nano, m.Timestamp)
		out = append(out, tui.Message{ID: m.ID, Role: role, Text: text, Time: t})
	}
	return out, nil
}

// storedSessions lists the workspace's sessions for /resume, newest first.
func storedSessions(ctx context.Context, store runtime.SessionStore, workspace string) ([]tui.SessionInfo, error) {
	list, err := indexedSessions(ctx, store, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionInfo, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		s := list[i]
		out = append(out, tui.SessionInfo{ID: s.id, Title: s.title, Updated: s.updated})
	}
	return out, nil
}

// reservedNames are the names and aliases of the terminal's own commands,
// which an MCP prompt does not take (commands.Config.Reserved).
func reservedNames() []string {
	var out []string
	for _, c := range tui.Builtins() {
		out = append(out, c.Name)
		out = append(out, c.Aliases...)
	}
	return out
}

// describe is a command's description for /help and completion: an MCP
// prompt's is marked, as gemini-cli marks it.
func describe(c commands.Command) string {
	if c.MCPServer == "" {
		return c.Description
	}
	return "[MCP] " + c.Description
}

// tuiCommands converts the registry's commands for /help.
func tuiCommands(cs []commands.Command) []tui.Command {
	out := make([]tui.Command, 0, len(cs))
	for _, c := range cs {
		var args []string
		for _, a := range c.Arguments {
			if a.Required {
				args = append(args, strings.ToUpper(a.Name))
			} else {
				args = append(args, "["+strings.ToUpper(a.Name)+"]")
			}
		}
		out = append(out, tui.Command{Name: c.Name, Description: describe(c), Args: strings.Join(args, " "), Sub: tuiCommands(c.SubCommands)})
	}
	return out
}

// completeCommands lists every command for Tab: the terminal's own and
// the registry's.
func completeCommands(cs []commands.Command) []complete.Command {
	var out []complete.Command
	for _, c := range tui.Builtins() {
		out = append(out, complete.Command{Name: c.Name, AltNames: c.Aliases, Description: c.Description, Args: c.Args != ""})
	}
	var conv func(c commands.Command) complete.Command
	conv = func(c commands.Command) complete.Command {
		cc := complete.Command{Name: c.Name, AltNames: c.Aliases, Description: describe(c), Args: len(c.Arguments) > 0}
		for _, sc := range c.SubCommands {
			cc.SubCommands = append(cc.SubCommands, conv(sc))
		}
		return cc
	}
	for _, c := range cs {
		out = append(out, conv(c))
	}
	return out
}
