package idecontext

import (
	"strconv"
	"strings"

	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/jsonstr"
)

// The header lines gemini-cli puts before the JSON of each form.
const (
	FullHeader  = "Here is the user's editor context as a JSON object. This is for your information only."
	DeltaHeader = "Here is a summary of changes in the user's editor context, in JSON format. This is for your information only."
)

// Full returns gemini-cli's full form of a normalised context: the header,
// a json fence around JSON.stringify({activeFile?, otherOpenFiles?}, null,
// 2), and the closing fence, joined with newlines; "" when the context has
// neither an active file nor other open files.
func Full(c idewire.Context) string {
	files := openFiles(c)
	active := activeFile(files)
	others := 0
	for _, f := range files {
		if !f.IsActive {
			others++
		}
	}
	if active == nil && others == 0 {
		return ""
	}
	w := newWriter(FullHeader, files)
	w.open('{')
	if active != nil {
		w.key("activeFile")
		w.file(active.Path, active.Cursor, active.SelectedText)
	}
	if others > 0 {
		w.key("otherOpenFiles")
		w.open('[')
		for _, f := range files {
			if !f.IsActive {
				w.elem()
				w.str(f.Path)
			}
		}
		w.close(']')
	}
	w.close('}')
	return w.text()
}

// Delta returns gemini-cli's delta form between the normalised context
// last sent and the current one: {"changes": {filesOpened, filesClosed,
// activeFileChanged | cursorMoved, selectionChanged}} in gemini-cli's key
// order, with the header and fences of Full; "" when nothing changed.
func Delta(last, cur idewire.Context) string {
	lastFiles, curFiles := openFiles(last), openFiles(cur)
	lastPaths, curPaths := uniquePaths(lastFiles), uniquePaths(curFiles)
	w := newWriter(DeltaHeader, curFiles)
	w.open('{')
	w.key("changes")
	w.open('{')
	mark := len(w.b)
	pathList := func(key string, paths []string, in map[string]bool) {
		opened := false
		for _, p := range paths {
			if in[p] {
				continue
			}
			if !opened {
				w.key(key)
				w.open('[')
				opened = true
			}
			w.elem()
			w.str(p)
		}
		if opened {
			w.close(']')
		}
	}
	pathList("filesOpened", curPaths, set(lastPaths))
	pathList("filesClosed", lastPaths, set(curPaths))
	lastActive, curActive := activeFile(lastFiles), activeFile(curFiles)
	switch {
	case curActive != nil && (lastActive == nil || lastActive.Path != curActive.Path):
		w.key("activeFileChanged")
		w.file(curActive.Path, curActive.Cursor, curActive.SelectedText)
	case curActive != nil:
		if c, l := curActive.Cursor, lastActive.Cursor; c != nil && (l == nil || *l != *c) {
			w.key("cursorMoved")
			w.open('{')
			w.key("path")
			w.str(curActive.Path)
			w.key("cursor")
			w.cursor(c)
			w.close('}')
		}
		if lastActive.SelectedText != curActive.SelectedText {
			w.key("selectionChanged")
			w.open('{')
			w.key("path")
			w.str(curActive.Path)
			w.key("selectedText")
			w.str(curActive.SelectedText)
			w.close('}')
		}
	case lastActive != nil:
		w.key("activeFileChanged")
		w.open('{')
		w.key("path")
		w.raw("null")
		w.key("previousPath")
		w.str(lastActive.Path)
		w.close('}')
	}
	if len(w.b) == mark {
		return ""
	}
	w.close('}')
	w.close('}')
	return w.text()
}

func openFiles(c idewire.Context) []idewire.File {
	if c.WorkspaceState == nil {
		return nil
	}
	return c.WorkspaceState.OpenFiles
}

// activeFile is JavaScript's openFiles.find((f) => f.isActive).
func activeFile(files []idewire.File) *idewire.File {
	for i := range files {
		if files[i].IsActive {
			return &files[i]
		}
	}
	return nil
}

// uniquePaths are the keys of JavaScript's new Map(files.map((f) =>
// [f.path, f])) in its iteration order: each path once, where it first
// appears.
func uniquePaths(files []idewire.File) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if !contains(out, f.Path) {
			out = append(out, f.Path)
		}
	}
	return out
}

func contains(ps []string, p string) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func set(ps []string) map[string]bool {
	m := make(map[string]bool, len(ps))
	for _, p := range ps {
		m[p] = true
	}
	return m
}

// writer writes JSON as JSON.stringify(v, null, 2) does: two-space
// indents, ": " after keys, empty containers never written.
type writer struct {
	b     []byte
	depth int
	// first is true right after an opening bracket.
	first bool
}

// newWriter returns a writer that has written header and the opening
// fence, its buffer sized for the files' paths and selections.
func newWriter(header string, files []idewire.File) *writer {
	n := len(header) + 512
	for _, f := range files {
		n += len(f.Path) + 16 + len(f.SelectedText) + len(f.SelectedText)/8
	}
	w := &writer{b: make([]byte, 0, n)}
	w.b = append(append(w.b, header...), "\n```json\n"...)
	return w
}

func (w *writer) newline() {
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, ' ', ' ')
	}
}

func (w *writer) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

func (w *writer) close(c byte) {
	w.depth--
	w.newline()
	w.b = append(w.b, c)
	w.first = false
}

// elem starts an array element or an object member.
func (w *writer) elem() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.newline()
}

func (w *writer) key(k string) {
	w.elem()
	w.str(k)
	w.b = append(w.b, ':', ' ')
}

func (w *writer) raw(s string) { w.b = append(w.b, s...) }

func (w *writer) int(n int) { w.b = strconv.AppendInt(w.b, int64(n), 10) }

func (w *writer) cursor(c *idewire.Cursor) {
	w.open('{')
	w.key("line")
	w.int(c.Line)
	w.key("character")
	w.int(c.Character)
	w.close('}')
}

// file writes {path, cursor?, selectedText?}; an empty selection is left
// out, as gemini-cli's `selectedText || undefined`.
func (w *writer) file(path string, c *idewire.Cursor, sel string) {
	w.open('{')
	w.key("path")
	w.str(path)
	if c != nil {
		w.key("cursor")
		w.cursor(c)
	}
	if sel != "" {
		w.key("selectedText")
		w.str(sel)
	}
	w.close('}')
}

// str writes s as JSON.stringify does: JavaScript's escapes (U+2028 and
// U+2029 and HTML characters as they are), a byte that is not UTF-8 as
// U+FFFD, and a lone surrogate in WTF-8 form as \udXXX.
func (w *writer) str(s string) {
	if indexSurrogate(s) < 0 {
		w.b = jsonstr.Append(w.b, s, jsonstr.JS)
		return
	}
	w.b = append(w.b, '"')
	for {
		i := indexSurrogate(s)
		if i < 0 {
			break
		}
		w.inner(s[:i])
		r := rune(s[i]&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
		w.b = append(w.b, '\\', 'u')
		w.b = append(w.b, strconv.FormatInt(int64(r), 16)...)
		s = s[i+3:]
	}
	w.inner(s)
	w.b = append(w.b, '"')
}

// inner appends s escaped, without quotes.
func (w *writer) inner(s string) {
	n := len(w.b)
	w.b = jsonstr.Append(w.b, s, jsonstr.JS)
	w.b = append(w.b[:n], w.b[n+1:len(w.b)-1]...)
}

// indexSurrogate is the index of the first surrogate code point encoded
// as WTF-8 in s (ED A0..BF xx), or -1.
func indexSurrogate(s string) int {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], 0xED)
		if i < 0 {
			return -1
		}
		i += off
		if i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			return i
		}
		off = i + 1
	}
}

// text is gemini-cli's contextParts joined with "\n": the header, the
// fences and the JSON between them.
func (w *writer) text() string {
	return string(append(w.b, "\n```"...))
}
