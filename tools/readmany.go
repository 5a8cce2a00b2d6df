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

	"github.com/bmatcuk/doublestar/v4"
	"google.golang.org/genai"
)

// defaultExcludes are read_many_files' default exclusions: gemini-cli's
// DEFAULT_FILE_EXCLUDES plus the context files, which the model already
// has in its context (gemini-cli excludes its own GEMINI.md the same way).
var defaultExcludes = []string{
	"**/node_modules/**", "**/.git/**", "**/bower_components/**", "**/.svn/**", "**/.hg/**",
	"**/.vscode/**", "**/.idea/**", "**/dist/**", "**/build/**", "**/coverage/**", "**/__pycache__/**",
	"**/*.bin", "**/*.exe", "**/*.dll", "**/*.so", "**/*.dylib", "**/*.class", "**/*.jar", "**/*.war",
	"**/*.zip", "**/*.tar", "**/*.gz", "**/*.bz2", "**/*.rar", "**/*.7z", "**/*.pak", "**/*.rpa",
	"**/*.doc", "**/*.docx", "**/*.xls", "**/*.xlsx", "**/*.ppt", "**/*.pptx", "**/*.odt", "**/*.ods", "**/*.odp",
	"**/*.pyc", "**/*.pyo",
	"**/.DS_Store", "**/.env",
	"**/AGENTRY.md", "**/GEMINI.md",
}

const (
	referenceContentEnd = "--- End of content ---"
	noFilesRead         = "No files matching the criteria were found or all were skipped."
	truncatedFileNotice = "[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]\n\n"
)

// readManyTool is read_many_files: the concatenated contents of the files
// matching glob patterns.
type readManyTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

const readManyDescription = `Reads content from multiple files specified by glob patterns within a configured target directory. For text files, it concatenates their content into a single string. It is primarily designed for text-based files. Image, audio and PDF files are only considered if their file names or extensions are explicitly included in the 'include' argument, and are then identified rather than shown.

This tool is useful when you need to understand or analyze a collection of files, such as:
- Getting an overview of a codebase or parts of it (e.g., all TypeScript files in the 'src' directory).
- Finding where specific functionality is implemented if the user asks broad questions about code.
- Reviewing documentation files (e.g., all Markdown files in the 'docs' directory).
- Gathering context from multiple configuration files.
- When the user asks to "read all files in X directory" or "show me the content of all Y files".

Use this tool when the user's query implies needing the content of several files simultaneously for context, analysis, or summarization. For text files, it uses default UTF-8 encoding and a '--- {filePath} ---' separator between file contents. The tool inserts a '--- End of content ---' after the last file. Ensure glob patterns are relative to the target directory. Glob patterns like 'src/**/*.js' are supported. Avoid using for single files if a more specific single-file reading tool is available, unless the user specifically requests to process a list containing just one file via this tool. Other binary files (not explicitly requested as image/audio/PDF) are generally skipped. Default excludes apply to common non-text files (except for explicitly requested images/audio/PDFs) and large dependency directories unless 'useDefaultExcludes' is false.`

func newReadManyTool(ws *Workspace) *readManyTool {
	return &readManyTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name:        "read_many_files",
		Description: readManyDescription,
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"include": map[string]any{
					"type":        "array",
					"items":       map[string]any{"type": "string", "minLength": 1},
					"minItems":    1,
					"description": `An array of glob patterns or paths. Examples: ["src/**/*.ts"], ["README.md", "docs/"]`,
				},
				"exclude": map[string]any{
					"type":        "array",
					"items":       map[string]any{"type": "string", "minLength": 1},
					"description": `Optional. Glob patterns for files/directories to exclude. Added to default excludes if useDefaultExcludes is true. Example: "**/*.log", "temp/"`,
					"default":     []string{},
				},
				"recursive": map[string]any{
					"type":        "boolean",
					"description": "Optional. Whether to search recursively (primarily controlled by `**` in glob patterns). Defaults to true.",
					"default":     true,
				},
				"useDefaultExcludes": map[string]any{
					"type":        "boolean",
					"description": "Optional. Whether to apply a list of default exclusion patterns (e.g., node_modules, .git, binary files). Defaults to true.",
					"default":     true,
				},
				"file_filtering_options": fileFilteringSchema("Whether to respect ignore patterns from .gitignore or .geminiignore"),
			},
			"required": []string{"include"},
		},
	}}
}

func (t *readManyTool) Name() string                            { return "read_many_files" }
func (t *readManyTool) DisplayName() string                     { return "ReadManyFiles" }
func (t *readManyTool) Kind() Kind                              { return KindRead }
func (t *readManyTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *readManyTool) Describe(a map[string]any) string {
	inc, _ := args(a).strings("include")
	return fmt.Sprintf("Will attempt to read and concatenate files using patterns: `%s` (within target directory: %s)",
		strings.Join(inc, "`, `"), t.ws.Root())
}

// skippedFile is a file read_many_files left out, and why.
type skippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// excludeSet holds read_many_files' exclusion globs, compared with paths
// relative to the root being searched, ignoring case like gemini-cli's
// nocase glob.
type excludeSet []string

func newExcludeSet(patterns []string) excludeSet {
	var ex excludeSet
	for _, p := range patterns {
		p = strings.ToLower(filepath.ToSlash(p))
		for strings.HasPrefix(p, "./") {
			p = p[2:]
		}
		// "temp/" means the directory temp and everything below it.
		if strings.HasSuffix(p, "/") {
			p += "**"
		}
		if p != "" && doublestar.ValidatePattern(p) {
			ex = append(ex, p)
		}
	}
	return ex
}

func (ex excludeSet) file(rel string) bool {
	rel = strings.ToLower(rel)
	for _, p := range ex {
		if doublestar.MatchUnvalidated(p, rel) {
			return true
		}
	}
	return false
}

// dir reports whether a pattern "X/**" excludes the whole directory rel.
func (ex excludeSet) dir(rel string) bool {
	rel = strings.ToLower(rel)
	for _, p := range ex {
		if d, ok := strings.CutSuffix(p, "/**"); ok && doublestar.MatchUnvalidated(d, rel) {
			return true
		}
	}
	return false
}

func (t *readManyTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "read_many_files")
	}
	a := args(call.Args)
	if !a.has("include") {
		return Result{}, missing("include")
	}
	include, err := a.strings("include")
	if err != nil {
		return Result{}, err
	}
	if len(include) == 0 {
		return Result{}, Errorf(ErrInvalidParams, "params/include must NOT have fewer than 1 items")
	}
	for i, p := range include {
		if p == "" {
			return Result{}, Errorf(ErrInvalidParams, "params/include/%d must NOT have fewer than 1 characters", i)
		}
	}
	exclude, err := a.strings("exclude")
	if err != nil {
		return Result{}, err
	}
	// recursive is accepted for compatibility; as in gemini-cli, "**" in
	// the patterns is what makes a search recursive.
	if _, err := a.boolean("recursive", true); err != nil {
		return Result{}, err
	}
	useDefaults, err := a.boolean("useDefaultExcludes", true)
	if err != nil {
		return Result{}, err
	}
	opts, err := a.nestedFiltering()
	if err != nil {
		return Result{}, err
	}
	var excludes []string
	if useDefaults {
		excludes = append(excludes, defaultExcludes...)
	}
	ex := newExcludeSet(append(excludes, exclude...))

	flts := newFilters(t.ws, opts)
	files := map[string]string{} // the path found to the real path to open
	var skipped []skippedFile
	ignored := 0
	for _, root := range t.ws.Roots() {
		var ms []*globMatcher
		for _, p := range include {
			pat, ok := patternForDir(filepath.ToSlash(strings.ReplaceAll(p, `\`, "/")), root)
			if !ok {
				continue
			}
			if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(pat))); err == nil {
				if fi.IsDir() {
					// gemini-cli's example "docs/" would match nothing
					// with its nodir glob; a directory is taken to mean
					// the files below it.
					pat = escapeGlob(strings.TrimSuffix(pat, "/")) + "/**"
				} else {
					pat = escapeGlob(pat)
				}
			}
			m, err := newGlobMatcher(pat, false)
			if err != nil {
				return Result{}, err
			}
			ms = append(ms, m)
		}
		if len(ms) == 0 {
			continue
		}
		err := walk(ctx, flts.forPath(root), root, false, func(e walkEntry) error {
			if e.entry.IsDir() {
				if ex.dir(e.rel) || !anyMayContain(ms, e.rel) {
					return errSkipDir
				}
				return nil
			}
			if files[e.abs] != "" || !anyMatch(ms, e.rel) || ex.file(e.rel) {
				return nil
			}
			real, _, ok := statRegularInWorkspace(t.ws, e)
			if !ok {
				if e.entry.Type()&fs.ModeSymlink != 0 {
					skipped = append(skipped, skippedFile{e.abs, "Security: Path not in workspace"})
				}
				return nil
			}
			if e.ignored {
				ignored++
				return nil
			}
			files[e.abs] = real
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, cancelled(ctx, "read_many_files")
			}
			return Result{}, &Error{Type: ErrReadManyFiles, Msg: fmt.Sprintf("Error during file search: %v", err), Err: err}
		}
	}
	if ignored > 0 {
		skipped = append(skipped, skippedFile{fmt.Sprintf("%d file(s)", ignored), "ignored by project ignore files"})
	}

	sorted := make([]string, 0, len(files))
	for f := range files {
		sorted = append(sorted, f)
	}
	sort.Strings(sorted)

	var b strings.Builder
	var read []string
	for _, abs := range sorted {
		if err := ctx.Err(); err != nil {
			return Result{}, cancelled(ctx, "read_many_files")
		}
		rel := t.ws.display(abs)
		fc, err := readManyContent(t.ws, include, files[abs], abs, rel)
		if errors.Is(err, errNotRequested) {
			skipped = append(skipped, skippedFile{rel, "asset file (image/pdf/audio) was not explicitly requested by name or extension"})
			continue
		}
		if err != nil {
			skipped = append(skipped, skippedFile{rel, "Read error: " + err.Error()})
			continue
		}
		fmt.Fprintf(&b, "--- %s ---\n\n", abs)
		if fc.truncated {
			b.WriteString(truncatedFileNotice)
		}
		b.WriteString(fc.text)
		b.WriteString("\n\n")
		read = append(read, rel)
	}
	content := noFilesRead
	if len(read) > 0 {
		content = b.String() + "\n" + referenceContentEnd
	}

	display := fmt.Sprintf("Read %d file(s)", len(read))
	if len(skipped) > 0 {
		display += fmt.Sprintf(", skipped %d item(s)", len(skipped))
	}
	if skipped == nil {
		skipped = []skippedFile{}
	}
	if read == nil {
		read = []string{}
	}
	return Result{
		LLMContent: content,
		Display:    display,
		Data:       map[string]any{"files": read, "skipped": skipped},
	}, nil
}

// errNotRequested: an image, audio or PDF file that no include pattern
// names.
var errNotRequested = errors.New("asset file not explicitly requested")

// readManyContent reads one file for read_many_files, which skips image,
// audio and PDF files the include patterns do not name. real is the
// symlink-free path to open, abs the path found, rel the path to show.
func readManyContent(ws *Workspace, include []string, real, abs, rel string) (fileContent, error) {
	o, err := openForRead(ws, real)
	if err != nil {
		return fileContent{}, err
	}
	defer o.Close()
	switch o.kind {
	case typeImage, typePDF, typeAudio:
		if !explicitlyRequested(include, abs) {
			return fileContent{}, errNotRequested
		}
	}
	return o.content(abs, rel, 0, 0)
}

// explicitlyRequested reports whether some include pattern names the file's
// extension or its name, which gemini-cli requires before it reads an
// image, audio or PDF file.
func explicitlyRequested(include []string, abs string) bool {
	ext := strings.ToLower(filepath.Ext(abs))
	stem := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	for _, p := range include {
		if strings.Contains(strings.ToLower(p), ext) || strings.Contains(p, stem) {
			return true
		}
	}
	return false
}

func anyMatch(ms []*globMatcher, rel string) bool {
	for _, m := range ms {
		if m.match(rel) {
			return true
		}
	}
	return false
}

func anyMayContain(ms []*globMatcher, rel string) bool {
	for _, m := range ms {
		if m.mayContain(rel) {
			return true
		}
	}
	return false
}
