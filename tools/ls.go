package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"google.golang.org/genai"
)

// lsTool is list_directory: the entries directly inside one directory.
type lsTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

func newLsTool(ws *Workspace) *lsTool {
	return &lsTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name:        "list_directory",
		Description: "Lists the names of files and subdirectories directly within a specified directory path. Can optionally ignore entries matching provided glob patterns.",
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"dir_path": map[string]any{
					"description": "The path to the directory to list",
					"type":        "string",
				},
				"ignore": map[string]any{
					"description": "List of glob patterns to ignore",
					"items":       map[string]any{"type": "string"},
					"type":        "array",
				},
				"file_filtering_options": fileFilteringSchema("Optional: Whether to respect ignore patterns from .gitignore or .geminiignore"),
			},
			"required": []string{"dir_path"},
		},
	}}
}

// fileFilteringSchema is the file_filtering_options parameter shared by
// list_directory and read_many_files.
func fileFilteringSchema(description string) map[string]any {
	return map[string]any{
		"description": description,
		"type":        "object",
		"properties": map[string]any{
			"respect_git_ignore": map[string]any{
				"description": "Optional: Whether to respect .gitignore patterns when listing files. Only available in git repositories. Defaults to true.",
				"type":        "boolean",
			},
			"respect_gemini_ignore": map[string]any{
				"description": "Optional: Whether to respect .geminiignore patterns when listing files. Defaults to true.",
				"type":        "boolean",
			},
		},
	}
}

func (t *lsTool) Name() string                            { return "list_directory" }
func (t *lsTool) DisplayName() string                     { return "ReadFolder" }
func (t *lsTool) Kind() Kind                              { return KindSearch }
func (t *lsTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *lsTool) Describe(a map[string]any) string {
	return t.ws.describePath(argString(a, "dir_path"))
}

type lsEntry struct {
	name  string
	isDir bool
	size  int64
}

func (t *lsTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "list_directory")
	}
	a := args(call.Args)
	p, err := a.requiredStr("dir_path")
	if err != nil {
		return Result{}, err
	}
	patterns, err := a.strings("ignore")
	if err != nil {
		return Result{}, err
	}
	opts, err := a.nestedFiltering()
	if err != nil {
		return Result{}, err
	}
	ignoreRes := make([]*regexp.Regexp, 0, len(patterns))
	for _, pat := range patterns {
		ignoreRes = append(ignoreRes, simpleGlobRegexp(pat))
	}
	dir, err := t.ws.Resolve(p)
	if err != nil {
		return Result{}, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Result{}, Errorf(ErrFileNotFound, "Error: Directory not found or inaccessible: %s", dir)
		}
		return Result{}, &Error{Type: ErrLsExecution, Msg: fmt.Sprintf("Error listing directory: %v", err), Err: err}
	}
	if !fi.IsDir() {
		return Result{}, Errorf(ErrPathIsNotDirectory, "Error: Path is not a directory: %s. Use read_file to read a file.", dir)
	}
	des, err := t.ws.readDir(dir)
	if err != nil {
		return Result{}, &Error{Type: ErrLsExecution, Msg: fmt.Sprintf("Error listing directory: %v", err), Err: err}
	}
	if len(des) == 0 {
		return Result{
			LLMContent: fmt.Sprintf("Directory %s is empty.", dir),
			Display:    "Directory is empty.",
			Data:       map[string]any{"path": dir, "entries": []string{}, "ignored": 0},
		}, nil
	}

	flt := newFilters(t.ws, opts).forPath(dir)
	var entries []lsEntry
	ignored := 0
	for _, de := range des {
		full := filepath.Join(dir, de.Name())
		// Follow symlinks for the kind and size, as gemini-cli's fs.stat
		// does; an entry that cannot be stat'ed (a dangling link) is left
		// out.
		st, err := os.Stat(full)
		if err != nil {
			continue
		}
		if flt != nil && flt.ignored(full, st.IsDir()) {
			ignored++
			continue
		}
		if matchesAny(ignoreRes, de.Name()) {
			continue
		}
		e := lsEntry{name: de.Name(), isDir: st.IsDir()}
		if !e.isDir {
			e.size = st.Size()
		}
		entries = append(entries, e)
	}
	// Directories first, then by name, case-insensitively first like
	// JavaScript's localeCompare.
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.isDir != b.isDir {
			return a.isDir
		}
		if la, lb := strings.ToLower(a.name), strings.ToLower(b.name); la != lb {
			return la < lb
		}
		return a.name < b.name
	})

	var b strings.Builder
	fmt.Fprintf(&b, "Directory listing for %s:\n", dir)
	names := make([]string, 0, len(entries))
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.isDir {
			fmt.Fprintf(&b, "[DIR] %s", e.name)
			names = append(names, e.name+"/")
		} else {
			fmt.Fprintf(&b, "%s (%d bytes)", e.name, e.size)
			names = append(names, e.name)
		}
	}
	display := fmt.Sprintf("Found %d item(s).", len(entries))
	if ignored > 0 {
		fmt.Fprintf(&b, "\n\n(%d ignored)", ignored)
		display += fmt.Sprintf(" (%d ignored)", ignored)
	}
	return Result{
		LLMContent: b.String(),
		Display:    display,
		Data:       map[string]any{"path": dir, "entries": names, "ignored": ignored},
	}, nil
}

// simpleGlobRegexp compiles list_directory's ignore patterns the way
// gemini-cli does: matched against the entry name, "*" matches any run of
// characters and "?" any one, everything else is literal.
func simpleGlobRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^")
	for _, c := range pattern {
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
