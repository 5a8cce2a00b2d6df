package mdrender

import (
	"strings"
	"unicode/utf8"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/agentry-dev/agentry/internal/ansi"
)

// span is a run of text in one style. A "\n" in it is a hard line break.
type span struct {
	text string
	st   style
}

// appendText appends text, cleaned of controls, as a span.
func appendText(spans []span, text string, st style) []span {
	text = ansi.DropControls(text)
	if text == "" {
		return spans
	}
	return append(spans, span{text: text, st: st})
}

// cellWidth is the cells text takes in a terminal.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return xansi.StringWidth(s)
		}
	}
	return len(s)
}

// wrapper lays spans out in lines of at most width cells, breaking at
// spaces, and words longer than a line between grapheme clusters.
type wrapper struct {
	th    *theme
	width int

	lines   []string
	line    strings.Builder // the line being filled: its closed runs
	run     strings.Builder // the line's last run of one style
	runSt   style
	lineW   int    // the width of line and run
	word    []span // the word being read
	wordW   int
	space   bool // a space precedes word
	spaceSt style
}

// wrap lays spans out in lines of at most width cells; each line's
// styles are closed at its end.
func (th *theme) wrap(spans []span, width int) []string {
	w := wrapper{th: th, width: max(width, 1)}
	for _, s := range spans {
		rest := s.text
		for rest != "" {
			i := strings.IndexAny(rest, " \n")
			if i < 0 {
				w.addWord(rest, s.st)
				break
			}
			if i > 0 {
				w.addWord(rest[:i], s.st)
			}
			w.flushWord()
			if rest[i] == '\n' {
				w.endLine()
				w.space = false
			} else if w.lineW > 0 {
				w.space, w.spaceSt = true, s.st
			}
			rest = rest[i+1:]
		}
	}
	w.flushWord()
	if w.lineW > 0 {
		w.endLine()
	}
	for len(w.lines) > 0 && w.lines[len(w.lines)-1] == "" {
		w.lines = w.lines[:len(w.lines)-1]
	}
	return w.lines
}

// addWord adds a piece of a word.
func (w *wrapper) addWord(text string, st style) {
	if n := len(w.word); n > 0 && w.word[n-1].st == st {
		w.word[n-1].text += text
	} else {
		w.word = append(w.word, span{text: text, st: st})
	}
	w.wordW += cellWidth(text)
}

// flushWord places the word read on the line, or on the next.
func (w *wrapper) flushWord() {
	if len(w.word) == 0 {
		return
	}
	if w.space && w.lineW > 0 {
		if w.lineW+1+w.wordW <= w.width {
			w.put(" ", w.spaceSt, 1)
		} else {
			w.endLine()
		}
	}
	w.space = false
	if w.lineW+w.wordW <= w.width {
		for _, s := range w.word {
			w.put(s.text, s.st, -1)
		}
	} else {
		w.breakWord()
	}
	w.word, w.wordW = w.word[:0], 0
}

// breakWord places a word too long for a line between its grapheme
// clusters.
func (w *wrapper) breakWord() {
	for _, s := range w.word {
		rest := s.text
		for rest != "" {
			g, gw := xansi.FirstGraphemeCluster(rest, xansi.GraphemeWidth)
			if len(g) == 0 {
				_, n := utf8.DecodeRuneInString(rest)
				g, gw = rest[:n], 1
			}
			if w.lineW > 0 && w.lineW+gw > w.width {
				w.endLine()
			}
			w.put(g, s.st, gw)
			rest = rest[len(g):]
		}
	}
}

// put adds text of a width (-1: to measure) to the line.
func (w *wrapper) put(text string, st style, tw int) {
	if tw < 0 {
		tw = cellWidth(text)
	}
	if st != w.runSt && w.run.Len() > 0 {
		w.closeRun()
	}
	w.runSt = st
	w.run.WriteString(text)
	w.lineW += tw
}

// closeRun renders the last run onto the line.
func (w *wrapper) closeRun() {
	g := w.th.style(w.runSt)
	w.line.WriteString(g.open)
	w.line.WriteString(w.run.String())
	w.line.WriteString(g.close)
	w.run.Reset()
}

// endLine renders the line and starts the next. A line never ends with a
// space: a space is put only before a word.
func (w *wrapper) endLine() {
	if w.run.Len() > 0 {
		w.closeRun()
	}
	w.lines = append(w.lines, w.line.String())
	w.line.Reset()
	w.lineW = 0
}
