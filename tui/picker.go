package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// pickItem is one choice of a picker.
type pickItem struct {
	id, label, detail string
}

// picker is a list to choose one item from (/rewind, /resume): Up and
// Down move, Enter picks, Esc closes.
type picker struct {
	title  string
	items  []pickItem
	sel    int
	onPick func(id string) tea.Cmd
}

func (m *model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch k.String() {
	case "up", "ctrl+p", "k":
		if p.sel > 0 {
			p.sel--
		}
	case "down", "ctrl+n", "j":
		if p.sel < len(p.items)-1 {
			p.sel++
		}
	case "home":
		p.sel = 0
	case "end":
		p.sel = len(p.items) - 1
	case "enter":
		m.picker = nil
		return p.onPick(p.items[p.sel].id)
	case "esc", "ctrl+c":
		m.picker = nil
	}
	return nil
}

// pickerView renders the picker in at most height lines.
func (m *model) pickerView(height int) string {
	p := m.picker
	w := m.width - 4
	rows := max(height-4, 1)
	first := 0
	if p.sel >= rows {
		first = p.sel - rows + 1
	}
	last := min(first+rows, len(p.items))
	var b strings.Builder
	b.WriteString(m.st.accent.Render(p.title))
	for i := first; i < last; i++ {
		it := p.items[i]
		mark := "  "
		label := it.label
		if i == p.sel {
			mark = m.st.selected.Render("● ")
			label = m.st.selected.Render(label)
		}
		line := mark + strconv.Itoa(i+1) + ". " + label
		if it.detail != "" {
			line += m.st.dim.Render("  " + it.detail)
		}
		b.WriteString("\n" + truncate(line, w-2))
	}
	b.WriteString("\n" + m.st.dim.Render(fmt.Sprintf("(%d/%d) ↑/↓ to move, Enter to choose, Esc to close", p.sel+1, len(p.items))))
	return m.st.box.Width(m.width).Render(b.String())
}
