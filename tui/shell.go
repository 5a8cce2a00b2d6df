package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// maxShellHistory bounds the `!` results waiting for the next prompt.
const maxShellHistory = 10

// shellRun is a `!` command running.
type shellRun struct {
	id      int
	command string
	cancel  context.CancelFunc
	out     termBuf
}

// shellOutputMsg carries output of a `!` command.
type shellOutputMsg struct {
	id    int
	chunk string
}

// shellDoneMsg ends a `!` command.
type shellDoneMsg struct {
	id      int
	history string
	err     error
}

// runShell runs a `!` command through Config.Shell; its output shows live
// and its result goes to the model with the next prompt.
func (m *model) runShell(command string) tea.Cmd {
	if m.cfg.Shell == nil {
		return m.setNotice("Shell commands are not available.", true)
	}
	if m.busy() {
		return m.setNotice("Wait for the work under way to finish, or press Esc to cancel it.", true)
	}
	m.println(m.st.accent.Render("! ") + truncate(sanitize(oneLine(command)), m.contentWidth()-2))
	m.nextID++
	ctx, cancel := context.WithCancel(m.ctx)
	sh := &shellRun{id: m.nextID, command: command, cancel: cancel}
	m.shell = sh
	shell, mb, id := m.cfg.Shell, m.mb, sh.id
	run := func() tea.Msg {
		defer cancel()
		hist, err := shell(ctx, command, func(chunk string) { mb.push(shellOutputMsg{id, chunk}) })
		mb.push(shellDoneMsg{id, hist, err})
		return nil
	}
	return tea.Batch(run, m.startWork())
}

// shellDone prints a finished `!` command and keeps its result for the
// next prompt.
func (m *model) shellDone(msg shellDoneMsg) tea.Cmd {
	sh := m.shell
	if sh == nil || sh.id != msg.id {
		return nil
	}
	m.shell = nil
	w := m.contentWidth()
	var b strings.Builder
	if out, earlier := sh.out.tail(finalOutputLines); out != "" {
		b.WriteString(indent(m.outputBox(out, earlier, w-2), "  "))
	}
	if msg.err != nil {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		text := "Command failed: " + sanitize(msg.err.Error())
		if errors.Is(msg.err, context.Canceled) {
			text = "Command was cancelled."
		}
		b.WriteString(m.st.err.Render(wrap(text, w)))
	}
	if b.Len() > 0 {
		m.printlnTight(b.String())
	}
	if msg.history != "" {
		m.shellHistory = append(m.shellHistory, msg.history)
		if n := len(m.shellHistory); n > maxShellHistory {
			m.shellHistory = m.shellHistory[n-maxShellHistory:]
		}
	}
	return m.afterWork()
}

// outputBox frames a process's last output lines; earlier counts the lines
// left out above them.
func (m *model) outputBox(out string, earlier, width int) string {
	inner := max(width-4, 10)
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = truncate(l, inner)
	}
	if earlier > 0 {
		lines = append([]string{m.st.dim.Render(fmt.Sprintf("… %d earlier lines", earlier))}, lines...)
	}
	return m.st.box.Width(width).Render(strings.Join(lines, "\n"))
}

// lipglossBold renders s bold.
func lipglossBold(s string) string { return lipgloss.NewStyle().Bold(true).Render(s) }
