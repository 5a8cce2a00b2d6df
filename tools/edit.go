package tools

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// editTool is replace: swap literal text in one file, or create a file
// when old_string is empty and the file does not exist.
type editTool struct {
	ws   *Workspace
	decl *genai.FunctionDeclaration
}

const editDescription = `Replaces text within a file. By default, the tool expects to find and replace exactly ONE occurrence of ` + "`old_string`" + `. If you want to replace multiple occurrences of the exact same string, set ` + "`allow_multiple`" + ` to true. This tool requires providing significant context around the change to ensure precise targeting. Always use the read_file tool to examine the file's current content before attempting a text replacement.
      
      The user has the ability to modify the ` + "`new_string`" + ` content. If modified, this will be stated in the response.
      
      Expectation for required parameters:
      1. ` + "`old_string`" + ` MUST be the exact literal text to replace (including all whitespace, indentation, newlines, and surrounding code etc.).
      2. ` + "`new_string`" + ` MUST be the exact literal text to replace ` + "`old_string`" + ` with (also including all whitespace, indentation, newlines, and surrounding code etc.). Ensure the resulting code is correct and idiomatic and that ` + "`old_string` and `new_string`" + ` are different.
      3. ` + "`instruction`" + ` is the detailed instruction of what needs to be changed. It is important to Make it specific and detailed so developers or large language models can understand what needs to be changed and perform the changes on their own if necessary. 
      4. NEVER escape ` + "`old_string` or `new_string`" + `, that would break the exact literal text requirement.
      **Important:** If ANY of the above are not satisfied, the tool will fail. CRITICAL for ` + "`old_string`" + `: Must uniquely identify the instance(s) to change. Include at least 3 lines of context BEFORE and AFTER the target text, matching whitespace and indentation precisely. If this string matches multiple locations and ` + "`allow_multiple`" + ` is not true, the tool will fail.
      5. Prefer to break down complex and long changes into multiple smaller atomic calls to this tool. Always check the content of the file after changes or not finding a string to match.
      **Multiple replacements:** Set ` + "`allow_multiple`" + ` to true if you want to replace ALL occurrences that match ` + "`old_string`" + ` exactly.`

const editInstructionDescription = `A clear, semantic instruction for the code change, acting as a high-quality prompt for an expert LLM assistant. It must be self-contained and explain the goal of the change.

A good instruction should concisely answer:
1.  WHY is the change needed? (e.g., "To fix a bug where users can be null...")
2.  WHERE should the change happen? (e.g., "...in the 'renderUserProfile' function...")
3.  WHAT is the high-level change? (e.g., "...add a null check for the 'user' object...")
4.  WHAT is the desired outcome? (e.g., "...so that it displays a loading spinner instead of crashing.")

**GOOD Example:** "In the 'calculateTotal' function, correct the sales tax calculation by updating the 'taxRate' constant from 0.05 to 0.075 to reflect the new regional tax laws."

**BAD Examples:**
- "Change the text." (Too vague)
- "Fix the bug." (Doesn't explain the bug or the fix)
- "Replace the line with this new line." (Brittle, just repeats the other parameters)
`

func newEditTool(ws *Workspace) *editTool {
	return &editTool{ws: ws, decl: &genai.FunctionDeclaration{
		Name:        "replace",
		Description: editDescription,
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"file_path": map[string]any{
					"description": "The path to the file to modify.",
					"type":        "string",
				},
				"instruction": map[string]any{
					"description": editInstructionDescription,
					"type":        "string",
				},
				"old_string": map[string]any{
					"description": "The exact literal text to replace, preferably unescaped. For single replacements (default), include at least 3 lines of context BEFORE and AFTER the target text, matching whitespace and indentation precisely. If this string is not the exact literal text (i.e. you escaped it) or does not match exactly, the tool will fail.",
					"type":        "string",
				},
				"new_string": map[string]any{
					"description": "The exact literal text to replace `old_string` with, preferably unescaped. Provide the EXACT text. Ensure the resulting code is correct and idiomatic. Do not use omission placeholders like '(rest of methods ...)', '...', or 'unchanged code'; provide exact literal code.",
					"type":        "string",
				},
				"allow_multiple": map[string]any{
					"type":        "boolean",
					"description": "If true, the tool will replace all occurrences of `old_string`. If false (default), it will only succeed if exactly one occurrence is found.",
				},
			},
			"required": []string{"file_path", "instruction", "old_string", "new_string"},
		},
	}}
}

func (t *editTool) Name() string                            { return "replace" }
func (t *editTool) DisplayName() string                     { return "Edit" }
func (t *editTool) Kind() Kind                              { return KindEdit }
func (t *editTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *editTool) Describe(a map[string]any) string {
	rel := t.ws.describePath(argString(a, "file_path"))
	oldS, newS := argString(a, "old_string"), argString(a, "new_string")
	switch {
	case oldS == "":
		return "Create " + rel
	case oldS == newS:
		return "No file changes to " + rel
	}
	return fmt.Sprintf("%s: %s => %s", rel, snippetOf(oldS), snippetOf(newS))
}

// snippetOf is the first line of s, cut to 30 runes.
func snippetOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	r := []rune(first)
	if len(r) > 30 {
		r = r[:30]
	}
	out := string(r)
	if len([]rune(s)) > 30 {
		out += "..."
	}
	return out
}

func (t *editTool) Execute(ctx context.Context, call Call) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, cancelled(ctx, "replace")
	}
	e, err := t.plan(call.Args)
	if err != nil {
		return Result{}, err
	}
	if err := t.ws.writeFile(e.abs, []byte(e.final)); err != nil {
		return Result{}, err
	}
	// gemini-cli 0.61.0's words for content the user changed, last.
	var modified string
	if modifiedByUser(call.Args) {
		modified = " The confirmation step modified the `new_string` content to be: " + argString(call.Args, "new_string") + "."
	}
	if e.isNew {
		return Result{
			LLMContent: fmt.Sprintf("Created new file: %s with provided content. Here is the updated code:\n%s", e.abs, e.final) + modified,
			Display:    "Created " + t.ws.display(e.abs),
			Diff:       newFileDiff(e.abs, "", e.final),
			Data:       map[string]any{"path": e.abs, "isNewFile": true, "occurrences": 1},
		}, nil
	}
	diff := newFileDiff(e.abs, e.original, e.final)
	return Result{
		LLMContent: fmt.Sprintf("Successfully modified file: %s (%d replacements). Here is the updated code:\n%s",
			e.abs, e.occurrences, diffSnippet(e.current, e.updated, snippetContextLines)) + modified,
		Display: fmt.Sprintf("%s: %d added, %d removed", t.ws.display(e.abs), diff.LinesAdded, diff.LinesRemoved),
		Diff:    diff,
		Data:    map[string]any{"path": e.abs, "isNewFile": false, "occurrences": e.occurrences},
	}, nil
}

// Preview returns the change a call would make, without making it, for an
// approval prompt.
func (t *editTool) Preview(callArgs map[string]any) (*FileDiff, error) {
	e, err := t.plan(callArgs)
	if err != nil {
		return nil, err
	}
	return newFileDiff(e.abs, e.original, e.final), nil
}

// edit is a planned replace call: the file and its content before and
// after.
type edit struct {
	abs   string
	isNew bool
	// original is the file as read; current and updated are it before and
	// after the replacement with LF line endings; final is what is written.
	original, current, updated, final string
	occurrences                       int
}

// plan validates a call and computes its edit.
func (t *editTool) plan(callArgs map[string]any) (edit, error) {
	a := args(callArgs)
	p, err := a.requiredStr("file_path")
	if err != nil {
		return edit{}, err
	}
	if p == "" {
		return edit{}, Errorf(ErrInvalidParams, "The 'file_path' parameter must be non-empty.")
	}
	// instruction guides gemini-cli's LLM-based self-correction of failed
	// edits; agentry's tools call no model, so it is accepted and unused.
	if _, err := a.str("instruction"); err != nil {
		return edit{}, err
	}
	oldS, err := a.requiredStr("old_string")
	if err != nil {
		return edit{}, err
	}
	newS, err := a.requiredStr("new_string")
	if err != nil {
		return edit{}, err
	}
	allowMultiple, err := a.boolean("allow_multiple", false)
	if err != nil {
		return edit{}, err
	}
	if placeholders := omissionPlaceholders(newS); len(placeholders) > 0 {
		inOld := map[string]bool{}
		for _, ph := range omissionPlaceholders(oldS) {
			inOld[ph] = true
		}
		for _, ph := range placeholders {
			if !inOld[ph] {
				return edit{}, Errorf(ErrInvalidParams,
					"`new_string` contains an omission placeholder (for example 'rest of methods ...'). Provide exact literal replacement text.")
			}
		}
	}
	abs, err := t.ws.resolveFileArg(p)
	if err != nil {
		return edit{}, err
	}

	raw, exists, err := readExisting(t.ws, "replace", abs)
	if err != nil {
		return edit{}, err
	}

	if !exists {
		if oldS != "" {
			return edit{}, Errorf(ErrFileNotFound,
				"File not found: %s. Cannot apply edit. Use an empty old_string to create a new file.", abs)
		}
		return edit{abs: abs, isNew: true, updated: newS, final: newS, occurrences: 1}, nil
	}
	if oldS == "" {
		return edit{}, Errorf(ErrCreateExisting,
			"File already exists, cannot create: %s. To change it, set old_string to the exact text to replace.", abs)
	}

	original := decodeText(raw)
	crlf := usesCRLF(original)
	current := strings.ReplaceAll(original, "\r\n", "\n")
	oldN := strings.ReplaceAll(oldS, "\r\n", "\n")
	newN := strings.ReplaceAll(newS, "\r\n", "\n")

	updated, occurrences := replaceExact(current, oldN, newN, allowMultiple)
	if occurrences == 0 {
		updated, occurrences = replaceFlexible(current, oldN, newN, allowMultiple)
	}
	switch {
	case occurrences == 0:
		return edit{}, Errorf(ErrEditNoOccurrence,
			"Failed to edit, 0 occurrences found for old_string in %s. Ensure you're not escaping content incorrectly and check whitespace, indentation, and context. Use read_file tool to verify.", p)
	case !allowMultiple && occurrences != 1:
		return edit{}, Errorf(ErrEditMultipleMatches,
			"Failed to edit, Expected 1 occurrence but found %d for old_string in file: %s. If you intended to replace multiple occurrences, set 'allow_multiple' to true.", occurrences, p)
	case oldN == newN:
		return edit{}, Errorf(ErrEditNoChange,
			"No changes to apply. The old_string and new_string are identical in file: %s", p)
	}

	final := updated
	if crlf {
		final = toCRLF(updated)
	}
	return edit{abs: abs, original: original, current: current, updated: updated, final: final, occurrences: occurrences}, nil
}

// replaceExact replaces literal occurrences of oldS. With more than one
// occurrence and allowMultiple unset it changes nothing and only reports the
// count, which the caller turns into an error.
func replaceExact(content, oldS, newS string, allowMultiple bool) (string, int) {
	n := strings.Count(content, oldS)
	if n == 0 || (n > 1 && !allowMultiple) {
		return content, n
	}
	return restoreTrailingNewline(content, strings.ReplaceAll(content, oldS, newS)), n
}

// replaceFlexible is gemini-cli's second strategy: match old_string line by
// line ignoring each line's leading and trailing whitespace, and re-indent
// new_string to the indentation of the matched block. Models often get
// indentation wrong; this rescues those edits without guessing at content.
// gemini-cli has two further strategies (a token regex and a fuzzy
// Levenshtein match) and an LLM fixer; agentry stops here, preferring a
// clear failure the model can correct to an edit in a place it did not
// mean.
func replaceFlexible(content, oldS, newS string, allowMultiple bool) (string, int) {
	source := strings.SplitAfter(content, "\n")
	if source[len(source)-1] == "" {
		source = source[:len(source)-1]
	}
	search := strings.Split(oldS, "\n")
	for i := range search {
		search[i] = strings.TrimSpace(search[i])
	}
	replace := strings.Split(newS, "\n")

	var out []string
	n := 0
	for i := 0; i < len(source); {
		if i+len(search) <= len(source) && windowMatches(source[i:i+len(search)], search) {
			n++
			window := source[i : i+len(search)]
			text := strings.Join(reindent(replace, leadingIndent(window[0])), "\n")
			if newS != "" && strings.HasSuffix(window[len(window)-1], "\n") && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			out = append(out, text)
			i += len(search)
			continue
		}
		out = append(out, source[i])
		i++
	}
	if n == 0 || (n > 1 && !allowMultiple) {
		return content, n
	}
	return restoreTrailingNewline(content, strings.Join(out, "")), n
}

func windowMatches(window, search []string) bool {
	for j, l := range window {
		if strings.TrimSpace(l) != search[j] {
			return false
		}
	}
	return true
}

func leadingIndent(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// reindent moves lines to indent, keeping their indentation relative to the
// first line.
func reindent(lines []string, indent string) []string {
	ref := leadingIndent(lines[0])
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			out[i] = ""
		case strings.HasPrefix(l, ref):
			out[i] = indent + l[len(ref):]
		default:
			out[i] = indent + strings.TrimLeft(l, " \t")
		}
	}
	return out
}

// restoreTrailingNewline makes modified end with a newline exactly when
// original did.
func restoreTrailingNewline(original, modified string) string {
	had := strings.HasSuffix(original, "\n")
	has := strings.HasSuffix(modified, "\n")
	switch {
	case had && !has:
		return modified + "\n"
	case !had && has:
		return strings.TrimSuffix(modified, "\n")
	}
	return modified
}
