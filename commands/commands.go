// Package commands is the slash commands of a conversation — /memory,
// /model, /rewind, /tools, /restore, /stats, /compress, /approval-mode,
// /mcp, /agents — for every driver that offers them: the A2A server's
// command/execute and the interactive terminal dispatch them through one
// Registry, so a command does the same thing wherever it is typed. The
// package knows neither HTTP nor A2A nor the terminal: a command acts on
// a Target (a *runtime.Session, or a driver's view of one) and writes its
// output through a function.
//
// A line is a command by gemini-cli's rule: it starts with "/" but not
// with "//" or "/*". Registry.Parse splits it into the command's path
// (the command, then its subcommand) and its arguments; Registry.Run runs
// it. A driver adds its own commands (the terminal's /quit, /clear,
// /help) through Config.Extra, so that they parse, list and complete with
// the rest.
//
// A conversation's MCP prompts are commands too, gemini-cli's way
// (/<prompt> with --name=value or positional arguments, /<prompt> help):
// Registry.For adds those of a Target that offers them (Prompter), and
// running one returns a Submission, the turn the driver sends to the
// model.
package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentry-dev/agentry/runtime"
)

// Target is the conversation a command acts on: what *runtime.Session
// provides. A driver may wrap a session to answer some methods its own
// way (the A2A server's Busy reports the context's task, its Workspace
// the context's directory).
type Target interface {
	// ID is the conversation's session id.
	ID() string
	// Workspace is the conversation's primary workspace directory.
	Workspace() string
	// Model is the configured model the next prompt starts with.
	Model() string
	// Send changes the conversation (runtime.Send's Update) for /model.
	Send(ctx context.Context, p runtime.Send) (string, error)
	// Events is the conversation's history of protocol events.
	Events() []runtime.Event
	// Tools lists the conversation's tools, sorted by name.
	Tools() []runtime.ToolInfo
	// Agents lists the subagents the conversation can hand tasks to.
	Agents() []runtime.AgentInfo
	// ReloadMemory reads the context files again.
	ReloadMemory() error
	// Rewind cuts the conversation back to before a message.
	Rewind(ctx context.Context, messageID string) (runtime.RewindResult, error)
	// Compress compresses the conversation's history now.
	Compress(ctx context.Context) (runtime.CompressionInfo, error)
	// ApprovalMode is the conversation's approval mode.
	ApprovalMode() runtime.ApprovalMode
	// SetApprovalMode changes it for the calls decided from now on.
	SetApprovalMode(mode runtime.ApprovalMode) error
	// Busy returns why the conversation cannot be changed now (a prompt
	// runs, or waits for a confirmation), nil when it is idle. /model,
	// /rewind, /restore and /compress check it first.
	Busy() error
}

var _ Target = (*runtime.Session)(nil)

// Memory shows and extends the user's memory (the context files) for
// /memory show and /memory add.
type Memory interface {
	// Show returns the memory a session in workspace gets, and the files
	// it came from.
	Show(ctx context.Context, workspace string) (text string, files []string, err error)
	// Add appends a fact to the user's global memory file and returns
	// the file's path.
	Add(ctx context.Context, fact string) (file string, err error)
}

// Argument is one argument of a command, for help and completion.
type Argument struct {
	Name        string
	Description string
	Required    bool
}

// Command is one slash command or subcommand: what help and completion
// show of it, and what running it does.
type Command struct {
	// Name is the command's name, without the slash.
	Name string
	// Aliases are other names it answers to (/compact for /compress).
	Aliases []string
	// Description is one line for help.
	Description string
	// Arguments are the command's arguments, in order.
	Arguments []Argument
	// SubCommands are the command's subcommands. A command without its
	// own Run runs its first subcommand when given none (/memory runs
	// /memory show), as gemini-cli does.
	SubCommands []Command
	// NeedsTarget is set when the command acts on a conversation: Run
	// then needs a Target.
	NeedsTarget bool
	// MCPServer is, for the command of an MCP prompt (Registry.For), the
	// server offering it: help and completion mark such commands.
	MCPServer string
	// Run runs the command with its arguments (trimmed), writing its
	// output through out; t is nil for a command that needs no target
	// when none is given. Nil for a command that only has subcommands.
	Run func(ctx context.Context, t Target, args string, out func(string)) error
}

// names returns the name and the aliases.
func (c Command) names() []string { return append([]string{c.Name}, c.Aliases...) }

// answersTo reports whether c is called name.
func (c Command) answersTo(name string) bool { return slices.Contains(c.names(), name) }

// clone returns a copy of c that shares no slice with it.
func (c Command) clone() Command {
	c.Aliases = slices.Clone(c.Aliases)
	c.Arguments = slices.Clone(c.Arguments)
	subs := make([]Command, len(c.SubCommands))
	for i, s := range c.SubCommands {
		subs[i] = s.clone()
	}
	if c.SubCommands == nil {
		subs = nil
	}
	c.SubCommands = subs
	return c
}

// Errors of Lookup and Run.
var (
	// ErrUnknown reports a command or subcommand the registry lacks; the
	// message names the ones there are.
	ErrUnknown = errors.New("unknown command")
	// ErrNoTarget reports a command that acts on a conversation, run
	// without one.
	ErrNoTarget = errors.New("no conversation given")
)

// unknownError is an ErrUnknown with its own message.
type unknownError struct{ msg string }

func (e *unknownError) Error() string { return e.msg }
func (e *unknownError) Unwrap() error { return ErrUnknown }

// Config configures a Registry.
type Config struct {
	// Memory serves /memory show and /memory add; nil leaves /memory out.
	Memory Memory
	// Workspace is the workspace /memory show reads for when no
	// conversation is given.
	Workspace string
	// ReloadAll makes every open conversation read the memory again
	// after /memory add (the A2A server's contexts); nil reloads the
	// target's alone, when there is one.
	ReloadAll func(ctx context.Context) error
	// MCPAuth, when set, adds /mcp auth SERVER: it walks the server's
	// OAuth flow, showing the authorization URL through out, and stores
	// the token (the terminal's mcpauth flow).
	MCPAuth func(ctx context.Context, server string, out func(string)) error
	// Extra are the driver's own commands, listed after the built-in
	// ones: the terminal's /quit (alias exit), /clear (alias new), /help.
	// A name or alias may not repeat one of another command.
	Extra []Command
	// Reserved are the names (and aliases) of the commands a driver runs
	// before the registry sees a line (the terminal's /help, /quit, …): an
	// MCP prompt by one of these names is renamed as one colliding with a
	// built-in command is (Registry.For).
	Reserved []string
}

// Registry holds the commands and runs them. It is safe for concurrent
// use; the commands it runs may not be (two /restore of one file race as
// two editors would).
type Registry struct {
	cfg  Config
	cmds []Command
}

// New returns the registry of the built-in commands and cfg.Extra. A
// command of Extra without a name, with neither Run nor subcommands, or
// whose name or alias another command has, is refused.
func New(cfg Config) (*Registry, error) {
	r := &Registry{cfg: cfg}
	r.cmds = r.builtin()
	for _, c := range cfg.Extra {
		if err := checkCommand(c); err != nil {
			return nil, err
		}
		for _, n := range c.names() {
			if slices.ContainsFunc(r.cmds, func(o Command) bool { return o.answersTo(n) }) {
				return nil, fmt.Errorf("commands: /%s is defined twice", n)
			}
		}
		r.cmds = append(r.cmds, c.clone())
	}
	return r, nil
}

func checkCommand(c Command) error {
	for _, n := range c.names() {
		if n == "" || strings.ContainsFunc(n, unicode.IsSpace) || strings.HasPrefix(n, "/") {
			return fmt.Errorf("commands: bad command name %q (want a word without the slash)", n)
		}
	}
	if c.Run == nil && len(c.SubCommands) == 0 {
		return fmt.Errorf("commands: /%s has neither Run nor subcommands", c.Name)
	}
	for _, s := range c.SubCommands {
		if err := checkCommand(s); err != nil {
			return err
		}
	}
	return nil
}

// Commands returns the commands in the order help lists them, with their
// subcommands: enough for help, completion and the A2A server's
// commands/get. The result is the caller's to change.
func (r *Registry) Commands() []Command {
	out := make([]Command, len(r.cmds))
	for i, c := range r.cmds {
		out[i] = c.clone()
	}
	return out
}

// find returns the command of cmds called name.
func find(cmds []Command, name string) (Command, bool) {
	i := slices.IndexFunc(cmds, func(c Command) bool { return c.answersTo(name) })
	if i < 0 {
		return Command{}, false
	}
	return cmds[i], true
}

// Lookup returns the command that runs for path (a command, then a
// subcommand, by name or alias): for a command that only has
// subcommands and none given, its first. An unknown name is ErrUnknown,
// its message naming the commands there are.
func (r *Registry) Lookup(path []string) (Command, error) {
	if len(path) == 0 {
		return Command{}, errors.New("command_path is empty")
	}
	c, ok := find(r.cmds, path[0])
	if !ok {
		names := make([]string, len(r.cmds))
		for i, c := range r.cmds {
			names[i] = c.Name
		}
		return Command{}, &unknownError{fmt.Sprintf("unknown command /%s (commands: %s)", path[0], strings.Join(names, ", "))}
	}
	if len(path) > 2 {
		return Command{}, &unknownError{fmt.Sprintf("/%s has no command %q", strings.Join(path[:2], " "), path[2])}
	}
	if len(path) == 1 {
		if c.Run == nil {
			return c.SubCommands[0], nil
		}
		return c, nil
	}
	if sub, ok := find(c.SubCommands, path[1]); ok {
		return sub, nil
	}
	return Command{}, &unknownError{fmt.Sprintf("/%s has no subcommand %q", c.Name, path[1])}
}

// Parse reads a line of input as a command. A line is one when, trimmed,
// it starts with "/" but not "//" or "/*" (gemini-cli's rule); ok is false
// for any other line, which is a prompt. The path is the command's name,
// then its subcommand's when the next word names one — or when the
// command has only subcommands, so that Run reports an unknown one
// rather than passing it on as arguments; aliases are resolved to names.
// args is the rest of the line, trimmed. "/memory add buy milk" is
// (["memory", "add"], "buy milk"); "/model gemini-2.5-flash" is
// (["model"], "gemini-2.5-flash"); "/compact" is (["compress"], ""). An
// unknown command parses (Run reports it); a lone "/" has an empty path.
func (r *Registry) Parse(line string) (path []string, args string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "/") || strings.HasPrefix(line, "//") || strings.HasPrefix(line, "/*") {
		return nil, "", false
	}
	name, rest := cutWord(line[1:])
	if name == "" {
		return nil, "", true
	}
	c, found := find(r.cmds, name)
	if !found {
		return []string{name}, rest, true
	}
	path = []string{c.Name}
	if word, after := cutWord(rest); word != "" && len(c.SubCommands) > 0 {
		if sub, ok := find(c.SubCommands, word); ok {
			path, rest = append(path, sub.Name), after
		} else if c.Run == nil {
			path, rest = append(path, word), after
		}
	}
	return path, rest, true
}

// cutWord returns the first word of s and the rest, both trimmed.
func cutWord(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// Run runs the command at path with args, writing its output through out
// (one call per message). t is the conversation; it may be nil for a
// command that needs none (/memory show and add), and a command that
// needs one fails with ErrNoTarget without it. An unknown command fails
// with ErrUnknown; otherwise the error is the command's — a *Submission
// for a command whose result is the user's next turn (an MCP prompt).
func (r *Registry) Run(ctx context.Context, t Target, path []string, args string, out func(string)) error {
	c, err := r.Lookup(path)
	if err != nil {
		return err
	}
	if c.NeedsTarget && t == nil {
		return fmt.Errorf("/%s acts on a conversation: %w", path[0], ErrNoTarget)
	}
	if out == nil {
		out = func(string) {}
	}
	return c.Run(ctx, t, strings.TrimSpace(args), out)
}
