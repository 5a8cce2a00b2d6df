package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"google.golang.org/genai"
)

// defaultTotalMaxMatches is grep_search's total_max_matches default.
const defaultTotalMaxMatches = 100

// grepTool is grep_search: a regular expression over file contents. It
// searches in-process with Go's RE2 engine rather than shelling out to git
// grep or grep as gemini-cli does: results then do not depend on which
// tools the host has, a search honours ctx directly, and .geminiignore and
// .agentryignore apply along with .gitignore. Like gemini-cli's git grep
// strategy it ignores case, skips binary files and reports line numbers;
// RE2 has no backreferences or lookaround.
type grepTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

func newGrepTool(ws *Workspace) *grepTool {
	return &grepTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name:        "grep_search",
		Description: "Searches for a regular expression pattern within file contents. Max 100 matches.",
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"pattern": map[string]any{
					"description": `The regular expression (regex) pattern to search for within file contents (e.g., 'function\s+myFunction', 'import\s+\{.*\}\s+from\s+.*').`,
					"type":        "string",
				},
				"dir_path": map[string]any{
					"description": "Optional: The absolute path to the directory to search within. If omitted, searches the current working directory.",
					"type":        "string",
				},
				"include_pattern": map[string]any{
					"description": "Optional: A glob pattern to filter which files are searched (e.g., '*.js', '*.{ts,tsx}', 'src/**'). If omitted, searches all files (respecting potential global ignores).",
					"type":        "string",
				},
				"exclude_pattern": map[string]any{
					"description": "Optional: A regular expression pattern to exclude from the search results. If a line matches both the pattern and the exclude_pattern, it will be omitted.",
					"type":        "string",
				},
				"names_only": map[string]any{
					"description": "Optional: If true, only the file paths of the matches will be returned, without the line content or line numbers. This is useful for gathering a list of files.",
					"type":        "boolean",
				},
				"max_matches_per_file": map[string]any{
					"description": "Optional: Maximum number of matches to return per file. Use this to prevent being overwhelmed by repetitive matches in large files.",
					"type":        "integer",
					"minimum":     1,
				},
				"total_max_matches": map[string]any{
					"description": "Optional: Maximum number of total matches to return. Use this to limit the overall size of the response. Defaults to 100 if omitted.",
					"type":        "integer",
					"minimum":     1,
				},
			},
			"required": []string{"pattern"},
		},
	}}
}

func (t *grepTool) Name() string                            { return "grep_search" }
func (t *grepTool) DisplayName() string                     { return "SearchText" }
func (t *grepTool) Kind() Kind                              { return KindSearch }
func (t *grepTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *grepTool) Describe(a map[string]any) string {
	d := fmt.Sprintf("'%s'", argString(a, "pattern"))
	if inc := argString(a, "include_pattern"); inc != "" {
		d += " in " + inc
	}
	if dir := argString(a, "dir_path"); dir != "" {
		if rel := t.ws.describePath(dir); rel == "." {
			d += " within ./"
		} else {
			d += " within " + rel
		}
	} else if len(t.ws.roots) > 1 {
		d += " across all workspace directories"
	}
	return d
}

// grepMatch is one matching (or, with auto-context, context) line.
type grepMatch struct {
	file    string // as shown: relative to the searched directory
	abs     string
	line    int
	text    string
	context bool
}

// grepParams are a grep_search call's parsed arguments.
type grepParams struct {
	re, exclude   *regexp.Regexp
	include       *includeMatcher
	perFile, max  int
	namesOnly     bool
	pattern, incl string
	// literal is text, lower-cased, that every match contains, if the
	// pattern has such text: files without it are skipped without
	// running the regular expression.
	literal []byte
}

func (t *grepTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "grep_search")
	}
	a := args(call.Args)
	var gp grepParams
	var err error
	if gp.pattern, err = a.requiredStr("pattern"); err != nil {
		return Result{}, err
	}
	if gp.re, err = regexp.Compile("(?i)" + gp.pattern); err != nil {
		return Result{}, Errorf(ErrInvalidParams, "Invalid regular expression pattern provided: %s. Error: %v", gp.pattern, err)
	}
	if lit := requiredLiteral(gp.pattern); lit != "" {
		gp.literal = bytes.ToLower([]byte(lit))
	}
	excl, err := a.str("exclude_pattern")
	if err != nil {
		return Result{}, err
	}
	if excl != "" {
		if gp.exclude, err = regexp.Compile("(?i)" + excl); err != nil {
			return Result{}, Errorf(ErrInvalidParams, "Invalid exclude regular expression pattern provided: %s. Error: %v", excl, err)
		}
	}
	if gp.incl, err = a.str("include_pattern"); err != nil {
		return Result{}, err
	}
	if gp.incl != "" {
		if gp.include, err = newIncludeMatcher(gp.incl); err != nil {
			return Result{}, err
		}
	}
	if gp.namesOnly, err = a.boolean("names_only", false); err != nil {
		return Result{}, err
	}
	if gp.perFile, _, err = a.minInteger("max_matches_per_file", 1); err != nil {
		return Result{}, err
	}
	total, ok, err := a.minInteger("total_max_matches", 1)
	if err != nil {
		return Result{}, err
	}
	gp.max = defaultTotalMaxMatches
	if ok {
		gp.max = total
	}
	dirPath, err := a.str("dir_path")
	if err != nil {
		return Result{}, err
	}

	var dirs []string
	if dirPath == "" {
		dirs = t.ws.Roots()
	} else {
		dir, err := t.ws.Resolve(dirPath)
		if err != nil {
			return Result{}, err
		}
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return Result{}, Errorf(ErrFileNotFound, "Path does not exist: %s", dir)
		case err != nil:
			return Result{}, &Error{Type: ErrGrepExecution, Msg: fmt.Sprintf("Failed to access path stats for %s: %v", dir, err), Err: err}
		case !fi.IsDir():
			return Result{}, Errorf(ErrPathIsNotDirectory, "Path is not a directory: %s. Use read_file to read a single file.", dir)
		}
		dirs = []string{dir}
	}

	flts := newFilters(t.ws, filteringOptions{gitIgnore: true, agentryIgnore: true})
	seen := map[string]bool{}
	var matches []grepMatch
	for _, dir := range dirs {
		if len(matches) >= gp.max {
			break
		}
		prefix := ""
		if len(dirs) > 1 {
			prefix = filepath.Base(dir) + "/"
		}
		found, err := t.searchDir(ctx, flts.forPath(dir), dir, prefix, &gp, gp.max-len(matches), seen)
		matches = append(matches, found...)
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, cancelled(ctx, "grep_search")
			}
			return Result{}, &Error{Type: ErrGrepExecution, Msg: fmt.Sprintf("Error during grep search operation: %v", err), Err: err}
		}
	}

	var where string
	switch {
	case dirPath != "":
		where = fmt.Sprintf("in path %q", dirPath)
	case len(t.ws.roots) > 1:
		where = fmt.Sprintf("across %d workspace directories", len(t.ws.roots))
	default:
		where = "in the workspace directory"
	}
	return formatGrep(t.ws, matches, &gp, where), nil
}

// searchDir searches the files below dir, returning at most limit matches.
func (t *grepTool) searchDir(ctx context.Context, f *fileFilter, dir, prefix string, gp *grepParams, limit int, seen map[string]bool) ([]grepMatch, error) {
	var out []grepMatch
	var lower []byte // scratch for the literal prefilter
	errLimit := errors.New("limit reached")
	err := walk(ctx, f, dir, true, func(e walkEntry) error {
		if e.entry.IsDir() {
			return nil
		}
		if gp.include != nil && !gp.include.match(e.rel) {
			return nil
		}
		if seen[e.abs] {
			return nil
		}
		real, st, ok := statRegularInWorkspace(t.ws, e)
		if !ok || st.Size() > maxFileSizeBytes {
			return nil
		}
		seen[e.abs] = true
		b, err := t.ws.readFile(real, maxFileSizeBytes)
		if err != nil || isBinary(b[:min(len(b), binarySniffLength)]) {
			return nil
		}
		if gp.literal != nil {
			if found, known := containsFoldASCII(b, gp.literal, &lower); known && !found {
				return nil
			}
		}
		inFile := 0
		for i, line := range splitLines(decodeText(b)) {
			if !gp.re.MatchString(line) || (gp.exclude != nil && gp.exclude.MatchString(line)) {
				continue
			}
			out = append(out, grepMatch{file: prefix + e.rel, abs: real, line: i + 1, text: line})
			if len(out) >= limit {
				return errLimit
			}
			if inFile++; gp.perFile > 0 && inFile >= gp.perFile {
				break
			}
		}
		return nil
	})
	if errors.Is(err, errLimit) {
		err = nil
	}
	return out, err
}

// formatGrep renders matches as gemini-cli's formatGrepResults does.
func formatGrep(ws *Workspace, all []grepMatch, gp *grepParams, where string) Result {
	filter := ""
	if gp.incl != "" {
		filter = fmt.Sprintf(" (filter: %q)", gp.incl)
	}
	if len(all) == 0 {
		return Result{
			LLMContent: fmt.Sprintf("No matches found for pattern %q %s%s.", gp.pattern, where, filter),
			Display:    "No matches found",
			Data:       map[string]any{"matchCount": 0, "files": []string{}},
		}
	}
	// Group by file, keeping the order files were found in.
	var order []string
	byFile := map[string][]grepMatch{}
	for _, m := range all {
		if _, ok := byFile[m.file]; !ok {
			order = append(order, m.file)
		}
		byFile[m.file] = append(byFile[m.file], m)
	}
	count := len(all)
	truncated := count >= gp.max
	limited := ""
	if truncated {
		limited = fmt.Sprintf(" (results limited to %d matches for performance)", gp.max)
	}

	if gp.namesOnly {
		files := append([]string(nil), order...)
		sort.Strings(files)
		summary := fmt.Sprintf("Found %d files", len(files))
		if truncated {
			summary += " (limited)"
		}
		return Result{
			LLMContent: strings.TrimSpace(fmt.Sprintf("Found %d files with matches for pattern %q %s%s%s:\n%s",
				len(files), gp.pattern, where, filter, limited, strings.Join(files, "\n"))),
			Display: summary,
			Data:    map[string]any{"matchCount": count, "files": files},
		}
	}

	// With few matches, show context around them so the model can often
	// skip reading the files (gemini-cli found this saves ~10% of turns).
	if count <= 3 {
		addAutoContext(ws, byFile, order, count)
	}
	term := "matches"
	if count == 1 {
		term = "match"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d %s for pattern %q %s%s%s:\n---\n", count, term, gp.pattern, where, filter, limited)
	for _, file := range order {
		fmt.Fprintf(&b, "File: %s\n", file)
		for _, m := range byFile[file] {
			sep := ":"
			if m.context {
				sep = "-"
			}
			text, _ := truncateRunes(strings.TrimRight(m.text, " \t\r\n"), maxLineLength)
			fmt.Fprintf(&b, "L%d%s %s\n", m.line, sep, text)
		}
		b.WriteString("---\n")
	}
	summary := fmt.Sprintf("Found %d %s", count, term)
	if truncated {
		summary += " (limited)"
	}
	return Result{
		LLMContent: strings.TrimSpace(b.String()),
		Display:    summary,
		Data:       map[string]any{"matchCount": count, "files": order},
	}
}

// addAutoContext replaces each file's matches by the matches plus 50 lines
// of context around a single match, or 15 around each of two or three.
func addAutoContext(ws *Workspace, byFile map[string][]grepMatch, order []string, count int) {
	n := 15
	if count == 1 {
		n = 50
	}
	for _, file := range order {
		ms := byFile[file]
		b, err := ws.readFile(ms[0].abs, maxFileSizeBytes)
		if err != nil {
			continue
		}
		lines := splitLines(decodeText(b))
		isMatch := map[int]bool{}
		for _, m := range ms {
			isMatch[m.line] = true
		}
		var out []grepMatch
		seen := map[int]bool{}
		for _, m := range ms {
			for i := max(0, m.line-1-n); i < min(len(lines), m.line+n); i++ {
				if seen[i+1] {
					continue
				}
				seen[i+1] = true
				out = append(out, grepMatch{file: file, abs: m.abs, line: i + 1, text: lines[i], context: !isMatch[i+1]})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
		byFile[file] = out
	}
}

// includeMatcher filters files by grep_search's include_pattern: a pattern
// without "/" ("*.go", "*.{ts,tsx}") matches file names at any depth, as
// git grep's pathspecs do; one with "/" ("src/**") matches the path
// relative to the searched directory.
type includeMatcher struct {
	pattern  string
	baseOnly bool
}

func newIncludeMatcher(p string) (*includeMatcher, error) {
	p = filepath.ToSlash(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	if !doublestar.ValidatePattern(p) {
		return nil, Errorf(ErrInvalidParams, "Invalid include_pattern %q: check its brackets and braces.", p)
	}
	return &includeMatcher{pattern: p, baseOnly: !strings.Contains(p, "/")}, nil
}

func (m *includeMatcher) match(rel string) bool {
	if m.baseOnly {
		return doublestar.MatchUnvalidated(m.pattern, path.Base(rel))
	}
	return doublestar.MatchUnvalidated(m.pattern, rel)
}

// requiredLiteral returns the longest literal text that every match of
// pattern must contain, or "". Go's case-insensitive regular expressions
// are slow, and most files in a search contain no match: a plain search for
// the literal rules them out an order of magnitude faster.
func requiredLiteral(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	var walk func(*syntax.Regexp) string
	walk = func(re *syntax.Regexp) string {
		switch re.Op {
		case syntax.OpLiteral:
			return string(re.Rune)
		case syntax.OpCapture, syntax.OpPlus:
			return walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				return walk(re.Sub[0])
			}
		case syntax.OpConcat:
			best := ""
			for _, sub := range re.Sub {
				if l := walk(sub); len(l) > len(best) {
					best = l
				}
			}
			return best
		}
		return ""
	}
	lit := walk(re)
	for i := 0; i < len(lit); i++ {
		if lit[i] >= utf8.RuneSelf {
			return "" // ASCII only: see containsFoldASCII
		}
	}
	return lit
}

// containsFoldASCII reports whether b contains lit (lower-case ASCII),
// ignoring case as (?i) does. Only two non-ASCII characters fold to ASCII
// letters, the long s and the Kelvin sign; when b holds one of them, known
// is false and the caller must run the regular expression. Other non-ASCII
// bytes can never be part of an ASCII literal, so they are left as they
// are. scratch is reused between calls.
func containsFoldASCII(b, lit []byte, scratch *[]byte) (found, known bool) {
	if bytes.Contains(b, longS) || bytes.Contains(b, kelvin) {
		return false, false
	}
	buf := append((*scratch)[:0], b...)
	for i, c := range buf {
		if 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	*scratch = buf
	return bytes.Contains(buf, lit), true
}

var (
	longS  = []byte("\u017f")
	kelvin = []byte("\u212a")
)
