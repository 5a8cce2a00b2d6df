package tui

import (
	"bytes"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/agentry-dev/agentry/internal/ansi"
)

// styles are the terminal's styles. They use the 16 ANSI colours, which
// every terminal (and tmux) has and the user's theme sets; the renderer
// and downsample reduce them to the terminal's profile (none under
// NO_COLOR).
type styles struct {
	user, origin, accent, dim, thought, warn, err, ok, info lipgloss.Style
	added, removed, hunk                                    lipgloss.Style
	box, dialog, inputBox                                   lipgloss.Style
	selected, footer, key                                   lipgloss.Style
}

func newStyles() styles {
	c := func(n string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(n)) }
	border := lipgloss.RoundedBorder()
	return styles{
		user:     c("4").Bold(true),
		origin:   c("4").Faint(true),
		accent:   c("5").Bold(true),
		dim:      c("8"),
		thought:  c("8").Italic(true),
		warn:     c("3"),
		err:      c("1"),
		ok:       c("2"),
		info:     c("6"),
		added:    c("2"),
		removed:  c("1"),
		hunk:     c("6"),
		box:      lipgloss.NewStyle().Border(border).BorderForeground(lipgloss.Color("8")).Padding(0, 1),
		dialog:   lipgloss.NewStyle().Border(border).BorderForeground(lipgloss.Color("3")).Padding(0, 1),
		inputBox: lipgloss.NewStyle().Border(border).BorderForeground(lipgloss.Color("8")).Padding(0, 1),
		selected: c("2").Bold(true),
		footer:   c("8"),
		key:      c("6"),
	}
}

// downsample converts s's colours to the profile, as the renderer does for
// the live region: text printed to scrollback bypasses the renderer.
// Under NO_COLOR (profile Ascii) colours go and attributes stay; when the
// output is no terminal (NoTTY) every escape goes.
func downsample(p colorprofile.Profile, s string) string {
	if p == colorprofile.TrueColor || !strings.ContainsRune(s, 0x1b) {
		return s
	}
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	_, _ = w.WriteString(s)
	return buf.String()
}

// sanitize makes text from the model, a tool or a file safe to show:
// terminal escape sequences and control characters go (a reply or a file
// must not rewrite the user's terminal), tabs become four spaces.
func sanitize(s string) string { return ansi.DropControls(ansi.Strip(s)) }

// termBuf keeps the tail of a process's output as a terminal would show
// it: escape sequences and control characters dropped, a carriage return
// going back to the start of its line (progress bars), at most
// maxTermBuf bytes, cut at a line start.
type termBuf struct {
	b  []byte
	cr bool // the last chunk ended with a carriage return
}

const maxTermBuf = 64 << 10

func (t *termBuf) write(chunk string) {
	chunk = ansi.Strip(chunk)
	if t.cr && chunk != "" {
		t.cr = false
		if chunk[0] != '\n' {
			t.b = t.b[:bytes.LastIndexByte(t.b, '\n')+1]
		}
	}
	for i := 0; i < len(chunk); i++ {
		switch c := chunk[i]; {
		case c == '\r':
			switch {
			case i+1 == len(chunk):
				t.cr = true
			case chunk[i+1] != '\n':
				t.b = t.b[:bytes.LastIndexByte(t.b, '\n')+1]
			}
		case c == '\t':
			t.b = append(t.b, "    "...)
		case c == '\n' || c >= 0x20 && c != 0x7f:
			t.b = append(t.b, c)
		}
	}
	if len(t.b) > maxTermBuf {
		cut := len(t.b) - maxTermBuf/2
		if i := bytes.IndexByte(t.b[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		t.b = append(t.b[:0], t.b[cut:]...)
	}
}

// tail returns the last n lines (without a trailing empty line) and how
// many earlier lines the buffer still holds.
func (t *termBuf) tail(n int) (string, int) {
	s := strings.TrimRight(sanitize(string(t.b)), "\n")
	if s == "" {
		return "", 0
	}
	return lastLines(s, n)
}

// truncate cuts s to width cells with an ellipsis.
func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return xansi.Truncate(s, width, "…")
}

// wrap wraps plain text to width, breaking long words.
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	return xansi.Wrap(s, width, "")
}

// lastLines returns at most n of s's last lines and how many it dropped.
func lastLines(s string, n int) (string, int) {
	if n <= 0 {
		return "", strings.Count(s, "\n") + 1
	}
	end := len(s)
	for i := 0; i < n; i++ {
		j := strings.LastIndexByte(s[:end], '\n')
		if j < 0 {
			return s, 0
		}
		end = j
	}
	return s[end+1:], strings.Count(s[:end], "\n") + 1
}
