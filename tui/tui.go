// Package tui is agentry's interactive terminal: a Bubble Tea program over
// an agentry session, after gemini-cli's interactive mode.
//
// The screen is inline, not the alternate screen: finished history — the
// user's prompts, the model's answers rendered as Markdown, finished tool
// calls, diffs, notices — is printed once into the terminal's own
// scrollback and never redrawn. Only the live region below it (the
// Markdown block being streamed, running tools and their output, a
// confirmation dialog, the input box and the footer) is redrawn by the
// renderer. A streamed answer is printed a Markdown block at a time: the
// live region holds only the block still incomplete, so a frame costs the
// same however long the answer grows.
//
// The package knows the session only through [Session] (an
// [runtime.AgentProtocol] with an id and a model) and everything else —
// slash commands, `@path` expansion, `!` shell commands, prompt history,
// completion, stored conversations — through the functions of [Config].
// Tool confirmations reach the terminal through an [Approver], which the
// composition hands to the session before the session exists.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/agentry-dev/agentry/runtime"
)

// Session is the conversation the terminal drives; *runtime.Session
// satisfies it.
type Session interface {
	runtime.AgentProtocol
	// ID is the session's id, shown in the footer.
	ID() string
	// Model is the session's configured model, shown in the footer until
	// a stream reports the model it uses.
	Model() string
}

// Turn is a turn the terminal did not start.
type Turn struct {
	// StreamID is the session stream answering the prompt, followed with
	// Session.Stream.
	StreamID string
	// Origin names the sender, shown before the prompt as "[Origin]":
	// "A2A", "A2A vscode".
	Origin string
	// Text is the prompt as sent.
	Text string
}

// Command describes a slash command for /help and completion.
type Command struct {
	// Name is the command's name without the slash.
	Name string
	// Aliases are other names it answers to, without the slash.
	Aliases []string
	// Description is one line of help.
	Description string
	// Args names the arguments, as help shows them ("<tag>", "[--delete]").
	Args string
	// Sub are the command's subcommands.
	Sub []Command
}

// Message is a stored message of the conversation.
type Message struct {
	// ID identifies the message for Rewind.
	ID string
	// Role is "user" or "model".
	Role string
	// Text is the message's text.
	Text string
	// Time is when the message was stored.
	Time time.Time
}

// SessionInfo describes a stored session for the /resume picker.
type SessionInfo struct {
	ID, Title string
	Updated   time.Time
	Messages  int
}

// History is the prompt history the input box walks with Up and Down.
type History interface {
	// Add records a submitted prompt.
	Add(prompt string) error
	// Entries returns the recorded prompts, newest first.
	Entries() []string
}

// Config configures Run. Only Session is required; a nil function leaves
// its feature out, as its field says.
type Config struct {
	// Session is the conversation the terminal starts with.
	Session Session
	// Approver, from NewApprover, answers the session's tool
	// confirmations with a dialog while Run runs. Nil: Run uses none, and
	// the session's own approver (if any) decides.
	Approver *Approver
	// Workspace is the workspace directory, shown in the footer (the
	// home directory as ~).
	Workspace string
	// ApprovalMode returns the current approval mode for the footer.
	ApprovalMode func() string
	// ContextWindow returns a model's context window in tokens: the
	// footer shows how much of it the last model call's input left. Nil
	// hides it.
	ContextWindow func(model string) int
	// Commands are the slash commands /help lists, besides the terminal's
	// own.
	Commands []Command
	// ListCommands, when set, is called for /help in place of Commands:
	// the commands of a session change (its MCP prompts).
	ListCommands func() []Command
	// ParseCommand splits a slash-command line into the command's path
	// and its arguments; ok is false for a line that names no command.
	ParseCommand func(line string) (path []string, args string, ok bool)
	// RunCommand runs a parsed command; what it writes with out is
	// printed. A *SubmitPrompt error sends its content as the user's turn.
	RunCommand func(ctx context.Context, path []string, args string, out func(string)) error
	// Expand turns a prompt with @path references into the parts sent to
	// the model. Nil sends the prompt as typed.
	Expand func(ctx context.Context, input string) ([]runtime.ContentPart, error)
	// Shell runs a `!` command, streaming its output to out, and returns
	// the text the model gets with the next prompt, kept even with an
	// error (context.Canceled: the user cancelled the command, which the
	// terminal shows). Nil disables `!`.
	Shell func(ctx context.Context, command string, out func(chunk string)) (historyText string, err error)
	// Complete returns Tab's candidates for the input's last token.
	Complete func(input string) []string
	// History is the prompt history; nil keeps only this run's prompts.
	History History
	// Messages returns the stored conversation of the current session: it
	// is printed at start and after /resume, and /rewind lists its user
	// messages.
	Messages func(ctx context.Context) ([]Message, error)
	// Rewind rewinds the conversation to before the message; the
	// message's text goes back into the input box.
	Rewind func(ctx context.Context, messageID string) error
	// Sessions lists the stored sessions for /resume.
	Sessions func(ctx context.Context) ([]SessionInfo, error)
	// Switch makes the session with the id current (/resume ID), or a
	// new one for id "" (/clear), and returns it.
	Switch func(ctx context.Context, id string) (Session, error)
	// ModifyArgs returns the arguments an edit runs with after the user
	// changed its new content in the editor.
	ModifyArgs func(req runtime.ApprovalRequest, newContent string) (map[string]any, error)
	// Editor is the external editor command ($VISUAL or $EDITOR); "" makes
	// "Modify with external editor" say none is available.
	Editor string
	// Turns delivers the turns others start on the session (nil: none):
	// prompts from A2A clients of a served session, or, under agentry
	// attach, from anyone but this terminal. The terminal prints each
	// prompt marked with its origin and shows its stream as it shows its
	// own turns, after the turn under way, in the order they come.
	Turns <-chan Turn
	// InitialPrompt is sent at start (agentry -i); the terminal stays.
	InitialPrompt string
	// Input and Output are the terminal; nil means stdin and stdout.
	Input  io.Reader
	Output io.Writer
	// Env is the environment for colour and terminal detection; nil
	// means os.Environ().
	Env []string
	// Width and Height fix the terminal's size (tests); 0 asks the
	// terminal.
	Width, Height int
	// Now is the clock (the Ctrl+C double press, elapsed times); nil is
	// time.Now.
	Now func() time.Time
}

// ErrNoSession reports a Config without a Session.
var ErrNoSession = errors.New("tui: no session")

// frameRate is the renderer's frames a second.
const frameRate = 120

// Run runs the terminal until the user quits or ctx ends, and restores the
// terminal in both cases. It returns nil then, and an error only when the
// terminal could not be run.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Session == nil {
		return ErrNoSession
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	out := cfg.Output
	if out == nil {
		out = os.Stdout
	}
	profile := colorprofile.Detect(out, env)
	if envValue(env, "NO_COLOR") != "" && profile > colorprofile.ASCII {
		// no-color.org: any non-empty value, not only a boolean.
		profile = colorprofile.ASCII
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, drawn := watchOutput(out)
	mb := newMailbox()
	m := newModel(ctx, cfg, mb, profile, drawn)
	if cfg.History != nil {
		m.hist.stored = cfg.History.Entries()
	}

	opts := []tea.ProgramOption{
		tea.WithContext(ctx),
		tea.WithOutput(out),
		tea.WithEnvironment(env),
		tea.WithColorProfile(profile),
		// A key shows within one frame: at 120 frames a second the wait
		// for the next one is half of Bubble Tea's default 60.
		tea.WithFPS(frameRate),
	}
	if cfg.Input != nil {
		opts = append(opts, tea.WithInput(cfg.Input))
	}
	if cfg.Width > 0 && cfg.Height > 0 {
		opts = append(opts, tea.WithWindowSize(cfg.Width, cfg.Height))
		m.resize(cfg.Width, cfg.Height)
	}
	p := tea.NewProgram(m, opts...)
	mb.start(p.Send)
	if cfg.Approver != nil {
		if err := cfg.Approver.attach(mb); err != nil {
			return err
		}
		defer cfg.Approver.detach(mb)
	}
	turnsDone := forwardTurns(ctx, cfg.Turns, mb)
	_, err := p.Run()
	// Nothing may wait on the program now: approvals in flight get
	// ErrNoHuman, work still running is stopped.
	mb.close()
	m.shutdown()
	// Turns is no longer read once Run returns.
	cancel()
	<-turnsDone
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("tui: %w", err)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}
