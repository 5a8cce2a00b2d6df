package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// readFileTool is read_file: one file, optionally a line range of it.
type readFileTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

func newReadFileTool(ws *Workspace) *readFileTool {
	return &readFileTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name: "read_file",
		// gemini-cli also lists images, audio and PDF here, which it sends
		// as inline data. agentry's result is text, so it describes such
		// files instead.
		Description: "Reads and returns the content of a specified file. If the file is large, the content will be truncated. The tool's response will clearly indicate if truncation has occurred and will provide details on how to read more of the file using the 'start_line' and 'end_line' parameters. Handles text files; binary files (images, audio, PDF, executables) are identified rather than shown. For text files, it can read specific line ranges.",
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"file_path": map[string]any{
					"description": "The path to the file to read.",
					"type":        "string",
				},
				"start_line": map[string]any{
					"description": "Optional: The 1-based line number to start reading from.",
					"type":        "integer",
					"minimum":     1,
				},
				"end_line": map[string]any{
					"description": "Optional: The 1-based line number to end reading at (inclusive).",
					"type":        "integer",
					"minimum":     1,
				},
			},
			"required": []string{"file_path"},
		},
	}}
}

func (t *readFileTool) Name() string                            { return "read_file" }
func (t *readFileTool) DisplayName() string                     { return "ReadFile" }
func (t *readFileTool) Kind() Kind                              { return KindRead }
func (t *readFileTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *readFileTool) Describe(a map[string]any) string {
	d := t.ws.describePath(argString(a, "file_path"))
	if s := argString(a, "start_line"); s != "" {
		d += ":" + s
		if e := argString(a, "end_line"); e != "" {
			d += "-" + e
		}
	}
	return d
}

func (t *readFileTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "read_file")
	}
	a := args(call.Args)
	p, err := a.requiredStr("file_path")
	if err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(p) == "" {
		return Result{}, Errorf(ErrInvalidParams, "The 'file_path' parameter must be non-empty.")
	}
	start, hasStart, err := a.minInteger("start_line", 1)
	if err != nil {
		return Result{}, err
	}
	end, hasEnd, err := a.minInteger("end_line", 1)
	if err != nil {
		return Result{}, err
	}
	if hasStart && hasEnd && start > end {
		return Result{}, Errorf(ErrInvalidParams, "start_line cannot be greater than end_line")
	}
	abs, err := t.ws.resolveFileArg(p)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && te.Type == ErrPathNotInWorkspace {
			te.Display = "Path not in workspace."
		}
		return Result{}, err
	}
	// gemini-cli refuses files its ignore files exclude (respecting both
	// .gitignore and .geminiignore by default); so does agentry.
	if newFilters(t.ws, filteringOptions{gitIgnore: true, agentryIgnore: true}).ignored(abs, false) {
		return Result{}, Errorf(ErrInvalidParams,
			"File path '%s' is ignored by configured ignore patterns (.gitignore, .geminiignore or .agentryignore). Use run_shell_command (e.g. cat) if you really need to read it.", abs)
	}
	rel := t.ws.display(abs)
	fc, err := readFileContent(t.ws, abs, rel, start, end)
	if err != nil {
		return Result{}, err
	}

	res := Result{LLMContent: fc.text, Display: fc.display}
	if fc.kind == typeText {
		if fc.truncated {
			res.LLMContent = fmt.Sprintf(`
IMPORTANT: The file content has been truncated.
Status: Showing lines %d-%d of %d total lines.
Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: %d.

--- FILE CONTENT (truncated) ---
%s`, fc.first, fc.last, fc.total, fc.last+1, fc.text)
		}
		// gemini-cli shows nothing for a whole file; the summary counts
		// the lines shown.
		res.Summary = fmt.Sprintf("%d lines", fc.total)
		if fc.truncated {
			res.Summary = fmt.Sprintf("%d-%d of %d", fc.first, fc.last, fc.total)
		}
		res.Data = map[string]any{
			"path":       abs,
			"totalLines": fc.total,
			"startLine":  fc.first,
			"endLine":    fc.last,
			"truncated":  fc.truncated,
		}
	} else {
		// Result.Data travels in protocol events, so it carries the media
		// type and size, not the bytes.
		res.Data = map[string]any{"path": abs, "fileType": string(fc.kind)}
		if fc.mimeType != "" {
			res.Data["mimeType"] = fc.mimeType
			res.Data["size"] = fc.size
		}
	}
	return res, nil
}

// describePath renders a path argument for Describe without touching the
// file system: relative to the primary root when it lies inside it.
func (w *Workspace) describePath(p string) string {
	if p == "" {
		return "."
	}
	return w.display(w.lexical(p))
}
