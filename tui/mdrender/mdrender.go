// Package mdrender renders Markdown as styled text for a terminal.
//
// It parses CommonMark with goldmark's core parser (no extensions) and
// styles the text with lipgloss, in the 16 ANSI colours that the user's
// theme sets; the terminal's colour profile (NO_COLOR included) is applied
// by whoever writes the text. Paragraphs, headings, lists and quotes are
// word-wrapped to the width, counting wide runes and grapheme clusters;
// code blocks are kept as they are. GFM tables are laid out as aligned
// rows; other GFM extensions show as their text.
//
// Nothing from the Markdown reaches the terminal as a control: escape
// characters and the other C0 and C1 controls are dropped from every text
// that is written, entity references included, so the only escape
// sequences in a rendering are the SGR sequences of the styles.
package mdrender

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/agentry-dev/agentry/internal/ansi"
)

// Layout of a rendering.
const (
	// Margin is the blank columns before every line.
	Margin = 2
	// minWidth is the narrowest width laid out.
	minWidth = 10
	// maxDepth bounds the nesting of quotes and lists that indents:
	// deeper blocks are laid out at that depth's indent, so that a
	// rendering stays linear in the size of its input.
	maxDepth = 16
)

// Options configure a Renderer.
type Options struct {
	// Width is the terminal width the text is laid out for, in cells.
	// Lines start after a Margin of two columns and wrapped text ends
	// two columns before Width (code blocks are not wrapped). Widths
	// below 10 count as 10.
	Width int
	// Style is "dark" or "light": the terminal's background. Anything
	// else is dark.
	Style string
}

// Renderer renders Markdown for one width and style. It is safe for
// concurrent use.
type Renderer struct {
	width  int
	theme  *theme
	parser parser.Parser
}

// New returns a Renderer for the options.
func New(opts Options) *Renderer {
	return &Renderer{
		width: max(opts.Width, minWidth),
		theme: newTheme(opts.Style),
		parser: parser.NewParser(
			parser.WithBlockParsers(parser.DefaultBlockParsers()...),
			parser.WithInlineParsers(parser.DefaultInlineParsers()...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		),
	}
}

// Width returns the width the Renderer lays text out for.
func (r *Renderer) Width() int { return r.width }

// Render renders markdown: lines joined by "\n", without blank lines
// before or after, without trailing spaces, each line's styles closed at
// its end.
func (r *Renderer) Render(markdown string) string {
	src := []byte(cleanSource(markdown))
	doc := r.parser.Parse(text.NewReader(src))
	rd := &rendering{r: r, src: src}
	lines := rd.blocks(doc, r.width-2*Margin, 0)
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l != "" {
			b.WriteString("  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

// cleanSource makes lines end with "\n" alone and turns invalid UTF-8
// into U+FFFD, so that no stray byte reaches the terminal.
func cleanSource(s string) string {
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// rendering is one Render call's state.
type rendering struct {
	r   *Renderer
	src []byte
}

// blocks lays out the block children of n at a width, separated by blank
// lines when loose (always, outside tight lists).
func (rd *rendering) blocks(n ast.Node, width, depth int) []string {
	var out []string
	tight := false
	if li, ok := n.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := rd.block(c, width, depth)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// block lays out one block node.
func (rd *rendering) block(n ast.Node, width, depth int) []string {
	th := rd.r.theme
	width = max(width, 1)
	switch n := n.(type) {
	case *ast.Paragraph:
		if t := rd.table(n, width); t != nil {
			return t
		}
		return rd.r.theme.wrap(rd.inlines(n, 0), width)
	case *ast.TextBlock:
		return rd.r.theme.wrap(rd.inlines(n, 0), width)
	case *ast.Heading:
		return rd.heading(n, width)
	case *ast.ThematicBreak:
		return []string{th.style(sRule).render(strings.Repeat("─", width))}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return rd.code(n)
	case *ast.HTMLBlock:
		var spans []span
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			spans = appendText(spans, string(seg.Value(rd.src)), 0)
		}
		if n.HasClosure() {
			spans = appendText(spans, string(n.ClosureLine.Value(rd.src)), 0)
		}
		return rd.r.theme.wrap(spans, width)
	case *ast.Blockquote:
		if depth >= maxDepth {
			return rd.blocks(n, width, depth+1)
		}
		inner := rd.blocks(n, width-2, depth+1)
		bar := th.style(sQuote).render("│")
		for i, l := range inner {
			if l == "" {
				inner[i] = bar
			} else {
				inner[i] = bar + " " + l
			}
		}
		return inner
	case *ast.List:
		return rd.list(n, width, depth)
	case *ast.Document:
		return rd.blocks(n, width, depth)
	}
	// Any other block (none in CommonMark): its children, or its text.
	if n.HasChildren() {
		return rd.blocks(n, width, depth)
	}
	return nil
}

// heading lays out a heading: level 1 as a label, the others after their
// "#"s.
func (rd *rendering) heading(n *ast.Heading, width int) []string {
	th := rd.r.theme
	level := min(max(n.Level, 1), 6)
	st := headingStyle(level)
	if level == 1 {
		// A label: each line padded by a space either side, in the
		// heading's background.
		pad := th.style(st).render(" ")
		lines := th.wrap(rd.inlines(n, st), width-2)
		for i, l := range lines {
			lines[i] = pad + l + pad
		}
		return lines
	}
	prefix := strings.Repeat("#", level) + " "
	return th.wrap(append([]span{{text: prefix, st: st}}, rd.inlines(n, st)...), width)
}

// code lays out a code block: its lines as they are, indented by two
// columns, tabs as four spaces.
func (rd *rendering) code(n ast.Node) []string {
	st := rd.r.theme.style(sCodeBlock)
	lines := n.Lines()
	out := make([]string, 0, lines.Len())
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		l := strings.TrimRight(ansi.DropControls(string(seg.Value(rd.src))), " \n")
		if seg.Padding > 0 {
			l = strings.Repeat(" ", seg.Padding) + l
		}
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, "  "+st.render(l))
	}
	// A block's blank lines at either end are not shown.
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// list lays out a list: each item after its marker, its other lines
// indented to the marker's width.
func (rd *rendering) list(n *ast.List, width, depth int) []string {
	var markers []string
	num := n.Start
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if n.IsOrdered() {
			markers = append(markers, itoa(num)+string(n.Marker)+" ")
			num++
		} else {
			markers = append(markers, "• ")
		}
	}
	mw := 0 // the markers' width: all are ASCII but the bullet
	for _, m := range markers {
		mw = max(mw, cellWidth(m))
	}
	indent := mw
	if depth >= maxDepth {
		indent = 0
	}
	var out []string
	i := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if i > 0 && !n.IsTight {
			out = append(out, "")
		}
		m := strings.Repeat(" ", mw-cellWidth(markers[i])) + markers[i]
		item := rd.blocks(c, width-indent, depth+1)
		if len(item) == 0 {
			item = []string{""}
		}
		pad := strings.Repeat(" ", indent)
		for j, l := range item {
			switch {
			case j == 0:
				out = append(out, strings.TrimRight(m+l, " "))
			case l == "":
				out = append(out, "")
			default:
				out = append(out, pad+l)
			}
		}
		i++
	}
	return out
}

// itoa formats a list number.
func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// inlines returns the styled spans of n's inline children, in style st.
func (rd *rendering) inlines(n ast.Node, st style) []span {
	var spans []span
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		spans = rd.inline(spans, c, st)
	}
	return spans
}

// inline appends the spans of one inline node.
func (rd *rendering) inline(spans []span, n ast.Node, st style) []span {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(rd.src)
		if n.IsRaw() {
			spans = appendText(spans, string(v), st)
		} else {
			spans = appendText(spans, unescape(v), st)
		}
		switch {
		case n.HardLineBreak():
			spans = append(spans, span{text: "\n", st: st})
		case n.SoftLineBreak():
			spans = append(spans, span{text: " ", st: st})
		}
	case *ast.String:
		if n.IsRaw() || n.IsCode() {
			spans = appendText(spans, string(n.Value), st)
		} else {
			spans = appendText(spans, unescape(n.Value), st)
		}
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(rd.src))
			case *ast.String:
				b.Write(c.Value)
			}
		}
		code := strings.ReplaceAll(b.String(), "\n", " ")
		spans = appendText(spans, code, st|sCode)
	case *ast.Emphasis:
		a := sItalic
		if n.Level >= 2 {
			a = sBold
		}
		spans = append(spans, rd.inlines(n, st|a)...)
	case *ast.Link:
		start := len(spans)
		spans = append(spans, rd.inlines(n, st|sLink)...)
		dest := ansi.DropControls(string(n.Destination))
		if dest != "" && dest != spansText(spans[start:]) {
			spans = append(spans, span{text: " ", st: st}, span{text: dest, st: st | sURL})
		}
	case *ast.AutoLink:
		spans = appendText(spans, string(n.Label(rd.src)), st|sLink)
	case *ast.Image:
		spans = append(spans, span{text: "[", st: st})
		spans = append(spans, rd.inlines(n, st)...)
		spans = append(spans, span{text: "](", st: st}, span{text: ansi.DropControls(string(n.Destination)), st: st | sURL}, span{text: ")", st: st})
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			spans = appendText(spans, strings.ReplaceAll(string(seg.Value(rd.src)), "\n", " "), st)
		}
	default:
		if n.HasChildren() {
			spans = append(spans, rd.inlines(n, st)...)
		} else {
			spans = appendText(spans, string(n.Text(rd.src)), st) //nolint:staticcheck // the only text an unknown node has
		}
	}
	return spans
}

// spansText is the plain text of spans.
func spansText(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.text)
	}
	return b.String()
}

// unescape resolves backslash escapes and entity references, as
// goldmark's HTML writer does for text.
func unescape(v []byte) string {
	if !strings.ContainsAny(string(v), `\&`) {
		return string(v)
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]):
			i++
			b.WriteByte(v[i])
		case c == '&':
			if r, n := entity(v[i:]); n > 0 {
				b.WriteString(r)
				i += n - 1
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// entity decodes the entity reference at the start of v ("&amp;",
// "&#65;", "&#x41;") and returns its text and length, or 0.
func entity(v []byte) (string, int) {
	end := -1
	for i := 1; i < len(v) && i < 40; i++ {
		if v[i] == ';' {
			end = i
			break
		}
	}
	if end < 2 {
		return "", 0
	}
	name := v[1:end]
	if name[0] == '#' {
		digits, base := name[1:], 10
		if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
			digits, base = digits[1:], 16
		}
		if len(digits) == 0 || len(digits) > 7 {
			return "", 0
		}
		n := 0
		for _, d := range digits {
			var x int
			switch {
			case d >= '0' && d <= '9':
				x = int(d - '0')
			case base == 16 && d >= 'a' && d <= 'f':
				x = int(d-'a') + 10
			case base == 16 && d >= 'A' && d <= 'F':
				x = int(d-'A') + 10
			default:
				return "", 0
			}
			n = n*base + x
		}
		if n == 0 || n > 0x10FFFF || n >= 0xD800 && n <= 0xDFFF {
			return "\uFFFD", end + 1
		}
		return string(rune(n)), end + 1
	}
	if e, ok := util.LookUpHTML5EntityByName(string(name)); ok {
		return string(e.Characters), end + 1
	}
	return "", 0
}
