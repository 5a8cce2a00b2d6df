package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// Caps on the files agentry reads on its own: a settings file (and
// gemini-cli's trustedFolders.json) and a .env file are a few kilobytes;
// anything larger is refused rather than read.
const (
	maxSettingsBytes = 1 << 20
	maxEnvBytes      = 1 << 20
)

// readLimited reads a file agentry opens on its own initiative: a regular
// file of at most limit bytes, opened without blocking on a FIFO or a
// device. A workspace file (root is the workspace) is confined to root: a
// symlink leading outside is not followed. The user's own files (root "")
// may be symlinks anywhere, as dotfile managers make them.
func readLimited(root, path string, limit int64) ([]byte, error) {
	if root == "" {
		return safefs.ReadFile(path, limit)
	}
	return safefs.ReadFileIn(root, path, limit)
}

// readError describes a file that could not be read: why it was refused,
// or the I/O error.
func readError(path, what string, limit int64, err error) *Error {
	if why := safefs.Refusal(err, limit, "the workspace"); why != "" {
		return &Error{File: path, Msg: fmt.Sprintf("cannot read %s: %s", what, why)}
	}
	return &Error{File: path, Msg: "cannot read " + what, Err: err}
}

// readSettingsFile reads and parses one settings file without validating
// it against the schema, so that an untrusted workspace file can be
// inspected without being accepted. root is the workspace for a workspace
// file, "" for the user's own (see readLimited). A missing file yields
// nil, nil.
func readSettingsFile(root, path string) (map[string]any, error) {
	data, err := readLimited(root, path, maxSettingsBytes)
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, readError(path, "settings file", maxSettingsBytes, err)
	}
	return parseSettings(path, data)
}

// parseSettings decodes a settings file. Comments are allowed, as in
// gemini-cli's settings.json; they are blanked out in place so that the
// line and column of a syntax error still point into the user's file.
// Numbers stay json.Number so that 1.5 is not silently truncated to 1.
func parseSettings(path string, orig []byte) (map[string]any, error) {
	data := stripComments(orig)
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil // an empty file is an empty object
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		off := int64(len(data)) // io.ErrUnexpectedEOF: the input ended early
		switch {
		case errors.As(err, &syn):
			off = syn.Offset - 1 // Offset is just past the offending byte
		case errors.Is(err, io.ErrUnexpectedEOF):
		default:
			return nil, &Error{File: path, Msg: "invalid JSON", Err: err}
		}
		line, col := position(orig, off)
		return nil, &Error{File: path, Line: line, Column: col, Msg: "invalid JSON", Err: err}
	}
	rest := data[dec.InputOffset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		line, col := position(orig, dec.InputOffset()+int64(len(rest)-len(trimmed)))
		return nil, &Error{File: path, Line: line, Column: col, Msg: "invalid JSON: unexpected data after the top-level object"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{File: path, Msg: "settings must be a JSON object, got " + jsonType(v)}
	}
	return obj, nil
}

// missing reports whether err means that a file is absent: it does not
// exist, or a directory on its path is a file (a workspace with a file
// named .agentry has no settings, rather than unreadable ones).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// position converts a byte offset into a 1-based line and column (in
// characters). It is given the original bytes, comments included, so that
// characters inside a comment count once.
func position(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[start:]) + 1
}

// stripComments replaces // and /* */ comments outside strings with spaces,
// keeping newlines, so that offsets are unchanged.
func stripComments(data []byte) []byte {
	out := bytes.Clone(data)
	const (
		code = iota
		str
		line
		block
	)
	state := code
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch state {
		case code:
			switch {
			case c == '"':
				state = str
			case c == '/' && i+1 < len(out) && out[i+1] == '/':
				state = line
				out[i], out[i+1] = ' ', ' '
				i++
			case c == '/' && i+1 < len(out) && out[i+1] == '*':
				state = block
				out[i], out[i+1] = ' ', ' '
				i++
			}
		case str:
			switch c {
			case '\\':
				i++ // skip the escaped character
			case '"':
				state = code
			}
		case line:
			if c == '\n' {
				state = code
			} else {
				out[i] = ' '
			}
		case block:
			if c == '*' && i+1 < len(out) && out[i+1] == '/' {
				out[i], out[i+1] = ' ', ' '
				i++
				state = code
			} else if c != '\n' {
				out[i] = ' '
			}
		}
	}
	return out
}

// validateFile checks a parsed settings file against the schema and returns
// its values by dotted key, converted to Go types.
func (s *schema) validateFile(file string, raw map[string]any) (map[string]any, error) {
	out := map[string]any{}
	return out, s.walk(file, s.root, raw, out)
}

func (s *schema) walk(file string, parent *node, obj map[string]any, out map[string]any) error {
	for _, name := range sortedKeys(obj) {
		val := obj[name]
		if _, isString := val.(string); parent == s.root && name == "$schema" && isString {
			continue // lets editors validate the file; not a setting
		}
		n, ok := parent.fields[name]
		if !ok {
			key := name
			if parent.key != "" {
				key = parent.key + "." + name
			}
			msg := fmt.Sprintf("unknown key %q", key)
			if sug := s.suggest(parent, name); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			return &Error{File: file, Key: key, Msg: msg}
		}
		if n.kind == kindObject {
			m, ok := val.(map[string]any)
			if !ok {
				return &Error{File: file, Key: n.key, Expected: n.kind.expected(), Got: jsonType(val)}
			}
			if err := s.walk(file, n, m, out); err != nil {
				return err
			}
			continue
		}
		v, err := fromJSON(file, n, val)
		if err != nil {
			return err
		}
		if exp := checkValue(n.key, v); exp != "" {
			got, _ := json.Marshal(val)
			return &Error{File: file, Key: n.key, Expected: exp, Got: string(got)}
		}
		out[n.key] = v
	}
	return nil
}

// fromJSON converts a decoded JSON value to the Go type of n.
func fromJSON(file string, n *node, val any) (any, error) {
	mismatch := func() error {
		exp := n.kind.expected()
		if stringOrList(n.key) {
			exp = "a string or a list of strings"
		}
		return &Error{File: file, Key: n.key, Expected: exp, Got: jsonType(val)}
	}
	switch n.kind {
	case kindString:
		if s, ok := val.(string); ok {
			return s, nil
		}
	case kindBool:
		if b, ok := val.(bool); ok {
			return b, nil
		}
	case kindInt:
		if num, ok := val.(json.Number); ok {
			i, err := strconv.Atoi(num.String())
			if err != nil {
				return nil, &Error{File: file, Key: n.key, Expected: n.kind.expected(), Got: "number " + num.String()}
			}
			return i, nil
		}
	case kindFloat:
		if num, ok := val.(json.Number); ok {
			f, err := num.Float64()
			if err != nil {
				return nil, &Error{File: file, Key: n.key, Expected: n.kind.expected(), Got: "number " + num.String()}
			}
			return f, nil
		}
	case kindJSON:
		raw, err := json.Marshal(val)
		if err != nil {
			return nil, mismatch()
		}
		v, err := decodeJSON(n, raw)
		if err != nil {
			return nil, &Error{File: file, Key: n.key, Msg: fmt.Sprintf("%s: %v", n.key, jsonProblem(err))}
		}
		return v, nil
	case kindStrings:
		if s, ok := val.(string); ok && stringOrList(n.key) {
			return []string{s}, nil
		}
		list, ok := val.([]any)
		if !ok {
			return nil, mismatch()
		}
		out := make([]string, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, &Error{File: file, Key: fmt.Sprintf("%s[%d]", n.key, i), Expected: "a string", Got: jsonType(item)}
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, mismatch()
}

// jsonProblem rewords encoding/json's errors for a settings file: the Go
// type names mean nothing to its author.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the value"
		}
		return fmt.Sprintf("%s must not be a JSON %s", field, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// stringOrList reports whether a list key also accepts a single string, as
// gemini-cli's context.fileName does.
func stringOrList(key string) bool { return key == "context.fileName" }
