package tui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Paste bounds: a paste is cut at maxPaste; one of more than
// pasteLines lines or pasteBytes bytes shows as a placeholder in the input
// box and is sent as pasted.
const (
	maxPaste   = 1 << 20
	pasteLines = 5
	pasteBytes = 2000
)

const placeholderText = "Type your message or @path/to/file"

func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = placeholderText
	ta.CharLimit = 0
	ta.MaxWidth = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.SetVirtualCursor(false)
	s := textarea.DefaultStyles(true)
	s.Focused.CursorLine = lipgloss.NewStyle()
	s.Focused.Placeholder = lipgloss.NewStyle().Faint(true)
	s.Focused.Prompt = lipgloss.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	s.Cursor.Blink = false
	ta.SetStyles(s)
	km := textarea.DefaultKeyMap()
	// Enter submits; these keys insert a newline (the terminal handles
	// `\`+Enter).
	km.InsertNewline = key.NewBinding(key.WithKeys("ctrl+j", "alt+enter", "shift+enter", "ctrl+enter"))
	// Terminals paste with bracketed paste; no clipboard tool is run.
	km.Paste = key.NewBinding(key.WithDisabled())
	km.SelectAll = key.NewBinding(key.WithDisabled())
	ta.KeyMap = km
	ta.Focus()
	return ta
}

// setPrompt sets the input's prompt for the mode: "> ", or "! " in shell
// mode.
func (m *model) setPrompt() {
	mark := ">"
	m.input.Placeholder = placeholderText
	if m.shellMode {
		mark = "!"
		m.input.Placeholder = "Type a shell command"
	}
	m.input.SetPromptFunc(2, func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return mark + " "
		}
		return "  "
	})
}

// history walks this run's prompts (newest first), then the stored ones.
type history struct {
	session []string
	stored  []string
	pos     int // index into entries(); -1 while editing the draft
	draft   string
}

func (h *history) entries() []string {
	out := make([]string, 0, len(h.session)+len(h.stored))
	for _, lists := range [][]string{h.session, h.stored} {
		for _, e := range lists {
			if len(out) > 0 && out[len(out)-1] == e {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

func (h *history) add(prompt string) {
	h.session = append([]string{prompt}, h.session...)
	h.pos = -1
}

// completion is Tab's state: the candidates of the last Tab and the one
// shown. Any other key ends it.
type completion struct {
	active bool
	base   string // the input before its last token
	cands  []string
	i      int
}

// key handles a key press.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if ks != "tab" {
		m.comp.active = false
	}
	if m.picker != nil {
		return m.pickerKey(k)
	}
	if len(m.approvals) > 0 {
		return m.dialogKey(k)
	}
	switch ks {
	case "ctrl+c":
		return m.ctrlC()
	case "esc":
		return m.escape()
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.quit()
		}
	case "ctrl+l":
		if m.busy() {
			m.clearAfterTurn = true
			return nil
		}
		return m.fx.clear()
	case "ctrl+t":
		m.showThoughts = !m.showThoughts
		state := "hidden"
		if m.showThoughts {
			state = "shown"
		}
		return m.setNotice("Thoughts are "+state+" (Ctrl+T).", false)
	case "enter":
		return m.enter()
	case "tab":
		return m.complete()
	case "up", "ctrl+p":
		if m.atFirstLine() {
			m.historyMove(1)
			return nil
		}
	case "down", "ctrl+n":
		if m.atLastLine() && m.hist.pos >= 0 {
			m.historyMove(-1)
			return nil
		}
	case "!":
		if m.input.Value() == "" && m.cfg.Shell != nil {
			m.shellMode = !m.shellMode
			m.setPrompt()
			return nil
		}
	case "backspace":
		if m.shellMode && m.input.Value() == "" {
			m.shellMode = false
			m.setPrompt()
			return nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

func (m *model) atFirstLine() bool {
	return m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0
}

func (m *model) atLastLine() bool {
	li := m.input.LineInfo()
	return m.input.Line() == m.input.LineCount()-1 && li.RowOffset >= li.Height-1
}

// historyMove moves dir entries back (1) or forward (-1) in history.
func (m *model) historyMove(dir int) {
	entries := m.hist.entries()
	pos := m.hist.pos + dir
	if pos >= len(entries) || pos < -1 {
		return
	}
	if m.hist.pos == -1 {
		m.hist.draft = m.input.Value()
	}
	m.hist.pos = pos
	if pos == -1 {
		m.input.SetValue(m.hist.draft)
	} else {
		m.input.SetValue(entries[pos])
	}
	if dir > 0 {
		m.input.MoveToBegin()
	} else {
		m.input.MoveToEnd()
	}
}

// complete handles Tab: the first press replaces the input's last token by
// the first candidate, the next ones cycle through the others.
func (m *model) complete() tea.Cmd {
	if m.cfg.Complete == nil {
		return nil
	}
	if m.comp.active && len(m.comp.cands) > 1 {
		m.comp.i = (m.comp.i + 1) % len(m.comp.cands)
		m.input.SetValue(m.comp.base + m.comp.cands[m.comp.i])
		return nil
	}
	value := m.input.Value()
	cands := m.cfg.Complete(value)
	if len(cands) == 0 {
		m.comp = completion{}
		return nil
	}
	start := strings.LastIndexAny(value, " \t\n") + 1
	m.comp = completion{active: true, base: value[:start], cands: cands}
	m.input.SetValue(m.comp.base + cands[0])
	return nil
}

// paste inserts pasted text. Large text shows as a placeholder and is
// sent as pasted.
func (m *model) paste(text string) tea.Cmd {
	if m.picker != nil || len(m.approvals) > 0 {
		return nil
	}
	m.comp.active = false
	var cmd tea.Cmd
	if len(text) > maxPaste {
		cut := maxPaste
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
		cmd = m.setNotice(fmt.Sprintf("The paste was cut to its first %d KiB.", maxPaste>>10), true)
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Count(text, "\n") + 1
	if lines > pasteLines || len(text) > pasteBytes {
		m.pasteN++
		ph := fmt.Sprintf("[Pasted text #%d: %d lines]", m.pasteN, lines)
		m.pastes[ph] = text
		m.input.InsertString(ph)
		return cmd
	}
	m.input.InsertString(text)
	return cmd
}

// expandPastes replaces the paste placeholders still in text by what was
// pasted.
func (m *model) expandPastes(text string) string {
	for ph, content := range m.pastes {
		text = strings.ReplaceAll(text, ph, content)
	}
	return text
}

// enter submits the input, or with `\` before the cursor inserts a
// newline in its place.
func (m *model) enter() tea.Cmd {
	value := m.input.Value()
	if strings.HasSuffix(m.lineBeforeCursor(), `\`) {
		m.input, _ = m.input.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
		m.input.InsertString("\n")
		return nil
	}
	if strings.TrimSpace(value) == "" {
		return nil
	}
	shellMode := m.shellMode
	m.input.Reset()
	m.hist.pos = -1
	if shellMode {
		return m.submit("!" + value)
	}
	return m.submit(value)
}

// lineBeforeCursor is the text of the cursor's line before the cursor.
func (m *model) lineBeforeCursor() string {
	lines := strings.Split(m.input.Value(), "\n")
	row := m.input.Line()
	if row >= len(lines) {
		return ""
	}
	r := []rune(lines[row])
	col := min(m.input.Column(), len(r))
	return string(r[:col])
}

// submit handles a submitted line: a `!` command, a slash command or a
// prompt for the model.
func (m *model) submit(line string) tea.Cmd {
	m.hist.add(line)
	var cmds []tea.Cmd
	if h := m.cfg.History; h != nil {
		cmds = append(cmds, func() tea.Msg {
			if err := h.Add(line); err != nil {
				return noticeMsg{text: "Cannot save the prompt history: " + err.Error(), isErr: true}
			}
			return nil
		})
	}
	full := m.expandPastes(line)
	if !m.busy() && len(m.queued) == 0 && len(m.remote) == 0 {
		// A queued prompt keeps its placeholders: a cancelled turn puts
		// it back into the input box.
		m.pastes = map[string]string{}
	}
	switch {
	case strings.HasPrefix(full, "!") && len(strings.TrimSpace(full)) > 1:
		cmds = append(cmds, m.runShell(strings.TrimSpace(full[1:])))
	case isCommand(full):
		cmds = append(cmds, m.runCommand(line, full))
	default:
		cmds = append(cmds, m.prompt(line, full))
	}
	return tea.Batch(cmds...)
}

// isCommand reports whether a line is a slash command: it starts with "/"
// but not "//" or "/*" (gemini-cli).
func isCommand(line string) bool {
	return strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "//") && !strings.HasPrefix(line, "/*")
}

// ctrlC cancels what runs, clears the input, or exits on a second press
// within exitWindow.
func (m *model) ctrlC() tea.Cmd {
	if m.busy() || m.command != nil {
		return m.cancelWork()
	}
	if m.input.Value() != "" {
		m.input.Reset()
		m.hist.pos = -1
		return nil
	}
	now := m.cfg.Now()
	if !m.ctrlCAt.IsZero() && now.Sub(m.ctrlCAt) < exitWindow {
		return m.quit()
	}
	m.ctrlCAt = now
	return m.setNotice("Press Ctrl+C again to exit.", false)
}

// escape cancels what runs or leaves shell mode.
func (m *model) escape() tea.Cmd {
	if m.busy() || m.command != nil {
		return m.cancelWork()
	}
	if m.shellMode {
		m.shellMode = false
		m.setPrompt()
	}
	return nil
}

// quit ends the program; Run stops what still runs.
func (m *model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}
