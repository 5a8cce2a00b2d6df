package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/attach"
	"github.com/agentry-dev/agentry/complete"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tui"
)

// Limits of agentry attach's calls before the terminal starts.
const (
	// attachDialTimeout bounds the connection's handshake.
	attachDialTimeout = 30 * time.Second
	// attachCommandsTimeout bounds the listing of the server's commands.
	attachCommandsTimeout = 10 * time.Second
	// maxClientName is the longest name the server takes (docs/ws.md).
	maxClientName = 64
)

// defaultAttachURL is agentry serve's /ws on its default port.
var defaultAttachURL = "ws://127.0.0.1:" + strconv.Itoa(DefaultServePort) + "/ws"

type attachFlags struct {
	name      string
	contextID string
}

func newAttachCommand(io stdio, in *interrupts, exit *int) *cobra.Command {
	f := &attachFlags{}
	cmd := &cobra.Command{
		Use:   "attach [URL]",
		Short: "Drive a served session from this terminal, beside its other clients",
		Long: `Attach the interactive terminal to a session another agentry runs — the
terminal of agentry --a2a-port, or a context of agentry serve — over its
live endpoint, GET /ws (docs/ws.md). Every turn of the session shows here,
whoever started it; a prompt typed here is the session's next turn; a tool
call that needs confirmation is asked here and of every other client, and
the first answer wins. Slash commands run on the server.

URL defaults to ` + defaultAttachURL + ` (agentry serve's default port).
The server's bearer token is read from ` + tokenEnv + `.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = runAttach(cmd.Context(), f, args, io, in, os.Getenv)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.name, "name", "attach", "this client's name, shown beside its prompts on the other clients")
	cmd.Flags().StringVar(&f.contextID, "context", "", "the contextId of the session to follow (agentry serve's contexts; default: the server's)")
	return cmd
}

// attachTarget checks agentry attach's arguments and flags and returns
// the URL to dial and the connection's options.
func attachTarget(f *attachFlags, args []string, getenv func(string) string) (string, wsclient.Options, error) {
	raw := defaultAttachURL
	if len(args) > 0 {
		raw = args[0]
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !slices.Contains([]string{"ws", "wss", "http", "https"}, u.Scheme) {
		return "", wsclient.Options{}, &inputError{fmt.Sprintf("agentry attach: %q is not a ws:// or wss:// URL (e.g. %s)", raw, defaultAttachURL)}
	}
	for _, k := range []string{"token", "access_token"} {
		if u.Query().Has(k) {
			return "", wsclient.Options{}, &inputError{fmt.Sprintf("agentry attach: the URL carries a %s, which the server refuses (URLs end up in logs); set %s instead", k, tokenEnv)}
		}
	}
	token := strings.TrimSpace(getenv(tokenEnv))
	if token == "" {
		return "", wsclient.Options{}, &inputError{fmt.Sprintf("agentry attach needs the server's bearer token in %s (the token agentry serve or --a2a-port printed)", tokenEnv)}
	}
	if len(f.name) > maxClientName || strings.ContainsFunc(f.name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return "", wsclient.Options{}, &inputError{fmt.Sprintf("agentry attach: --name must be at most %d printable characters", maxClientName)}
	}
	// From the session's start: the terminal shows the conversation so far
	// (as much as the server keeps), then the live turns.
	return raw, wsclient.Options{Token: token, Name: f.name, ContextID: f.contextID, FromStart: true}, nil
}

// runAttach runs the interactive terminal over a served session.
func runAttach(ctx context.Context, f *attachFlags, args []string, io stdio, in *interrupts, getenv func(string) string) int {
	p := newPrinter("text", io, false, time.Now())
	target, opts, err := attachTarget(f, args, getenv)
	if err != nil {
		return p.fail(err)
	}
	if stdinOf(io.in) != stdinTerminal || !isTerminal(io.out) {
		return p.fail(&inputError{"agentry attach needs a terminal on stdin and stdout"})
	}
	dialCtx, cancel := context.WithTimeout(ctx, attachDialTimeout)
	conn, err := wsclient.Dial(dialCtx, target, opts)
	cancel()
	if err != nil {
		return p.fail(dialError(target, err))
	}
	approver := tui.NewApprover()
	sess, err := attach.New(ctx, conn, approver)
	if err != nil {
		conn.Close()
		return p.fail(err)
	}
	defer sess.Close()
	listCtx, cancel := context.WithTimeout(ctx, attachCommandsTimeout)
	cmds, err := sess.Commands(listCtx)
	cancel()
	if err != nil {
		p.warn(fmt.Sprintf("the server's slash commands are not available: %v", err))
	}

	// SIGTERM, SIGINT from outside the terminal, or the server closing
	// the connection end the terminal; the session closes after it.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sigs := in.handle()
	go func() {
		select {
		case <-sigs:
			stop()
		case <-sess.Done():
			stop()
		case <-ctx.Done():
		}
	}()

	cfg := tui.Config{
		Session:  sess,
		Approver: approver,
		Turns:    sess.Turns(),
		Commands: remoteCommands(cmds),
		ParseCommand: func(line string) ([]string, string, bool) {
			return attach.ParseCommand(cmds, line)
		},
		RunCommand: sess.Run,
		Complete:   completer{commands: func() []complete.Command { return remoteCompletion(cmds) }}.candidates,
		ModifyArgs: runtime.ModifiedArgs,
		Editor:     editorFromEnv(),
		Input:      io.in,
		Output:     io.out,
		Env:        os.Environ(),
	}
	if err := tui.Run(ctx, cfg); err != nil && !errors.Is(err, context.Canceled) {
		return p.fail(err)
	}
	if err := sess.Err(); err != nil {
		return p.fail(err)
	}
	return runtime.ExitOK
}

// dialError says what failed to connect and what to check.
func dialError(target string, err error) error {
	var he *wsclient.HandshakeError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case 401:
			return fmt.Errorf("cannot attach to %s: %w; is %s the server's token?", target, err, tokenEnv)
		case 403:
			return fmt.Errorf("cannot attach to %s: %w; the server allows its own hosts only (agentry serve --allowed-host)", target, err)
		case 404:
			return fmt.Errorf("cannot attach to %s: %w; does --context name a running session?", target, err)
		}
		return fmt.Errorf("cannot attach to %s: %w", target, err)
	}
	return fmt.Errorf("cannot attach to %s: %w; is agentry serve (or agentry --a2a-port) running there, and is %s its token?", target, err, tokenEnv)
}

// remoteCommands converts the server's commands for /help.
func remoteCommands(cs []devtool.SlashCommand) []tui.Command {
	out := make([]tui.Command, 0, len(cs))
	for _, c := range cs {
		var args []string
		for _, a := range c.Arguments {
			if a.IsRequired {
				args = append(args, strings.ToUpper(a.Name))
			} else {
				args = append(args, "["+strings.ToUpper(a.Name)+"]")
			}
		}
		out = append(out, tui.Command{Name: c.Name, Description: c.Description, Args: strings.Join(args, " "), Sub: remoteCommands(c.SubCommands)})
	}
	return out
}

// remoteCompletion lists the commands for Tab: the terminal's own and the
// server's.
func remoteCompletion(cs []devtool.SlashCommand) []complete.Command {
	var out []complete.Command
	for _, c := range tui.Builtins() {
		out = append(out, complete.Command{Name: c.Name, AltNames: c.Aliases, Description: c.Description, Args: c.Args != ""})
	}
	var conv func(c devtool.SlashCommand) complete.Command
	conv = func(c devtool.SlashCommand) complete.Command {
		cc := complete.Command{Name: c.Name, Description: c.Description, Args: len(c.Arguments) > 0}
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
