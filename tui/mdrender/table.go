package mdrender

import (
	"strings"

	xansi "github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// align is a table column's alignment.
type align byte

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// table lays out a paragraph that is a GFM table (a header row, a
// delimiter row, body rows) as aligned columns, or returns nil if it is
// not one. A table too wide for the width shows each row as wrapped
// text, its cells separated by bars.
func (rd *rendering) table(n *ast.Paragraph, width int) []string {
	lines := n.Lines()
	if lines.Len() < 2 {
		return nil
	}
	head := string(segValue(lines, 0, rd.src))
	delim := string(segValue(lines, 1, rd.src))
	if !strings.Contains(head, "|") && !strings.Contains(delim, "|") {
		return nil
	}
	aligns, ok := delimiterRow(delim)
	if !ok {
		return nil
	}
	cols := len(aligns)
	if len(splitRow(head)) != cols {
		return nil
	}
	th := rd.r.theme
	rows := make([][]string, 0, lines.Len()-1)
	spans := make([][]span, 0, lines.Len()-1) // each row's, for a table too wide
	widths := make([]int, cols)
	for i := 0; i < lines.Len(); i++ {
		if i == 1 {
			continue
		}
		cells := splitRow(string(segValue(lines, i, rd.src)))
		row := make([]string, cols)
		var rs []span
		for c := range row {
			if c > 0 {
				rs = append(rs, span{text: " │ ", st: sBorder})
			}
			if c >= len(cells) {
				continue
			}
			st := style(0)
			if i == 0 {
				st = sBold
			}
			cs := rd.cell(cells[c], st)
			rs = append(rs, cs...)
			row[c] = strings.Join(th.wrap(cs, 1<<30), " ")
			widths[c] = max(widths[c], xansi.StringWidth(row[c]))
		}
		rows = append(rows, row)
		spans = append(spans, rs)
	}
	bar := th.style(sBorder).render(" │ ")
	total := 3 * (cols - 1)
	for _, w := range widths {
		total += w
	}
	var out []string
	if total > width {
		for _, rs := range spans {
			out = append(out, th.wrap(rs, width)...)
		}
		return out
	}
	for r, row := range rows {
		last := len(row) - 1 // the last cell shown: empty ones after it are not
		for last > 0 && row[last] == "" {
			last--
		}
		var b strings.Builder
		for c, cell := range row[:last+1] {
			if c > 0 {
				b.WriteString(bar)
			}
			pad := widths[c] - xansi.StringWidth(cell)
			left := 0
			switch aligns[c] {
			case alignRight:
				left = pad
			case alignCenter:
				left = pad / 2
			}
			b.WriteString(strings.Repeat(" ", left))
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", pad-left))
		}
		out = append(out, strings.TrimRight(b.String(), " "))
		if r == 0 {
			parts := make([]string, cols)
			for c, w := range widths {
				parts[c] = strings.Repeat("─", w)
			}
			out = append(out, th.style(sBorder).render(strings.Join(parts, "─┼─")))
		}
	}
	return out
}

// cell returns the spans of a cell's Markdown.
func (rd *rendering) cell(md string, st style) []span {
	if !strings.ContainsAny(md, "*_`[<&\\!") {
		return appendText(nil, md, st)
	}
	src := []byte(md)
	doc := rd.r.parser.Parse(text.NewReader(src))
	p, ok := doc.FirstChild().(*ast.Paragraph)
	if !ok || p.NextSibling() != nil {
		return appendText(nil, md, st)
	}
	sub := &rendering{r: rd.r, src: src}
	return sub.inlines(p, st)
}

// delimiterRow parses a table's delimiter row ("| :-- | --: |").
func delimiterRow(line string) ([]align, bool) {
	cells := splitRow(line)
	if len(cells) == 0 {
		return nil, false
	}
	aligns := make([]align, len(cells))
	for i, c := range cells {
		c = strings.TrimSpace(c)
		l, r := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		c = strings.Trim(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return nil, false
		}
		switch {
		case l && r:
			aligns[i] = alignCenter
		case r:
			aligns[i] = alignRight
		}
	}
	return aligns, true
}

// splitRow splits a table row at the bars that are not escaped, without
// the bars at its ends; cells are trimmed of spaces.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}

// segValue is the text of a block's line i.
func segValue(lines *text.Segments, i int, src []byte) []byte {
	seg := lines.At(i)
	return seg.Value(src)
}
