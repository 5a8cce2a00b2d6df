// Package atpath expands the @path references of a prompt as gemini-cli's
// headless mode does (its handleAtCommand): each referenced file, or every
// file below a referenced directory, is read with the read_many_files tool
// and follows the prompt as "Content from @path:" parts between gemini-cli's
// reference markers. Paths resolve against the workspace roots and respect
// the ignore files, exactly as the file tools see them.
package atpath

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentry-dev/agentry/tools"
)

// gemini-cli's markers around the referenced content.
const (
	contentStart = "--- Content from referenced files ---"
	contentEnd   = "--- End of content ---"
)

// Errors of Expand, matched with errors.Is. Both are the user's input to
// fix (exit code 42).
var (
	// ErrNotFound marks a reference that names nothing in the workspace,
	// even after gemini-cli's search for a file whose name contains it.
	ErrNotFound = errors.New("no such file or directory in the workspace")
	// ErrOutside marks a reference that resolves outside the workspace
	// roots, refused as the file tools refuse it.
	ErrOutside = errors.New("outside the workspace")
	// ErrRead marks a failure to read the referenced files.
	ErrRead = errors.New("cannot read the referenced files")
	// ErrNotRegular marks a reference to a FIFO, a device or a socket,
	// which is never opened: reading one could block or never end.
	ErrNotRegular = errors.New("not a regular file or directory (a FIFO, a device or a socket)")
)

// RefError is a reference Expand could not use.
type RefError struct {
	// Ref is the reference as written, with its "@".
	Ref string
	// Err is ErrNotFound, ErrOutside, ErrNotRegular or ErrRead, possibly
	// wrapped.
	Err error
}

// Error says which reference failed, why, and how to write a literal @.
func (e *RefError) Error() string {
	return fmt.Sprintf("%s: %v (write \\@ for a literal @)", e.Ref, e.Err)
}

// Unwrap returns the cause.
func (e *RefError) Unwrap() error { return e.Err }

// Result is an expanded prompt.
type Result struct {
	// Parts are the text parts to send, in gemini-cli's order: the prompt
	// with each resolved reference rewritten to the path read, the start
	// marker, then for each file a "Content from @path:" part and its
	// content, then the end marker. A prompt without references is one
	// part, unchanged.
	Parts []string
	// Ignored lists the references the ignore files exclude: they are
	// left as written and not read, as gemini-cli skips them.
	Ignored []string
}

// Expand expands the @path references of prompt against ws. A reference
// that names nothing in the workspace, or a path outside it, is an error
// (a *RefError): gemini-cli silently leaves such references as text, but a
// headless run that quietly lacks the file it was asked about is worse
// than one that stops and says so.
func Expand(ctx context.Context, ws *tools.Workspace, prompt string) (Result, error) {
	parts := parse(prompt)
	var refs []*part
	for i := range parts {
		if parts[i].ref {
			refs = append(refs, &parts[i])
		}
	}
	if len(refs) == 0 {
		return Result{Parts: []string{prompt}}, nil
	}
	set, err := tools.NewSet(tools.Config{Workspace: ws})
	if err != nil {
		return Result{}, err
	}
	defer set.Close()

	var res Result
	var resolved []*resolvedRef
	for _, p := range refs {
		r, ignored, err := resolve(ctx, ws, set, p)
		if err != nil {
			return Result{}, err
		}
		if ignored {
			res.Ignored = append(res.Ignored, "@"+p.text)
			continue
		}
		resolved = append(resolved, r)
	}
	if len(resolved) == 0 {
		return Result{Parts: []string{prompt}, Ignored: res.Ignored}, nil
	}
	files, err := readFiles(ctx, ws, set, resolved)
	if err != nil {
		return Result{}, err
	}
	res.Parts = append([]string{initialQuery(parts)}, "\n"+contentStart)
	res.Parts = append(res.Parts, files...)
	return res, nil
}

// part is a piece of the prompt: text, or a reference (without its "@",
// unescaped).
type part struct {
	text     string
	ref      bool
	pathSpec string // for a resolved reference, the path read
}

// resolvedRef is a reference with the file or directory it names.
type resolvedRef struct {
	part     *part
	abs      string // absolute path of the file or directory
	dir      bool
	label    string // how the content is introduced: "Content from @label:"
	pathSpec string
}

// parse splits a prompt into text and references as gemini-cli's
// parseAllAtCommands does: an "@" not preceded by a backslash starts a
// reference, which runs to a space, a punctuation mark or a full stop at
// the end of a word; a backslash escapes the next character. Text that is
// only white space between references is dropped, as gemini-cli drops it.
// A reference in double quotes may hold spaces; its quotes are removed.
func parse(s string) []part {
	var out []part
	text := func(t string) {
		if strings.TrimSpace(t) != "" {
			out = append(out, part{text: t})
		}
	}
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '@' || i > 0 && s[i-1] == '\\' {
			continue
		}
		end := pathEnd(s, i+1)
		if end == i+1 {
			continue
		}
		text(s[last:i])
		out = append(out, part{text: unescape(s[i+1 : end]), ref: true})
		last = end
		i = end - 1
	}
	text(s[last:])
	return out
}

// pathEnd returns the end of the reference path starting at i: gemini-cli's
// AT_COMMAND_PATH_REGEX_SOURCE, matched greedily.
func pathEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
				i += j + 2
				continue
			}
			i++ // an unclosed quote is an ordinary character
		case c == '\\' && i+1 < len(s) && s[i+1] != '\n' && s[i+1] != '\r':
			i += 2
		case c == '.':
			if i+1 == len(s) || strings.IndexByte(" \t\n\r", s[i+1]) >= 0 {
				return i
			}
			i++
		case strings.IndexByte(" \t\n\r,;!?()[]{}", c) >= 0:
			return i
		default:
			i++
		}
	}
	return i
}

// unescape removes backslash escapes and a reference's double quotes.
func unescape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case p[i] == '"':
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// resolve finds what a reference names: the path in one of the workspace
// roots, else the newest file whose path contains it (gemini-cli's
// "**/*name*" search). ignored reports a reference the ignore files
// exclude.
func resolve(ctx context.Context, ws *tools.Workspace, set *tools.Set, p *part) (*resolvedRef, bool, error) {
	name := p.text
	refErr := func(err error) error { return &RefError{Ref: "@" + name, Err: err} }
	if strings.ContainsAny(name, "\x00\n\r\t") {
		return nil, false, refErr(fmt.Errorf("%w: the path has control characters", ErrNotFound))
	}
	roots := ws.Roots()
	candidates := []string{name}
	if !filepath.IsAbs(name) {
		candidates = nil
		for _, root := range roots {
			candidates = append(candidates, filepath.Join(root, name))
		}
	}
	for _, c := range candidates {
		real, err := ws.Resolve(c)
		if tools.TypeOf(err) == tools.ErrPathNotInWorkspace {
			return nil, false, refErr(fmt.Errorf("%w: %s is not in %s", ErrOutside, name, strings.Join(roots, ", ")))
		}
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil, false, refErr(ErrNotRegular)
		}
		if tools.NewIgnorer(rootOf(roots, filepath.Clean(c))).Ignored(filepath.Clean(c), fi.IsDir()) {
			return nil, true, nil
		}
		rel := name
		if filepath.IsAbs(name) {
			rel = relTo(roots, filepath.Clean(name))
		}
		r := &resolvedRef{part: p, abs: filepath.Clean(c), dir: fi.IsDir(), label: name, pathSpec: rel}
		if filepath.IsAbs(name) {
			r.label = rel
		}
		if r.dir {
			r.pathSpec = path.Join(filepath.ToSlash(rel), "**")
		}
		p.pathSpec = r.pathSpec
		return r, false, nil
	}
	if filepath.IsAbs(name) {
		return nil, false, refErr(ErrNotFound)
	}
	// gemini-cli searches each root for a file whose path contains the
	// name and takes the first (newest) match.
	glob, _ := set.Lookup("glob")
	for _, root := range roots {
		res, err := glob.Execute(ctx, tools.Call{Args: map[string]any{"pattern": "**/*" + name + "*", "dir_path": root}})
		if err != nil {
			continue
		}
		found, _ := res.Data["files"].([]string)
		if len(found) == 0 {
			continue
		}
		rel, err := filepath.Rel(root, found[0])
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		p.pathSpec = rel
		return &resolvedRef{part: p, abs: found[0], label: name, pathSpec: rel}, false, nil
	}
	return nil, false, refErr(ErrNotFound)
}

// readFiles reads the resolved references with read_many_files, as
// gemini-cli's readLocalFiles does, and returns the parts that follow the
// start marker.
func readFiles(ctx context.Context, ws *tools.Workspace, set *tools.Set, refs []*resolvedRef) ([]string, error) {
	var include []string
	var labels []string
	for _, r := range refs {
		spec := r.abs
		if r.dir {
			spec = filepath.Join(r.abs, "**")
		}
		include = append(include, spec)
		labels = append(labels, r.label)
	}
	readMany, _ := set.Lookup("read_many_files")
	res, err := readMany.Execute(ctx, tools.Call{Args: map[string]any{"include": toAny(include)}})
	if err != nil {
		return nil, &RefError{Ref: "@" + strings.Join(labels, ", @"), Err: fmt.Errorf("%w: %v", ErrRead, err)}
	}
	read, _ := res.Data["files"].([]string)
	if len(read) == 0 {
		// Nothing readable: gemini-cli passes the tool's message on, with
		// no end marker.
		return []string{res.LLMContent}, nil
	}
	roots := ws.Roots()
	abs := make([]string, len(read))
	for i, f := range read {
		abs[i] = f
		if !filepath.IsAbs(f) {
			abs[i] = filepath.Join(ws.Root(), filepath.FromSlash(f))
		}
	}
	content := res.LLMContent
	var out []string
	pos := 0
	for i, a := range abs {
		header := "--- " + a + " ---\n\n"
		if !strings.HasPrefix(content[pos:], header) {
			return nil, fmt.Errorf("atpath: unexpected read_many_files output at %s", a)
		}
		pos += len(header)
		var end int
		if i+1 < len(abs) {
			end = strings.Index(content[pos:], "\n\n--- "+abs[i+1]+" ---\n\n")
		} else {
			end = strings.LastIndex(content[pos:], "\n\n\n"+contentEnd)
		}
		if end < 0 {
			return nil, fmt.Errorf("atpath: unexpected read_many_files output after %s", a)
		}
		text := content[pos : pos+end]
		pos += end + 2
		out = append(out, "\nContent from @"+displayPath(refs, roots, a)+":\n", strings.TrimSpace(text))
	}
	return append(out, "\n"+contentEnd), nil
}

// displayPath names a file read: the reference's own label when it named
// the file, else the file's path relative to its workspace root.
func displayPath(refs []*resolvedRef, roots []string, abs string) string {
	for _, r := range refs {
		if !r.dir && r.abs == abs {
			return r.label
		}
	}
	if rel := relTo(roots, abs); rel != abs {
		return rel
	}
	return abs
}

// initialQuery rebuilds the prompt with each resolved reference replaced by
// the path read, separated from the text before it by a space, as
// gemini-cli's constructInitialQuery does.
func initialQuery(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		content := p.text
		if p.ref {
			content = "@" + p.text
			if p.pathSpec != "" {
				content = "@" + p.pathSpec
			}
			if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
		}
		b.WriteString(content)
	}
	return strings.TrimSpace(b.String())
}

// rootOf returns the root containing abs (the first root when none does).
func rootOf(roots []string, abs string) string {
	for _, r := range roots {
		if abs == r || strings.HasPrefix(abs, r+string(filepath.Separator)) {
			return r
		}
	}
	return roots[0]
}

// relTo returns abs relative to the root containing it, slash-separated,
// or abs itself.
func relTo(roots []string, abs string) string {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
