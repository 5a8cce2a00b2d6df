package mdrender

import (
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
)

// style says how a span is shown: attributes, a heading level and a
// role, combined into one lipgloss style.
type style uint16

// Attributes combine with each other and with a heading level.
const (
	sBold style = 1 << iota
	sItalic
	sCode
	sLink
	sURL

	headingShift = 5 // bits 5-7: the heading level, 0 outside headings
	roleShift    = 8 // bits 8-10: a block's role
)

// Roles of block parts; they do not combine with attributes.
const (
	sRule      style = 1 << roleShift
	sQuote     style = 2 << roleShift
	sCodeBlock style = 3 << roleShift
	sBorder    style = 4 << roleShift
)

// headingStyle is the style of a heading of a level, 1 to 6.
func headingStyle(level int) style { return style(level) << headingShift }

// sgr is a style's escape sequences: what opens it and what closes it.
type sgr struct{ open, close string }

// render styles s.
func (g sgr) render(s string) string {
	if g.open == "" || s == "" {
		return s
	}
	return g.open + s + g.close
}

// palette is the ANSI colours of a theme.
type palette struct {
	h1Fg, h1Bg, heading, h6, code, codeBlock, link, dim string
}

var (
	darkPalette  = palette{h1Fg: "15", h1Bg: "5", heading: "12", h6: "5", code: "9", codeBlock: "8", link: "6", dim: "8"}
	lightPalette = palette{h1Fg: "15", h1Bg: "5", heading: "4", h6: "5", code: "1", codeBlock: "8", link: "6", dim: "8"}
)

// theme turns styles into escape sequences, through lipgloss, and
// remembers them.
type theme struct {
	p palette

	mu    sync.Mutex
	cache map[style]sgr
}

func newTheme(name string) *theme {
	p := darkPalette
	if name == "light" {
		p = lightPalette
	}
	return &theme{p: p, cache: make(map[style]sgr)}
}

// style returns st's escape sequences.
func (th *theme) style(st style) sgr {
	th.mu.Lock()
	defer th.mu.Unlock()
	if g, ok := th.cache[st]; ok {
		return g
	}
	g := th.compose(st)
	th.cache[st] = g
	return g
}

// compose builds st's lipgloss style and takes its sequences from a
// rendering of one letter.
func (th *theme) compose(st style) sgr {
	c := lipgloss.Color
	s := lipgloss.NewStyle()
	switch st &^ (1<<roleShift - 1) {
	case sRule, sQuote, sBorder:
		s = s.Foreground(c(th.p.dim))
	case sCodeBlock:
		s = s.Foreground(c(th.p.codeBlock))
	}
	switch level := int(st>>headingShift) & 7; {
	case level == 1:
		s = s.Bold(true).Foreground(c(th.p.h1Fg)).Background(c(th.p.h1Bg))
	case level >= 2 && level <= 5:
		s = s.Bold(true).Foreground(c(th.p.heading))
	case level == 6:
		s = s.Foreground(c(th.p.h6))
	}
	if st&sCode != 0 {
		s = s.Foreground(c(th.p.code))
	}
	if st&sLink != 0 {
		s = s.Foreground(c(th.p.link))
	}
	if st&sURL != 0 {
		s = s.Foreground(c(th.p.dim)).Underline(true)
	}
	if st&sBold != 0 {
		s = s.Bold(true)
	}
	if st&sItalic != 0 {
		s = s.Italic(true)
	}
	probe := s.Render("x")
	i := strings.IndexByte(probe, 'x')
	if i < 0 {
		return sgr{}
	}
	return sgr{open: probe[:i], close: probe[i+1:]}
}
