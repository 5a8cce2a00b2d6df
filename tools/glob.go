package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"google.golang.org/genai"
)

// recencyThreshold: glob lists files modified within it first, newest
// first, and older files after them alphabetically, as gemini-cli does.
const recencyThreshold = 24 * time.Hour

// globTool is glob: files matching a glob pattern, newest first.
type globTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

func newGlobTool(ws *Workspace) *globTool {
	return &globTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name:        "glob",
		Description: "Efficiently finds files matching specific glob patterns (e.g., `src/**/*.ts`, `**/*.md`), returning absolute paths sorted by modification time (newest first). Ideal for quickly locating files based on their name or path structure, especially in large codebases.",
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"pattern": map[string]any{
					"description": "The glob pattern to match against (e.g., '**/*.py', 'docs/*.md').",
					"type":        "string",
				},
				"dir_path": map[string]any{
					"description": "Optional: The absolute path to the directory to search within. If omitted, searches the root directory.",
					"type":        "string",
				},
				"case_sensitive": map[string]any{
					"description": "Optional: Whether the search should be case-sensitive. Defaults to false.",
					"type":        "boolean",
				},
				"respect_git_ignore": map[string]any{
					"description": "Optional: Whether to respect .gitignore patterns when finding files. Only available in git repositories. Defaults to true.",
					"type":        "boolean",
				},
				"respect_gemini_ignore": map[string]any{
					"description": "Optional: Whether to respect .geminiignore patterns when finding files. Defaults to true.",
					"type":        "boolean",
				},
			},
			"required": []string{"pattern"},
		},
	}}
}

func (t *globTool) Name() string                            { return "glob" }
func (t *globTool) DisplayName() string                     { return "FindFiles" }
func (t *globTool) Kind() Kind                              { return KindSearch }
func (t *globTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *globTool) Describe(a map[string]any) string {
	d := fmt.Sprintf("'%s'", argString(a, "pattern"))
	if dir := argString(a, "dir_path"); dir != "" {
		d += " within " + t.ws.describePath(dir)
	}
	return d
}

// searchDirs resolves an optional dir_path to the directories to search:
// that directory, or every workspace root.
func (w *Workspace) searchDirs(dirPath string) ([]string, error) {
	if dirPath == "" {
		return w.Roots(), nil
	}
	dir, err := w.Resolve(dirPath)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(ErrSearchPathNotFound, "Search path does not exist %s", dir)
		}
		return nil, &Error{Type: ErrSearchPathNotFound, Msg: fmt.Sprintf("Error accessing search path: %v", err), Err: err}
	}
	if !fi.IsDir() {
		return nil, Errorf(ErrSearchPathNotDir, "Search path is not a directory: %s", dir)
	}
	return []string{dir}, nil
}

type foundFile struct {
	path  string
	mtime time.Time
}

func (t *globTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "glob")
	}
	a := args(call.Args)
	pattern, err := a.requiredStr("pattern")
	if err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(pattern) == "" {
		return Result{}, Errorf(ErrInvalidParams, "The 'pattern' parameter cannot be empty.")
	}
	dirPath, err := a.str("dir_path")
	if err != nil {
		return Result{}, err
	}
	caseSensitive, err := a.boolean("case_sensitive", false)
	if err != nil {
		return Result{}, err
	}
	opts, err := a.filtering()
	if err != nil {
		return Result{}, err
	}
	dirs, err := t.ws.searchDirs(dirPath)
	if err != nil {
		return Result{}, err
	}

	flts := newFilters(t.ws, opts)
	seen := map[string]bool{}
	var found []foundFile
	ignored := 0
	searched := 0
	for _, dir := range dirs {
		pat, ok := patternForDir(pattern, dir)
		if !ok {
			continue
		}
		searched++
		// A pattern naming an existing path is taken literally, so that
		// names containing glob characters ("[id].tsx") can be found.
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(pat))); err == nil {
			pat = escapeGlob(pat)
		}
		m, err := newGlobMatcher(pat, caseSensitive)
		if err != nil {
			return Result{}, err
		}
		err = walk(ctx, flts.forPath(dir), dir, false, func(e walkEntry) error {
			if e.entry.IsDir() {
				if !m.mayContain(e.rel) {
					return errSkipDir
				}
				return nil
			}
			if !m.match(e.rel) || seen[e.abs] {
				return nil
			}
			_, st, ok := statRegularInWorkspace(t.ws, e)
			if !ok {
				return nil
			}
			seen[e.abs] = true
			if e.ignored {
				ignored++
				return nil
			}
			found = append(found, foundFile{e.abs, st.ModTime()})
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, cancelled(ctx, "glob")
			}
			return Result{}, &Error{Type: ErrGlobExecution, Msg: fmt.Sprintf("Error during glob search operation: %v", err), Err: err}
		}
	}
	if searched == 0 {
		// An absolute pattern outside every searched directory.
		return Result{}, t.ws.outsideError(filepath.Clean(pattern), filepath.Clean(pattern))
	}

	where := ""
	if len(dirs) == 1 {
		where = " within " + dirs[0]
	}
	if len(found) == 0 {
		msg := fmt.Sprintf("No files found matching pattern %q", pattern)
		if len(dirs) == 1 {
			msg += where
		} else {
			msg += fmt.Sprintf(" within %d workspace directories", len(dirs))
		}
		if ignored > 0 {
			msg += fmt.Sprintf(" (%d files were ignored)", ignored)
		}
		return Result{LLMContent: msg, Display: "No files found",
			Data: map[string]any{"files": []string{}, "ignored": ignored}}, nil
	}

	sortByRecency(found, time.Now())
	paths := make([]string, len(found))
	for i, f := range found {
		paths[i] = f.path
	}
	msg := fmt.Sprintf("Found %d file(s) matching %q", len(found), pattern)
	if len(dirs) == 1 {
		msg += where
	} else {
		msg += fmt.Sprintf(" across %d workspace directories", len(dirs))
	}
	if ignored > 0 {
		msg += fmt.Sprintf(" (%d additional files were ignored)", ignored)
	}
	msg += ", sorted by modification time (newest first):\n" + strings.Join(paths, "\n")
	return Result{
		LLMContent: msg,
		Display:    fmt.Sprintf("Found %d matching file(s)", len(found)),
		Data:       map[string]any{"files": paths, "ignored": ignored},
	}, nil
}

// statRegularInWorkspace reports whether a walked entry is a regular file,
// or a symlink to a regular file inside the workspace, and returns the
// real path to open it by and its FileInfo.
func statRegularInWorkspace(ws *Workspace, e walkEntry) (string, fs.FileInfo, bool) {
	real := e.abs
	if e.entry.Type()&fs.ModeSymlink != 0 {
		var err error
		real, err = resolveReal(e.abs)
		if err != nil || !ws.Contains(real) {
			return "", nil, false
		}
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return "", nil, false
	}
	return real, st, true
}

// patternForDir makes pattern relative to dir: a leading "./" is dropped
// and an absolute pattern is kept only if it lies inside dir.
func patternForDir(pattern, dir string) (string, bool) {
	p := filepath.ToSlash(pattern)
	if filepath.IsAbs(pattern) {
		rel, err := filepath.Rel(dir, filepath.Clean(pattern))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", false
		}
		p = filepath.ToSlash(rel)
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p, true
}

// sortByRecency orders files modified within recencyThreshold of now first,
// newest first, then the rest by path.
func sortByRecency(files []foundFile, now time.Time) {
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		ra, rb := now.Sub(a.mtime) < recencyThreshold, now.Sub(b.mtime) < recencyThreshold
		switch {
		case ra && rb && !a.mtime.Equal(b.mtime):
			return a.mtime.After(b.mtime)
		case ra != rb:
			return ra
		}
		return a.path < b.path // older files, and recent ones of equal age
	})
}

// globMatcher matches slash-separated relative paths against a doublestar
// pattern, optionally ignoring case, and tells which directories cannot
// hold a match so walks can skip them.
type globMatcher struct {
	pattern  string
	fold     bool
	segments []string
	prunable bool
}

func newGlobMatcher(pattern string, caseSensitive bool) (*globMatcher, error) {
	if !caseSensitive {
		pattern = strings.ToLower(pattern)
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, Errorf(ErrInvalidParams, "Invalid glob pattern %q: check its brackets and braces.", pattern)
	}
	return &globMatcher{
		pattern:  pattern,
		fold:     !caseSensitive,
		segments: strings.Split(pattern, "/"),
		// Braces may hold slashes; then segments cannot be matched one by
		// one.
		prunable: !strings.ContainsAny(pattern, "{}"),
	}, nil
}

func (m *globMatcher) match(rel string) bool {
	if m.fold {
		rel = strings.ToLower(rel)
	}
	return doublestar.MatchUnvalidated(m.pattern, rel)
}

// mayContain reports whether files below the directory rel may match.
func (m *globMatcher) mayContain(rel string) bool {
	if !m.prunable {
		return true
	}
	if m.fold {
		rel = strings.ToLower(rel)
	}
	for i, part := range strings.Split(rel, "/") {
		if i >= len(m.segments) {
			return false
		}
		seg := m.segments[i]
		if seg == "**" {
			return true
		}
		// The last segment names the files themselves.
		if i == len(m.segments)-1 || !doublestar.MatchUnvalidated(seg, part) {
			return false
		}
	}
	return true
}
