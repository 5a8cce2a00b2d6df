package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/agents/remote"
	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// Limits of stdin input, as gemini-cli's readStdin: at most 8 MB, and when a
// prompt flag is given, stdin counts only if data arrives quickly (a script
// may leave an idle pipe open).
const (
	maxStdinBytes   = 8 << 20
	stdinFirstWait  = 500 * time.Millisecond
	outputFormatKey = "output.format"
)

type runFlags struct {
	prompt         string
	model          string
	outputFormat   string
	yolo           bool
	approvalMode   string
	allowedTools   []string
	record         string
	sessionID      string
	resume         string
	workspace      string
	trustWorkspace bool
	rawOutput      bool
	a2aPort        int
	includeDirs    []string
	listSessions   bool
	ide            bool
	// promptInteractive is the root command's -i: the interactive
	// session's first prompt.
	promptInteractive string
}

// flagKeys maps run's flags to settings keys: flags are the settings layer
// with the highest precedence.
var flagKeys = withPolicyFlags(map[string]string{
	"model":               "model.name",
	"output-format":       outputFormatKey,
	"approval-mode":       "general.defaultApprovalMode",
	"allowed-tools":       "tools.allowed",
	"include-directories": "context.includeDirectories",
	"ide":                 "ide.enabled",
})

func newRunCommand(io stdio, in *interrupts, exit *int) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [-p PROMPT] [PROMPT...]",
		Short: "Run the agent once on a prompt, without interaction",
		Long: `Run the agent once on a prompt and exit: for scripts and CI.

The prompt comes from -p/--prompt, from the arguments, and from stdin when it
is not a terminal (stdin first, then the prompt). Output goes to stdout in the
format chosen with -o: text (the agent's answer), json (one object), stream-json
(JSON lines: init, message, tool_use, tool_result, error, result) or events (the
agent protocol's events as JSON lines). Progress and warnings go to stderr.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = runMain(cmd.Context(), cmd, f, args, io, in)
			return nil
		},
	}
	addRunFlags(cmd.Flags(), f)
	return cmd
}

// addRunFlags defines run's flags on fl: `agentry run` and the root
// command (`agentry -p …`) share them.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVarP(&f.prompt, "prompt", "p", "", "the prompt (appended to stdin's content); @path references are expanded")
	fl.StringVarP(&f.model, "model", "m", "", "the model: gemini-2.5-flash, flash, openai:<model>, replay:<file.jsonl> …")
	fl.StringVarP(&f.outputFormat, "output-format", "o", "", "text, json, stream-json or events (default text)")
	fl.BoolVarP(&f.yolo, "yolo", "y", false, "approve every tool call (same as --approval-mode yolo)")
	fl.StringVar(&f.approvalMode, "approval-mode", "", "plan, default, auto_edit or yolo (default default)")
	fl.StringSliceVar(&f.allowedTools, "allowed-tools", nil, allowedToolsUsage)
	addPolicyFlags(fl)
	fl.StringSliceVar(&f.includeDirs, "include-directories", nil, "more workspace roots, comma-separated or repeated (added to context.includeDirectories)")
	fl.StringVar(&f.record, "record", "", "append every model response to `FILE` in the replay format")
	fl.StringVar(&f.sessionID, "session-id", "", "the session id (default a new UUID); an existing id continues that session")
	fl.StringVarP(&f.resume, "resume", "r", "", "continue a stored session: -r ID, -r NUMBER (as --list-sessions numbers them) or -r latest (the default)")
	fl.Lookup("resume").NoOptDefVal = latestSession
	fl.BoolVar(&f.listSessions, "list-sessions", false, "list this workspace's stored sessions, numbered for --resume, and exit")
	fl.StringVarP(&f.workspace, "workspace", "w", "", "the workspace directory (default the current directory)")
	fl.BoolVar(&f.trustWorkspace, "trust-workspace", false, "trust the workspace for this run: read its settings and .env")
	fl.BoolVar(&f.rawOutput, "raw-output", false, "print the model's text without removing terminal escape sequences")
	fl.BoolVar(&f.ide, "ide", false, "connect to the companion of the IDE agentry runs in (ide.enabled); --ide=false keeps it off for this run")
	fl.IntVar(&f.a2aPort, "a2a-port", -1, "serve this run's session over A2A on 127.0.0.1:`PORT` while it runs (0: any free port)")
}

// applyYolo makes --yolo (-y) set --approval-mode yolo, refusing both
// flags with different modes.
func applyYolo(cmd *cobra.Command, yolo bool, mode string) error {
	if !yolo {
		return nil
	}
	if cmd.Flags().Changed("approval-mode") && mode != config.ApprovalYolo {
		return &inputError{"cannot use both --yolo (-y) and --approval-mode; choose one"}
	}
	return cmd.Flags().Set("approval-mode", config.ApprovalYolo)
}

// inputError is bad input from the user: exit code 42.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func runMain(ctx context.Context, cmd *cobra.Command, f *runFlags, args []string, io stdio, in *interrupts) int {
	start := time.Now()
	// Until the settings are loaded, report in the format the flag asked
	// for, so a script reading JSON gets JSON even for a bad setting.
	format := f.outputFormat
	if !validFormat(format) {
		format = "text"
	}
	p := newPrinter(format, io, f.rawOutput, start)

	if err := applyYolo(cmd, f.yolo, f.approvalMode); err != nil {
		return p.fail(err)
	}
	var input string
	if !f.listSessions {
		var err error
		if input, err = readInput(f.prompt, args, io.in); err != nil {
			return p.fail(err)
		}
	}

	settings, err := config.Load(config.LoadOptions{
		Workspace: f.workspace, Flags: cmd.Flags(), FlagKeys: flagKeys, TrustWorkspace: f.trustWorkspace,
	})
	if err != nil {
		return p.fail(err)
	}
	p.format = settings.Output.Format
	for _, w := range settings.Warnings {
		p.warn(w)
	}
	if f.listSessions {
		if err := listSessions(ctx, settings, io.out, time.Now()); err != nil {
			return p.fail(err)
		}
		return runtime.ExitOK
	}
	parts, err := expandReferences(ctx, settings, input, p.warn)
	if err != nil {
		return p.fail(err)
	}

	var record *llm.RecordSink
	if f.record != "" {
		file, err := os.OpenFile(f.record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return p.fail(&inputError{fmt.Sprintf("--record: %v", err)})
		}
		defer file.Close()
		record = llm.NewRecordSink(file)
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

	opts := compose.Options{SessionID: f.sessionID, Record: record, SessionService: store, RemoteAgents: remote.Invokers,
		Policies: newPolicyLoader(p.warn).load(settings, false)}
	if settings.IDE.Enabled {
		// As gemini-cli with ide.enabled: the IDE companion is connected in
		// the background, and the editor's context goes with the prompt
		// when the connection is up by then. A run asks nobody, so no
		// diff is opened.
		conn := newIDEConn(settings.Workspace)
		defer conn.Close()
		go func() {
			if err := conn.Enable(ctx); err != nil {
				slog.Debug("ide: no connection", "err", err)
			}
		}()
		opts.IDEContext = conn
	}
	sess, err := compose.FromSettings(ctx, settings, opts)
	if err != nil {
		return p.fail(err)
	}
	defer sess.Close()
	p.sessionID = sess.ID()
	p.init(settings.Model.Name, input)
	if w := sess.AllowedToolsWarning(); w != "" {
		p.warn(w)
	}

	// A prompt that names an MCP prompt runs it, as gemini-cli's
	// non-interactive mode does: its messages are the prompt.
	mcpMsg, err := mcpPromptMessage(ctx, sess, input)
	if err != nil {
		return p.fail(&inputError{err.Error()})
	}

	var streamID string
	if f.a2aPort >= 0 {
		// The prompt runs as an A2A task of the served session, so a
		// client can follow, read or cancel it.
		served, err := serveRun(ctx, settings, sess, f.a2aPort, io, "agentry run")
		if err != nil {
			return p.fail(err)
		}
		defer served.stop()
		if mcpMsg != nil {
			streamID, err = served.srv.SubmitSend(ctx, sess.ID(), mcpMsg)
		} else {
			streamID, err = served.submit(ctx, parts...)
		}
		if err != nil {
			return p.fail(err)
		}
		// Announced once the prompt is a task a client can find.
		served.announce(io)
	} else {
		content := make([]runtime.ContentPart, len(parts))
		for i, t := range parts {
			content[i] = runtime.TextPart(t)
		}
		msg := &runtime.SendMessage{Content: content}
		if len(parts) > 1 {
			msg.DisplayContent = input // what the user typed, before @path expansion
		}
		if mcpMsg != nil {
			msg = mcpMsg
		}
		if streamID, err = sess.Send(ctx, runtime.Send{Message: msg}); err != nil {
			return p.fail(err)
		}
	}

	// Ctrl-C aborts the stream (agent_end aborted, exit 130); a second one
	// exits at once. Before this point a signal exits at once.
	sigs := in.handle()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
			sess.Abort(runtime.ErrAborted)
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(io.err, "\nForced exit.")
			os.Exit(runtime.ExitCancelled)
		case <-done:
		}
	}()

	spin := newSpinner(io.err)
	defer spin.halt()
	code := runtime.ExitOK
	for ev, err := range sess.Stream(ctx, streamID) {
		if err != nil {
			return p.fail(err)
		}
		switch ev.Type {
		case runtime.EventToolRequest:
			spin.start(spinnerLabel(ev.ToolRequest))
		case runtime.EventToolResponse:
			spin.halt()
		}
		if c, done := p.event(ev); done {
			code = c
		}
	}
	spin.halt()
	if record != nil {
		if err := record.Err(); err != nil {
			p.warn(fmt.Sprintf("--record: %v", err))
		}
	}
	return code
}

func validFormat(f string) bool {
	switch f {
	case "text", "json", "stream-json", "events":
		return true
	}
	return false
}

// readInput assembles the prompt as gemini-cli does: stdin's content (when
// stdin is not a terminal), then the prompt flag or arguments.
func readInput(prompt string, args []string, in io.Reader) (string, error) {
	if prompt == "" && len(args) > 0 {
		prompt = strings.Join(args, " ")
	} else if prompt != "" && len(args) > 0 {
		return "", &inputError{"give the prompt either with -p or as arguments, not both"}
	}
	stdin, err := readStdin(in, prompt != "")
	if err != nil {
		return "", err
	}
	var input string
	switch {
	case stdin != "" && prompt != "":
		input = stdin + "\n\n" + prompt
	case stdin != "":
		input = stdin
	default:
		input = prompt
	}
	if strings.TrimSpace(input) == "" {
		return "", &inputError{"no input: give a prompt with -p \"…\" or pipe it to stdin"}
	}
	return input, nil
}

func readStdin(in io.Reader, havePrompt bool) (string, error) {
	if in == nil {
		return "", nil
	}
	if stdinOf(in) == stdinTerminal {
		return "", nil
	}
	r := bufio.NewReader(io.LimitReader(in, maxStdinBytes+1))
	if havePrompt {
		// Only wait briefly for a first byte: a pipe nobody writes to must
		// not hang a run that already has its prompt.
		first := make(chan error, 1)
		go func() { _, err := r.Peek(1); first <- err }()
		select {
		case err := <-first:
			if err != nil {
				return "", nil
			}
		case <-time.After(stdinFirstWait):
			return "", nil
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", &inputError{fmt.Sprintf("reading stdin: %v", err)}
	}
	if len(b) > maxStdinBytes {
		return "", &inputError{fmt.Sprintf("stdin holds more than %d MB; pass a smaller input or point the agent at a file", maxStdinBytes>>20)}
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// exitFor maps an error that ended a run before or outside a stream to its
// exit code and gemini-cli error class name.
func exitFor(err error) (int, string) {
	var ie *inputError
	switch {
	case errors.As(err, &ie):
		return runtime.ExitInput, "FatalInputError"
	case errors.Is(err, config.ErrUntrustedWorkspace):
		return runtime.ExitUntrusted, "FatalUntrustedWorkspaceError"
	case errors.Is(err, config.ErrInvalid):
		return runtime.ExitConfig, "FatalConfigError"
	}
	_, name, code := runtime.ErrorStatus(err)
	return code, name
}

// mcpPromptMessage returns the turn of an MCP prompt when input names one
// of the session's (a slash command, gemini-cli's way: its arguments, its
// errors), nil for any other input, which is sent as typed.
func mcpPromptMessage(ctx context.Context, sess *runtime.Session, input string) (*runtime.SendMessage, error) {
	reg, err := commands.New(commands.Config{Reserved: reservedNames()})
	if err != nil {
		return nil, err
	}
	r := reg.For(ctx, sess)
	path, args, ok := r.Parse(input)
	if !ok || len(path) != 1 {
		return nil, nil
	}
	if c, err := r.Lookup(path); err != nil || c.MCPServer == "" {
		return nil, nil
	}
	err = r.Run(ctx, sess, path, args, nil)
	var sub *commands.Submission
	if errors.As(err, &sub) {
		return sub.Message, nil
	}
	return nil, err
}
