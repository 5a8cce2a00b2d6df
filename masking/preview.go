package masking

import (
	"strconv"
	"strings"
)

// The preview formats are gemini-cli's (toolOutputMaskingService.ts),
// byte for byte.

// ShellToolName is the shell tool, whose masked preview keeps its output
// sections.
const ShellToolName = "run_shell_command"

const (
	// previewLines: output of more lines keeps previewHeadLines first and
	// previewHeadLines last lines.
	previewLines     = 20
	previewHeadLines = 10
	// previewChars: other tools' JSON longer than this keeps
	// previewHeadChars at each end.
	previewChars     = 500
	previewHeadChars = 250
)

// snippet is the masked response's text.
func snippet(preview, path string) string {
	return "<" + MaskingIndicatorTag + ">\n" + preview + "\n\nOutput too large. Full output available at: " + path + "\n</" + MaskingIndicatorTag + ">"
}

// genericPreview keeps the first and last 250 characters of a response's
// indented JSON when it is longer than 500. 250 characters take at most
// 750 bytes, so only the ends of a long content are converted.
func genericPreview(content []byte) string {
	const window = 3 * previewHeadChars
	if len(content) <= 2*window {
		s := string(content)
		if utf16AtMost(s, previewChars) {
			return validUTF8(s)
		}
		return utf16Head(s, previewHeadChars) + "\n... [TRUNCATED] ...\n" + utf16Tail(s, previewHeadChars)
	}
	return utf16Head(string(content[:window]), previewHeadChars) + "\n... [TRUNCATED] ...\n" +
		utf16Tail(string(content[len(content)-window:]), previewHeadChars)
}

// simplePreview keeps 10 + 10 lines of text longer than 20 lines.
func simplePreview(content string) string {
	n := strings.Count(content, "\n") + 1
	if n <= previewLines {
		return content
	}
	head := content
	for i, at := 0, 0; i < previewHeadLines; i++ {
		j := strings.IndexByte(content[at:], '\n')
		at += j + 1
		head = content[:at-1]
	}
	tail := content
	for i, at := 0, len(content); i < previewHeadLines; i++ {
		j := strings.LastIndexByte(content[:at], '\n')
		tail = content[j+1:]
		at = j
	}
	return head + "\n\n... [" + strconv.Itoa(n-2*previewHeadLines) + " lines omitted] ...\n\n" + tail
}

// shellPreview previews a shell response: its output or stdout, split into
// the sections run_shell_command writes, with the Output section shortened
// and the others kept, plus an exit code and error found only at the top
// level of the response. Output without sections is shortened as plain
// text, with nothing added.
func shellPreview(resp map[string]any) string {
	var raw any = ""
	if v := resp["output"]; truthy(v) {
		raw = v
	} else if v := resp["stdout"]; truthy(v) {
		raw = v
	}
	content, ok := raw.(string)
	if !ok {
		if isObject(raw) {
			return string(appendJSON(nil, raw, false))
		}
		return jsString(raw)
	}
	content = validUTF8(content)

	pre, sections := splitSections(content)
	if sections == nil {
		// Not run_shell_command's format: no sections, and no exit code
		// or error added either.
		return simplePreview(content)
	}
	var parts []string
	if t := jsTrim(pre); t != "" {
		parts = append(parts, simplePreview(t))
	}
	for _, s := range sections {
		body := jsTrim(s.body)
		if s.name == "Output" {
			parts = append(parts, "Output: "+simplePreview(body))
		} else {
			parts = append(parts, s.name+": "+body)
		}
	}
	preview := strings.Join(parts, "\n")

	exitCode, has := resp["exitCode"]
	if !has || exitCode == nil {
		exitCode, has = resp["exit_code"]
	}
	if has && exitCode != nil && !isZeroNumber(exitCode) {
		if s := jsString(exitCode); !strings.Contains(content, "Exit Code: "+s) {
			preview += "\n[Exit Code: " + s + "]"
		}
	}
	if e, has := resp["error"]; has && truthy(e) {
		if s := jsString(e); !strings.Contains(content, "Error: "+s) {
			preview += "\n[Error: " + s + "]"
		}
	}
	return preview
}

type section struct{ name, body string }

// splitSections is content.split(/^(Output|Error|Exit Code|Signal|Background
// PIDs|Process Group PGID): /m): the text before the first label, then
// each label with the text up to the next. It returns nil sections when no
// label starts a line.
func splitSections(content string) (string, []section) {
	var sections []section
	pre := ""
	last := -1 // start of the current section's body
	at := func(i int) int {
		name, ok := sectionAt(content[i:])
		if !ok {
			return i
		}
		if last < 0 {
			pre = content[:i]
		} else {
			sections[len(sections)-1].body = content[last:i]
		}
		sections = append(sections, section{name: name})
		last = i + len(name) + 2
		return last
	}
	if strings.IndexByte(content, '\r') < 0 && !strings.Contains(content, "\u2028") && !strings.Contains(content, "\u2029") {
		// Only \n starts lines: visit the line starts alone.
		for i := 0; i < len(content); {
			i = at(i)
			j := strings.IndexByte(content[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
		}
	} else {
		for i := 0; i < len(content); {
			if lineStart(content, i) {
				if j := at(i); j > i {
					i = j
					continue
				}
			}
			i++
		}
	}
	if last >= 0 {
		sections[len(sections)-1].body = content[last:]
	}
	return pre, sections
}

// lineStart reports whether ^ matches at i under JavaScript's multiline
// flag: at the start or after \n, \r, U+2028 or U+2029.
func lineStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	switch s[i-1] {
	case '\n', '\r':
		return true
	case 0xA8, 0xA9: // the last byte of U+2028 and U+2029, E2 80 A8/A9
		return i >= 3 && s[i-3] == 0xE2 && s[i-2] == 0x80
	}
	return false
}

// sectionAt returns the section label, one of run_shell_command's, that
// starts s followed by ": ".
func sectionAt(s string) (string, bool) {
	var name string
	switch {
	case strings.HasPrefix(s, "Output: "):
		name = "Output"
	case strings.HasPrefix(s, "Error: "):
		name = "Error"
	case strings.HasPrefix(s, "Exit Code: "):
		name = "Exit Code"
	case strings.HasPrefix(s, "Signal: "):
		name = "Signal"
	case strings.HasPrefix(s, "Background PIDs: "):
		name = "Background PIDs"
	case strings.HasPrefix(s, "Process Group PGID: "):
		name = "Process Group PGID"
	default:
		return "", false
	}
	return name, true
}

// truthy is JavaScript's truthiness of a JSON-like value.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	case float64:
		return v != 0 && v == v // NaN is falsy
	}
	if s, ok := scalar(v); ok {
		return s != "0" && s != "null"
	}
	return true
}

// isZeroNumber reports whether v is the number 0 (gemini-cli compares
// exitCode !== 0, so the string "0" is not zero).
func isZeroNumber(v any) bool {
	switch v := v.(type) {
	case float64:
		return v == 0
	case string, bool, nil, map[string]any, []any:
		return false
	}
	s, ok := scalar(v)
	return ok && s == "0"
}

func isObject(v any) bool {
	switch v.(type) {
	case nil, string, bool, float64:
		return false
	}
	_, ok := scalar(v)
	return !ok
}

// jsString is JavaScript's String(v) of a JSON-like value, as template
// literals format it.
func jsString(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return string(appendJSNumber(nil, v))
	case map[string]any:
		return "[object Object]"
	case []any:
		s := make([]string, len(v))
		for i, e := range v {
			if e != nil {
				s[i] = jsString(e)
			}
		}
		return strings.Join(s, ",")
	}
	if s, ok := scalar(v); ok {
		return s
	}
	return jsString(normalize(v))
}
