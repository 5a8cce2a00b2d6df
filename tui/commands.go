package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentry-dev/agentry/runtime"
)

// commandRun is a slash command running through Config.RunCommand.
type commandRun struct {
	id     int
	cancel context.CancelFunc
}

// commandOutputMsg carries what a running command wrote.
type commandOutputMsg struct {
	id   int
	text string
}

// commandDoneMsg ends a command.
type commandDoneMsg struct {
	id  int
	err error
}

// Purposes of a stored-conversation load.
type loadPurpose int

const (
	purposeStart  loadPurpose = iota // print it at start
	purposeResume                    // print it after /resume
	purposeRewind                    // pick a message to rewind to
)

type messagesMsg struct {
	purpose loadPurpose
	msgs    []Message
	err     error
}

type sessionsMsg struct {
	list []SessionInfo
	err  error
}

type switchedMsg struct {
	id      string // "" for /clear
	session Session
	err     error
}

type rewoundMsg struct {
	text string
	err  error
}

// builtins are the terminal's own commands, for /help and Builtins.
var builtins = []Command{
	{Name: "help", Aliases: []string{"?"}, Description: "Show the commands and keys"},
	{Name: "clear", Aliases: []string{"new"}, Description: "Start a new session and clear the screen (also /new)"},
	{Name: "copy", Description: "Copy the last answer to the clipboard"},
	{Name: "resume", Description: "Resume a stored session (no ID: pick one)", Args: "[ID]"},
	{Name: "rewind", Description: "Rewind the conversation to before a prompt you pick"},
	{Name: "quit", Aliases: []string{"exit"}, Description: "Exit agentry (also /exit)"},
}

// Builtins lists the commands the terminal runs itself, whatever
// Config.Commands holds (for a driver's Tab completion).
func Builtins() []Command { return slices.Clone(builtins) }

// builtinName is the name of the terminal's own command that name (or an
// alias of it) calls; name itself when it calls none.
func builtinName(name string) string {
	for _, c := range builtins {
		if slices.Contains(c.Aliases, name) {
			return c.Name
		}
	}
	return name
}

// keysHelp are the keys /help lists.
var keysHelp = [][2]string{
	{"Enter", "send the prompt"},
	{"Ctrl+J, Alt+Enter, \\+Enter", "insert a newline"},
	{"Up, Down", "walk the prompt history (at the first or last line)"},
	{"Tab", "complete; press again for the next candidate"},
	{"Esc", "cancel the response or command under way; leave shell mode"},
	{"Ctrl+C", "cancel; clear the input; press twice on an empty prompt to exit"},
	{"Ctrl+D", "exit, on an empty prompt"},
	{"Ctrl+L", "clear the screen"},
	{"Ctrl+T", "show or hide the model's thoughts"},
	{"!", "on an empty prompt: shell mode (!cmd runs one command)"},
	{"@path", "include a file or directory in the prompt"},
}

// runCommand runs a slash command: the terminal's own, else through
// Config.ParseCommand and RunCommand.
func (m *model) runCommand(typed, line string) tea.Cmd {
	name, rest, _ := strings.Cut(strings.TrimSpace(line[1:]), " ")
	rest = strings.TrimSpace(rest)
	switch name = builtinName(name); name {
	case "help":
		m.printUser(typed)
		m.println(m.helpText())
		return nil
	case "quit":
		return m.quit()
	case "copy":
		if m.lastAnswer == "" {
			return m.setNotice("No output in history.", true)
		}
		return tea.Batch(m.fx.clipboard(m.lastAnswer), m.setNotice("Last output copied to the clipboard.", false))
	case "clear", "rewind", "resume":
		if name != "resume" || rest == "" {
			if m.busy() || m.command != nil {
				return m.setNotice(busyNotice(name), true)
			}
			switch name {
			case "clear":
				return m.clear()
			case "rewind":
				return m.startRewind()
			default:
				return m.startResume()
			}
		}
		if m.busy() || m.command != nil {
			return m.setNotice(busyNotice(name), true)
		}
		return m.switchTo(rest)
	}
	m.printUser(typed)
	if m.cfg.ParseCommand == nil || m.cfg.RunCommand == nil {
		m.println(m.st.err.Render("Unknown command: /" + sanitize(name)))
		return nil
	}
	path, args, ok := m.cfg.ParseCommand(line)
	if !ok {
		m.println(m.st.err.Render("Unknown command: /" + sanitize(name)))
		return nil
	}
	if m.command != nil {
		return m.setNotice("Another command is running; press Esc to cancel it.", true)
	}
	m.nextID++
	ctx, cancel := context.WithCancel(m.ctx)
	m.command = &commandRun{id: m.nextID, cancel: cancel}
	run, mb, id := m.cfg.RunCommand, m.mb, m.nextID
	do := func() tea.Msg {
		defer cancel()
		err := run(ctx, path, args, func(s string) { mb.push(commandOutputMsg{id, s}) })
		mb.push(commandDoneMsg{id, err})
		return nil
	}
	return tea.Batch(do, m.startWork())
}

// SubmitPrompt is what Config.RunCommand returns, as its error, for a
// command whose result is the user's next turn (an MCP prompt's
// messages): Content is sent to the model as a prompt would be (queued
// while a turn runs), Display is what the session records as typed.
type SubmitPrompt struct {
	Content []runtime.ContentPart
	Display string
}

// Error says what the terminal does with it.
func (s *SubmitPrompt) Error() string { return "the command's result is a prompt for the model" }

// busyNotice tells why command name, which changes the conversation,
// does not run now.
func busyNotice(name string) string {
	return fmt.Sprintf("/%s cannot run while a response or command is under way; press Esc to cancel it first.", name)
}

// pickWhenIdle wraps a picker's onPick: a remote turn may have started
// while the picker was open, and the pick changes the conversation.
func (m *model) pickWhenIdle(name string, onPick func(id string) tea.Cmd) func(id string) tea.Cmd {
	return func(id string) tea.Cmd {
		if m.busy() || m.command != nil {
			return m.setNotice(busyNotice(name), true)
		}
		return onPick(id)
	}
}

func (m *model) commandDone(msg commandDoneMsg) tea.Cmd {
	if m.command == nil || m.command.id != msg.id {
		return nil
	}
	m.command = nil
	var sub *SubmitPrompt
	if errors.As(msg.err, &sub) {
		// The command's result is the user's turn (an MCP prompt): its
		// line is already shown.
		line := sub.Display
		return tea.Batch(m.afterWork(), m.send(queuedPrompt{typed: line, full: line, content: sub.Content, printed: true}))
	}
	if msg.err != nil {
		text := sanitize(msg.err.Error())
		if errors.Is(msg.err, context.Canceled) {
			text = "Command was cancelled."
		}
		m.println(m.st.err.Render(wrap(text, m.contentWidth())))
	}
	return m.afterWork()
}

// helpText is /help's text: the commands and the keys.
func (m *model) helpText() string {
	var b strings.Builder
	b.WriteString(m.st.accent.Render("Commands"))
	cmds := append([]Command(nil), builtins...)
	seen := map[string]bool{}
	for _, c := range builtins {
		seen[c.Name] = true
	}
	var extra []Command
	listed := m.cfg.Commands
	if m.cfg.ListCommands != nil {
		listed = m.cfg.ListCommands()
	}
	for _, c := range listed {
		if !seen[c.Name] {
			extra = append(extra, c)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	cmds = append(cmds, extra...)
	w := m.contentWidth()
	var walk func(prefix string, cs []Command, depth int)
	walk = func(prefix string, cs []Command, depth int) {
		for _, c := range cs {
			// An MCP server names and describes its prompts' commands:
			// shown stripped of escapes, as its other text is.
			name := prefix + sanitize(c.Name)
			head := strings.Repeat("  ", depth) + " " + m.st.key.Render(name)
			if c.Args != "" {
				head += " " + sanitize(c.Args)
			}
			line := head
			if c.Description != "" {
				line += m.st.dim.Render(" - " + sanitize(c.Description))
			}
			b.WriteString("\n" + truncate(line, w))
			walk(name+" ", c.Sub, depth+1)
		}
	}
	walk("/", cmds, 0)
	b.WriteString("\n\n" + m.st.accent.Render("Keys"))
	for _, k := range keysHelp {
		b.WriteString("\n" + truncate(" "+m.st.key.Render(k[0])+m.st.dim.Render(" - "+k[1]), w))
	}
	return b.String()
}

// clear starts a new session (Config.Switch with id "") and clears the
// screen; nothing runs then, so no stream is cut.
func (m *model) clear() tea.Cmd {
	if m.cfg.Switch == nil {
		return m.setNotice("/clear is not available.", true)
	}
	sw := m.cfg.Switch
	ctx := m.ctx
	return func() tea.Msg {
		s, err := sw(ctx, "")
		return switchedMsg{id: "", session: s, err: err}
	}
}

// switchTo resumes the stored session id.
func (m *model) switchTo(id string) tea.Cmd {
	if m.cfg.Switch == nil {
		return m.setNotice("/resume is not available.", true)
	}
	sw := m.cfg.Switch
	ctx := m.ctx
	return func() tea.Msg {
		s, err := sw(ctx, id)
		return switchedMsg{id: id, session: s, err: err}
	}
}

func (m *model) switched(msg switchedMsg) tea.Cmd {
	if msg.err != nil {
		m.println(m.st.err.Render(wrap("✕ "+sanitize(msg.err.Error()), m.contentWidth())))
		return nil
	}
	if msg.session == nil {
		return nil
	}
	m.session = msg.session
	m.modelName = msg.session.Model()
	m.inputTokens = 0
	m.lastAnswer = ""
	m.shellHistory = nil
	if msg.id == "" {
		m.outbox = nil
		m.printedAny = false
		return m.fx.clear()
	}
	m.println(m.st.info.Render("Resumed session " + sanitize(msg.session.ID()) + "."))
	if m.cfg.Messages != nil {
		return m.loadMessages(purposeResume)
	}
	return nil
}

// loadMessages reads the stored conversation.
func (m *model) loadMessages(p loadPurpose) tea.Cmd {
	load, ctx := m.cfg.Messages, m.ctx
	return func() tea.Msg {
		msgs, err := load(ctx)
		return messagesMsg{purpose: p, msgs: msgs, err: err}
	}
}

func (m *model) messagesLoaded(msg messagesMsg) tea.Cmd {
	if msg.purpose == purposeRewind {
		return m.rewindPicker(msg)
	}
	if msg.err != nil {
		m.println(m.st.err.Render(wrap("✕ Cannot read the conversation: "+sanitize(msg.err.Error()), m.contentWidth())))
	} else {
		m.printConversation(msg.msgs)
	}
	if msg.purpose == purposeStart && m.cfg.InitialPrompt != "" {
		return m.submit(m.cfg.InitialPrompt)
	}
	return nil
}

// printConversation prints stored messages: the user's as typed, the
// model's as Markdown.
func (m *model) printConversation(msgs []Message) {
	for _, msg := range msgs {
		if msg.Role == "user" {
			m.printUser(msg.Text)
			continue
		}
		text := sanitize(msg.Text)
		if strings.TrimSpace(text) == "" {
			continue
		}
		if r := m.md.render(text); r != "" {
			m.println(r)
		}
		m.lastAnswer = strings.TrimSpace(text)
	}
}

// startRewind lists the user messages to rewind to.
func (m *model) startRewind() tea.Cmd {
	if m.cfg.Messages == nil || m.cfg.Rewind == nil {
		return m.setNotice("/rewind is not available.", true)
	}
	return m.loadMessages(purposeRewind)
}

func (m *model) rewindPicker(msg messagesMsg) tea.Cmd {
	if msg.err != nil {
		return m.setNotice("Cannot read the conversation: "+msg.err.Error(), true)
	}
	var items []pickItem
	prompts := map[string]string{}
	for _, x := range msg.msgs {
		if x.Role != "user" {
			continue
		}
		items = append(items, pickItem{id: x.ID, label: oneLine(sanitize(x.Text)), detail: timeLabel(x.Time)})
		prompts[x.ID] = sanitize(x.Text)
	}
	if len(items) == 0 {
		return m.setNotice("Nothing to rewind to.", false)
	}
	m.picker = &picker{title: "Rewind to before which prompt?", items: items, sel: len(items) - 1,
		onPick: m.pickWhenIdle("rewind", func(id string) tea.Cmd { return m.rewindTo(id, prompts[id]) })}
	return nil
}

// rewindTo rewinds to before message id; its prompt goes back into the
// input box, as in gemini-cli.
func (m *model) rewindTo(id, prompt string) tea.Cmd {
	rw, ctx := m.cfg.Rewind, m.ctx
	return func() tea.Msg {
		return rewoundMsg{text: prompt, err: rw(ctx, id)}
	}
}

func (m *model) rewound(msg rewoundMsg) tea.Cmd {
	if msg.err != nil {
		m.println(m.st.err.Render(wrap("✕ "+sanitize(msg.err.Error()), m.contentWidth())))
		return nil
	}
	m.println(m.st.info.Render("Rewound the conversation."))
	m.lastAnswer = ""
	if msg.text != "" && m.input.Value() == "" {
		m.input.SetValue(msg.text)
	}
	return nil
}

// startResume lists the stored sessions.
func (m *model) startResume() tea.Cmd {
	if m.cfg.Sessions == nil || m.cfg.Switch == nil {
		return m.setNotice("/resume is not available.", true)
	}
	list, ctx := m.cfg.Sessions, m.ctx
	return func() tea.Msg {
		l, err := list(ctx)
		return sessionsMsg{list: l, err: err}
	}
}

func (m *model) sessionsLoaded(msg sessionsMsg) tea.Cmd {
	if msg.err != nil {
		return m.setNotice("Cannot list the sessions: "+msg.err.Error(), true)
	}
	var items []pickItem
	for _, s := range msg.list {
		title := oneLine(sanitize(s.Title))
		if title == "" {
			title = "(untitled)"
		}
		items = append(items, pickItem{id: s.ID, label: title,
			detail: fmt.Sprintf("%s · %d messages · %s", timeLabel(s.Updated), s.Messages, shortID(s.ID))})
	}
	if len(items) == 0 {
		return m.setNotice("No stored sessions.", false)
	}
	m.picker = &picker{title: "Resume which session?", items: items, onPick: m.pickWhenIdle("resume", m.switchTo)}
	return nil
}

func timeLabel(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02 15:04")
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
