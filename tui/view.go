package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// View implements tea.Model: the live region only; finished history is in
// the terminal's scrollback.
func (m *model) View() tea.View {
	if m.quitting {
		// Leave the terminal with its scrollback and a clean prompt.
		return tea.NewView("")
	}
	content, inputTop := m.render()
	v := tea.NewView(content)
	if inputTop >= 0 {
		if c := m.input.Cursor(); c != nil {
			c.Position.X += 2 // the box's border and padding
			c.Position.Y += inputTop + 1
			v.Cursor = c
		}
	}
	return v
}

// render lays out the live region; inputTop is the line of the input
// box's top border, or -1 when no input box is shown.
func (m *model) render() (string, int) {
	var bottom []string
	inputTop := -1
	if m.notice != "" {
		st := m.st.info
		if m.noticeErr {
			st = m.st.err
		}
		bottom = append(bottom, st.Render(truncate(m.notice, m.width)))
	}
	footer := m.footer()
	limit := m.height - frameSpare
	room := limit - lineCount(footer) - lineCount(strings.Join(bottom, "\n"))
	switch {
	case m.picker != nil:
		bottom = append(bottom, m.pickerView(room))
	case m.dialog.a != nil:
		bottom = append(bottom, m.dialogView(room))
	default:
		inputTop = lineCount(strings.Join(bottom, "\n"))
		if len(bottom) == 0 {
			inputTop = 0
		}
		bottom = append(bottom, m.st.inputBox.Width(m.width).Render(m.input.View()))
		if m.comp.active && len(m.comp.cands) > 1 {
			bottom = append(bottom, m.candidates())
		}
	}
	bottom = append(bottom, footer)
	below := strings.Join(bottom, "\n")
	if n := lineCount(below); n > limit {
		// A terminal too small for the box and the footer: keep the end.
		below, _ = lastLines(below, max(limit, 1))
		inputTop -= n - max(limit, 1)
		if inputTop < 0 {
			inputTop = -1
		}
	}
	budget := limit - lineCount(below)
	live := m.liveView(budget)
	if live == "" {
		return below, inputTop
	}
	if inputTop >= 0 {
		inputTop += lineCount(live)
	}
	return live + "\n" + below, inputTop
}

// liveView renders what streams, at most budget lines (the last ones).
func (m *model) liveView(budget int) string {
	if budget <= 0 {
		return ""
	}
	w := m.contentWidth()
	var parts []string
	s := &m.stream
	if m.turn != nil {
		if s.thinking {
			text := strings.TrimSpace(s.thought.String())
			if m.showThoughts {
				t, _ := lastLines(wrap("✦ "+text, w), 6)
				parts = append(parts, m.st.thought.Render(t))
			} else {
				parts = append(parts, m.st.thought.Render(truncate("✦ "+thoughtSubject(text)+" (Ctrl+T shows thoughts)", w)))
			}
		}
		if live := s.split.live(); strings.TrimSpace(live) != "" {
			r := m.md.renderLive(live)
			if s.split.gap && s.printedText {
				r = "\n" + r
			}
			parts = append(parts, r)
		}
		for _, tv := range s.tools {
			if m.dialog.a != nil && m.dialog.a.req.CallID == tv.id {
				continue // the dialog shows it
			}
			parts = append(parts, m.toolLine(tv))
		}
	}
	if sh := m.shell; sh != nil {
		head := m.st.accent.Render(spinnerFrames[m.spin]+" ! ") + truncate(sanitize(oneLine(sh.command)), w-4)
		if out, earlier := sh.out.tail(liveOutputLines); out != "" {
			head += "\n" + indent(m.outputBox(out, earlier, w-2), "  ")
		}
		parts = append(parts, head)
	}
	if status := m.status(); status != "" {
		parts = append(parts, status)
	}
	for _, t := range m.remote {
		line := "Queued [" + originOf(t) + "]: " + oneLine(sanitize(t.Text))
		parts = append(parts, m.st.dim.Render(truncate(line, w)))
	}
	for _, q := range m.queued {
		parts = append(parts, m.st.dim.Render(truncate("Queued: "+oneLine(q.typed), w)))
	}
	out := strings.Join(parts, "\n")
	if lineCount(out) > budget {
		out, _ = lastLines(out, budget)
	}
	return out
}

// toolLine renders a tool call under way with its live output.
func (m *model) toolLine(tv *toolView) string {
	w := m.contentWidth()
	mark := m.st.dim.Render("·")
	state := m.st.dim.Render(" (pending)")
	switch {
	case m.queuedApproval(tv.id):
		mark = m.st.warn.Render("?")
		state = m.st.warn.Render(" (awaiting approval)")
	case tv.status == toolRunning:
		mark = m.st.accent.Render(spinnerFrames[m.spin])
		state = ""
	}
	line := truncate(mark+" "+lipglossBold(tv.name)+" "+m.st.dim.Render(tv.desc), w-lipgloss.Width(state)) + state
	if out, earlier := tv.out.tail(liveOutputLines); out != "" {
		line += "\n" + indent(m.outputBox(out, earlier, w-2), "  ")
	}
	return line
}

// queuedApproval reports whether a call waits for approval.
func (m *model) queuedApproval(callID string) bool {
	for _, a := range m.approvals {
		if a.req.CallID == callID {
			return true
		}
	}
	return false
}

// status is the spinner line while work runs.
func (m *model) status() string {
	var what string
	switch {
	case m.turn != nil && m.turn.aborted:
		what = "Cancelling…"
	case m.turn != nil && m.dialog.a != nil:
		what = "Waiting for your confirmation…"
	case m.turn != nil && m.stream.thinking:
		what = "Thinking…"
	case m.turn != nil:
		what = "Responding…"
	case m.shell != nil:
		what = "Running the command…"
	case m.command != nil:
		what = "Running /command…"
	default:
		return ""
	}
	elapsed := m.cfg.Now().Sub(m.started).Truncate(time.Second)
	return m.st.accent.Render(spinnerFrames[m.spin]) + " " + what +
		m.st.dim.Render(fmt.Sprintf(" (esc to cancel, %s)", elapsed))
}

// candidates lists Tab's candidates, the current one marked.
func (m *model) candidates() string {
	var b strings.Builder
	for i, c := range m.comp.cands {
		if i > 0 {
			b.WriteString("  ")
		}
		if i == m.comp.i {
			b.WriteString(m.st.selected.Render(c))
		} else {
			b.WriteString(m.st.dim.Render(c))
		}
	}
	return truncate(b.String(), m.width)
}

// footer is the status line: workspace, model, approval mode, context
// left, session id.
func (m *model) footer() string {
	var items []string
	if m.shellMode {
		items = append(items, m.st.warn.Render("shell mode (esc to leave)"))
	}
	if ws := m.workspace(); ws != "" {
		items = append(items, ws)
	}
	if m.modelName != "" {
		items = append(items, m.modelName)
	}
	if m.cfg.ApprovalMode != nil {
		if mode := m.cfg.ApprovalMode(); mode != "" {
			items = append(items, mode)
		}
	}
	if m.cfg.ContextWindow != nil {
		if window := m.cfg.ContextWindow(m.modelName); window > 0 {
			left := max(0, 100-m.inputTokens*100/window)
			items = append(items, fmt.Sprintf("%d%% context left", left))
		}
	}
	if id := m.session.ID(); id != "" {
		items = append(items, "session "+shortID(id))
	}
	return m.st.footer.Render(truncate(strings.Join(items, " · "), m.width))
}

// workspace is the workspace path for the footer, the home directory as ~,
// shortened from the left to a third of the width.
func (m *model) workspace() string {
	ws := m.cfg.Workspace
	if ws == "" {
		return ""
	}
	home := envValue(m.cfg.Env, "HOME")
	if home == "" && m.cfg.Env == nil {
		home, _ = os.UserHomeDir()
	}
	if home != "" && home != "/" {
		if ws == home {
			ws = "~"
		} else if rel, ok := strings.CutPrefix(ws, home+string(filepath.Separator)); ok {
			ws = "~" + string(filepath.Separator) + rel
		}
	}
	limit := max(m.width/3, 12)
	if n := len([]rune(ws)); n > limit {
		r := []rune(ws)
		ws = "…" + string(r[n-limit+1:])
	}
	return sanitize(ws)
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}
