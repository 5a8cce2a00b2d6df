package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentry-dev/agentry/tools"
)

// maxDiffBytes bounds the text diffed for display: a diff of larger files
// is summarised by its line counts instead (the diff is quadratic at
// worst, and the terminal would show a few lines of it anyway).
const maxDiffBytes = 1 << 20

// renderDiff renders the unified diff of an edit, coloured, each line cut
// to width, at most maxLines lines (a last line says how many were left
// out). A new file's diff is all additions.
func renderDiff(st styles, path, before, after string, width, maxLines int) string {
	if len(before)+len(after) > maxDiffBytes {
		return st.dim.Render(fmt.Sprintf("(%s: %d → %d lines; too large to show)", filepath.Base(path),
			strings.Count(before, "\n"), strings.Count(after, "\n")))
	}
	before, after = sanitize(before), sanitize(after)
	name := filepath.Base(path)
	d := tools.UnifiedDiff(name, before, after)
	if d == "" {
		return st.dim.Render("(no changes)")
	}
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if maxLines < 3 {
		maxLines = 3
	}
	more := 0
	if len(lines) > maxLines {
		more = len(lines) - (maxLines - 1)
		lines = lines[:maxLines-1]
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		l = truncate(l, width)
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			b.WriteString(st.dim.Render(l))
		case strings.HasPrefix(l, "@@"):
			b.WriteString(st.hunk.Render(l))
		case strings.HasPrefix(l, "+"):
			b.WriteString(st.added.Render(l))
		case strings.HasPrefix(l, "-"):
			b.WriteString(st.removed.Render(l))
		case strings.HasPrefix(l, `\`):
			b.WriteString(st.dim.Render(l))
		default:
			b.WriteString(l)
		}
	}
	if more > 0 {
		b.WriteByte('\n')
		b.WriteString(st.dim.Render(fmt.Sprintf("… %d more diff lines", more)))
	}
	return b.String()
}
