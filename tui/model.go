package tui

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	xansi "github.com/charmbracelet/x/ansi"
)

// effects are the commands whose effect is on the terminal itself. Tests
// replace them to record what would be printed, cleared or copied.
type effects struct {
	// print prints text into the scrollback above the live region, then
	// delivers printedMsg.
	print func(text string) tea.Cmd
	// clear clears the screen.
	clear func() tea.Cmd
	// clipboard copies text with OSC 52.
	clipboard func(text string) tea.Cmd
	// exec hands the terminal to a process (the external editor).
	exec func(c *exec.Cmd, done func(error) tea.Msg) tea.Cmd
	// after delivers msg after d.
	after func(d time.Duration, msg tea.Msg) tea.Cmd
	// ready delivers printReadyMsg once the renderer has drawn its first
	// frame.
	ready func() tea.Cmd
}

// realEffects are the effects of a running program; drawn closes when its
// first frame is on the terminal (watchOutput).
func realEffects(ctx context.Context, drawn <-chan struct{}) effects {
	return effects{
		print: func(text string) tea.Cmd {
			return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
		},
		clear: func() tea.Cmd {
			// Erase the visible screen and the renderer's idea of it.
			return tea.Sequence(tea.Raw(xansi.EraseEntireScreen+xansi.CursorHomePosition), tea.ClearScreen)
		},
		clipboard: tea.SetClipboard,
		exec: func(c *exec.Cmd, done func(error) tea.Msg) tea.Cmd {
			return tea.ExecProcess(c, tea.ExecCallback(done))
		},
		after: func(d time.Duration, msg tea.Msg) tea.Cmd {
			return tea.Tick(d, func(time.Time) tea.Msg { return msg })
		},
		// Prints wait for the renderer's first frame: see frameMarker.
		ready: func() tea.Cmd { return waitFirstFrame(ctx, drawn) },
	}
}

// printReadyMsg lets prints start.
type printReadyMsg struct{}

// printedMsg reports that the last printed text reached the terminal.
type printedMsg struct{}

// tickMsg advances the spinner while something runs.
type tickMsg struct{ seq int }

// noticeExpiredMsg clears a transient notice.
type noticeExpiredMsg struct{ seq int }

// Timings of the terminal.
const (
	exitWindow    = 3 * time.Second // a second Ctrl+C within it exits
	spinnerPeriod = 100 * time.Millisecond
	noticeTime    = 3 * time.Second
)

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// model is the terminal's Bubble Tea model. All of its state is touched
// only by Update and View, on the program's goroutine; other goroutines
// reach it through the mailbox.
type model struct {
	ctx     context.Context
	cfg     Config
	fx      effects
	mb      *mailbox
	session Session
	profile colorprofile.Profile
	dark    bool
	st      styles
	md      markdown

	width, height int

	input     textarea.Model
	shellMode bool
	hist      history
	comp      completion
	pastes    map[string]string // placeholder → pasted text
	pasteN    int

	// Work under way: a turn, a `!` command, a slash command.
	turn    *turn
	shell   *shellRun
	command *commandRun
	queued  []queuedPrompt // prompts submitted while busy
	remote  []Turn         // remote turns that came while busy
	nextID  int
	started time.Time // when the work under way started
	spin    int
	ticking bool

	stream streamState

	// Lines waiting to be printed; printing is set while a print is on
	// its way, so prints reach the terminal in order.
	outbox   []string
	printing bool
	// gapNext puts a blank line before the next printed item.
	printedAny bool

	notice    string
	noticeErr bool
	noticeSeq int
	ctrlCAt   time.Time

	approvals []*approval // queued requests; the first is shown
	dialog    dialogState
	picker    *picker

	showThoughts bool
	modelName    string
	inputTokens  int
	lastAnswer   string
	shellHistory []string // `!` results for the next prompt

	clearAfterTurn bool
	quitting       bool
}

func newModel(ctx context.Context, cfg Config, mb *mailbox, profile colorprofile.Profile, drawn <-chan struct{}) *model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &model{
		ctx:     ctx,
		cfg:     cfg,
		fx:      realEffects(ctx, drawn),
		mb:      mb,
		session: cfg.Session,
		profile: profile,
		dark:    true,
		st:      newStyles(),
		pastes:  map[string]string{},
		// Nothing is printed before the first frame (printReadyMsg).
		printing: true,
	}
	m.modelName = cfg.Session.Model()
	m.input = newInput()
	m.setPrompt()
	m.hist.pos = -1
	m.resize(80, 24)
	return m
}

// Init implements tea.Model: it asks the terminal's background (for the
// Markdown style), prints the stored conversation and sends -i's prompt.
func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor, m.fx.ready()}
	if m.cfg.Messages != nil {
		cmds = append(cmds, m.loadMessages(purposeStart))
	} else if m.cfg.InitialPrompt != "" {
		cmds = append(cmds, func() tea.Msg { return initialPromptMsg{} })
	}
	return tea.Batch(cmds...)
}

// noticeMsg shows a transient notice.
type noticeMsg struct {
	text  string
	isErr bool
}

// initialPromptMsg sends Config.InitialPrompt.
type initialPromptMsg struct{}

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.flushOutbox())
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case wakeMsg:
		var cmds []tea.Cmd
		for _, q := range m.mb.drain() {
			cmds = append(cmds, m.update(q))
		}
		return tea.Batch(cmds...)
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.resize(m.width, m.height)
	case printedMsg, printReadyMsg:
		m.printing = false
	case noticeMsg:
		return m.setNotice(msg.text, msg.isErr)
	case tickMsg:
		return m.tick(msg)
	case noticeExpiredMsg:
		if msg.seq == m.noticeSeq {
			m.notice = ""
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg.Content)
	case initialPromptMsg:
		if m.cfg.InitialPrompt != "" {
			return m.submit(m.cfg.InitialPrompt)
		}
	case remoteTurnMsg:
		return m.remoteTurn(msg.t)
	case streamEventMsg:
		return m.streamEvent(msg)
	case turnDoneMsg:
		return m.turnDone(msg)
	case approvalMsg:
		return m.addApproval(msg.a)
	case approvalGoneMsg:
		m.removeApproval(msg.a)
	case toolExecutingMsg:
		m.stream.executing(msg.callID)
	case editorDoneMsg:
		return m.editorDone(msg)
	case shellOutputMsg:
		if m.shell != nil && m.shell.id == msg.id {
			m.shell.out.write(msg.chunk)
		}
	case shellDoneMsg:
		return m.shellDone(msg)
	case commandOutputMsg:
		if m.command != nil && m.command.id == msg.id {
			m.println(sanitize(strings.TrimRight(msg.text, "\n")))
		}
	case commandDoneMsg:
		return m.commandDone(msg)
	case messagesMsg:
		return m.messagesLoaded(msg)
	case sessionsMsg:
		return m.sessionsLoaded(msg)
	case switchedMsg:
		return m.switched(msg)
	case rewoundMsg:
		return m.rewound(msg)
	}
	return nil
}

// resize lays the terminal out for a size.
func (m *model) resize(w, h int) {
	if w <= 0 || h <= 0 {
		return
	}
	m.width, m.height = w, h
	style := "dark"
	if !m.dark {
		style = "light"
	}
	m.md.setup(m.contentWidth(), style)
	m.input.SetWidth(max(w-4, 10))
	m.input.MaxHeight = max(min(10, h/3), 1)
}

// contentWidth is the width of printed text.
func (m *model) contentWidth() int { return max(m.width-2, 20) }

// busy reports whether a turn (own or remote) or a `!` command runs.
func (m *model) busy() bool { return m.turn != nil || m.shell != nil }

// println queues text for the scrollback, after a blank line that
// separates it from what came before.
func (m *model) println(text string) {
	if m.printedAny {
		text = "\n" + text
	}
	m.printedAny = true
	m.outbox = append(m.outbox, strings.Split(text, "\n")...)
}

// printlnTight queues text for the scrollback with no blank line before it
// (the continuation of a streamed answer).
func (m *model) printlnTight(text string) {
	m.printedAny = true
	m.outbox = append(m.outbox, strings.Split(text, "\n")...)
}

// frameSpare is how many of the terminal's rows the live region always
// leaves free, and so how many rows one print may take. Bubble Tea prints
// above the live region by scrolling the screen by the printed rows: if
// the live region and the print together were taller than the screen,
// the top of the live region would be scrolled into the scrollback. The
// renderer may still show an earlier, taller frame than the last View
// when a print arrives, so the bound is on every frame, and prints go a
// few rows at a time.
const frameSpare = 2

// flushOutbox prints the next queued rows, once the previous print is
// done; printedMsg brings the next ones.
func (m *model) flushOutbox() tea.Cmd {
	if m.printing || len(m.outbox) == 0 {
		return nil
	}
	n, rows := 0, 0
	for n < len(m.outbox) {
		r := max(1, (lipgloss.Width(m.outbox[n])+m.width-1)/max(m.width, 1))
		if n > 0 && rows+r > frameSpare {
			break
		}
		rows += r
		n++
	}
	text := downsample(m.profile, strings.Join(m.outbox[:n], "\n"))
	m.outbox = m.outbox[n:]
	if len(m.outbox) == 0 {
		m.outbox = nil
	}
	m.printing = true
	return m.fx.print(text)
}

// setNotice shows a transient notice below the live region.
func (m *model) setNotice(text string, isErr bool) tea.Cmd {
	m.noticeSeq++
	m.notice, m.noticeErr = text, isErr
	return m.fx.after(noticeTime, noticeExpiredMsg{m.noticeSeq})
}

// startWork marks the start of work the spinner shows.
func (m *model) startWork() tea.Cmd {
	m.started = m.cfg.Now()
	if m.ticking {
		return nil
	}
	m.ticking = true
	return m.fx.after(spinnerPeriod, tickMsg{})
}

func (m *model) tick(tickMsg) tea.Cmd {
	if !m.busy() && m.command == nil {
		m.ticking = false
		return nil
	}
	m.spin = (m.spin + 1) % len(spinnerFrames)
	return m.fx.after(spinnerPeriod, tickMsg{})
}

// shutdown stops the work still running when the program ended. A
// remote turn is left to run: it is another client's.
func (m *model) shutdown() {
	if m.turn != nil && !m.turn.remote {
		m.turn.cancel()
		m.session.Abort(nil)
	}
	if m.shell != nil {
		m.shell.cancel()
	}
	if m.command != nil {
		m.command.cancel()
	}
	for _, a := range m.approvals {
		select {
		case a.answer <- approvalAnswer{outcome: "cancel"}:
		default:
		}
	}
}
