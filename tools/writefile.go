package tools

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// snippetContextLines is how much context write_file and replace show
// around their changes.
const snippetContextLines = 5

// writeFileTool is write_file: create or overwrite one file.
type writeFileTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

func newWriteFileTool(ws *Workspace) *writeFileTool {
	return &writeFileTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name: "write_file",
		Description: `Writes content to a specified file in the local filesystem.

      The user has the ability to modify ` + "`content`" + `. If modified, this will be stated in the response.`,
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"file_path": map[string]any{
					"description": "The path to the file to write to.",
					"type":        "string",
				},
				"content": map[string]any{
					"description": "The content to write to the file. Do not use omission placeholders like '(rest of methods ...)', '...', or 'unchanged code'; provide complete literal content.",
					"type":        "string",
				},
			},
			"required": []string{"file_path", "content"},
		},
	}}
}

func (t *writeFileTool) Name() string                            { return "write_file" }
func (t *writeFileTool) DisplayName() string                     { return "WriteFile" }
func (t *writeFileTool) Kind() Kind                              { return KindEdit }
func (t *writeFileTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *writeFileTool) Describe(a map[string]any) string {
	return "Writing to " + t.ws.describePath(argString(a, "file_path"))
}

func (t *writeFileTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "write_file")
	}
	w, err := t.plan(call.Args)
	if err != nil {
		return Result{}, err
	}
	if err := t.ws.writeFile(w.abs, []byte(w.final)); err != nil {
		return Result{}, err
	}

	diff := newFileDiff(w.abs, w.before, w.final)
	var msg string
	if w.isNew {
		msg = fmt.Sprintf("Successfully created and wrote to new file: %s.", w.abs)
	} else {
		msg = fmt.Sprintf("Successfully overwrote file: %s.", w.abs)
	}
	if modifiedByUser(call.Args) {
		// gemini-cli's words, after the first sentence.
		msg += " User modified the `content` to be: " + argString(call.Args, "content")
	}
	msg += " Here is the updated code:\n" + diffSnippet(w.before, w.final, snippetContextLines)
	return Result{
		LLMContent: msg,
		Display:    fmt.Sprintf("%s: %d added, %d removed", t.ws.display(w.abs), diff.LinesAdded, diff.LinesRemoved),
		Diff:       diff,
		Data:       map[string]any{"path": w.abs, "isNewFile": w.isNew},
	}, nil
}

// Preview returns the change a call would make, without making it, for an
// approval prompt.
func (t *writeFileTool) Preview(callArgs map[string]any) (*FileDiff, error) {
	w, err := t.plan(callArgs)
	if err != nil {
		return nil, err
	}
	return newFileDiff(w.abs, w.before, w.final), nil
}

// write is a planned write_file call.
type write struct {
	abs           string
	isNew         bool
	before, final string
}

// plan validates a call and computes what it writes.
func (t *writeFileTool) plan(callArgs map[string]any) (write, error) {
	a := args(callArgs)
	p, err := a.requiredStr("file_path")
	if err != nil {
		return write{}, err
	}
	if p == "" {
		return write{}, Errorf(ErrInvalidParams, `Missing or empty "file_path"`)
	}
	content, err := a.requiredStr("content")
	if err != nil {
		return write{}, err
	}
	abs, err := t.ws.resolveFileArg(p)
	if err != nil {
		return write{}, err
	}
	if len(omissionPlaceholders(content)) > 0 {
		return write{}, Errorf(ErrInvalidParams,
			"`content` contains an omission placeholder (for example 'rest of methods ...'). Provide complete file content.")
	}
	raw, exists, err := readExisting(t.ws, "write_file", abs)
	if err != nil {
		return write{}, err
	}
	isNew, before := !exists, decodeText(raw)

	final := content
	// Keep an existing file's CRLF line endings, as gemini-cli does.
	if !isNew && usesCRLF(before) {
		final = toCRLF(final)
	}
	return write{abs: abs, isNew: isNew, before: before, final: final}, nil
}

// omittedPrefixes are the words before "..." that make a line an omission
// placeholder rather than code.
var omittedPrefixes = map[string]bool{
	"rest of":           true,
	"rest of method":    true,
	"rest of methods":   true,
	"rest of code":      true,
	"unchanged code":    true,
	"unchanged method":  true,
	"unchanged methods": true,
}

// omissionPlaceholders finds lines such as "(rest of methods ...)" or
// "// unchanged code ...", with which a model elides code it was asked to
// write out in full (gemini-cli's detectOmissionPlaceholders). It returns
// them normalised, so that placeholders already present in old_string can
// be told apart from new ones.
func omissionPlaceholders(text string) []string {
	var found []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(s, "//"); ok {
			s = strings.TrimSpace(rest)
		}
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			s = strings.TrimSpace(s[1 : len(s)-1])
		}
		i := strings.Index(s, "...")
		if i < 0 {
			continue
		}
		prefix := strings.Join(strings.Fields(strings.ToLower(s[:i])), " ")
		if !omittedPrefixes[prefix] {
			continue
		}
		if suffix := strings.TrimSpace(s[i+3:]); suffix != "" && strings.Trim(suffix, ".") != "" {
			continue
		}
		found = append(found, prefix+" ...")
	}
	return found
}
