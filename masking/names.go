package masking

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// ToolOutputsDir is the directory under the project's temporary directory
// that holds spilled tool outputs, gemini-cli's TOOL_OUTPUTS_DIR.
const ToolOutputsDir = "tool-outputs"

// Name parts are capped so that "<tool>_<call id>_masked.txt" stays well
// under the 255 bytes file systems allow; a capped part ends in a hash of
// the whole value, so distinct long values keep distinct names.
const (
	maxToolPart = 64
	maxIDPart   = 128
	maxDirPart  = 128
	hashLen     = 8
)

// sanitize is gemini-cli's sanitizeFilenamePart: every character other
// than an ASCII letter, digit, '_' or '-' becomes '_'. JavaScript replaces
// UTF-16 code units, so a character outside the Basic Multilingual Plane
// becomes "__"; the result can hold no path separator, dot or NUL.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
				b.WriteByte(c)
			} else {
				b.WriteByte('_')
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString("__"[:units(r)])
		i += size
	}
	return b.String()
}

// namePart sanitises s for use in a file name: gemini-cli's sanitising,
// lower-cased when lower is set, fallback when empty, and capped at max
// bytes with a hash of s.
func namePart(s string, lower bool, max int, fallback string) string {
	if s == "" {
		s = fallback
	}
	p := sanitize(s)
	if lower {
		p = strings.ToLower(p) // only ASCII is left
	}
	if len(p) > max {
		sum := sha256.Sum256([]byte(s))
		p = p[:max-hashLen-1] + "-" + hex.EncodeToString(sum[:])[:hashLen]
	}
	return p
}

// SessionDir returns the directory that holds the spilled outputs of
// session sessionID: <tempDir>/tool-outputs/session-<id>, the id sanitised
// as gemini-cli sanitises it (not lower-cased). Without a session id it is
// <tempDir>/tool-outputs.
func SessionDir(tempDir, sessionID string) string {
	dir := filepath.Join(tempDir, ToolOutputsDir)
	if sessionID == "" {
		return dir
	}
	return filepath.Join(dir, "session-"+namePart(sessionID, false, maxDirPart, ""))
}

// SpillFileName returns the file name of a call's truncated output,
// "<tool>_<call id>.txt", both parts sanitised and lower-cased as
// gemini-cli's saveTruncatedToolOutput does. An empty tool name is
// "unknown_tool" and an empty call id "unknown_call". The name never
// contains a path separator or dot other than the extension's. Unlike
// gemini-cli, which leaves the tool name out when the call id starts with
// it, the name is always prefixed: tool "a" with ids "a_b" and "b" would
// otherwise share a file.
func SpillFileName(tool, callID string) string {
	return namePart(tool, true, maxToolPart, "unknown_tool") + "_" + namePart(callID, true, maxIDPart, "unknown_call") + ".txt"
}

// maskedFileName returns the file name of a masked response. gemini-cli
// adds a random suffix; a fixed one keeps the name deterministic (a
// second pass writes the same file) and keeps it apart from the per-call
// truncation file of the same call, whose full output it must not replace.
func maskedFileName(tool, callID string) string {
	return strings.TrimSuffix(SpillFileName(tool, callID), ".txt") + "_masked.txt"
}

// joinName joins dir and a generated file name, and checks, although the
// sanitising already guarantees it, that the result is a direct child of
// dir: a name must never reach outside the spill directory.
func joinName(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if name == "" || name == "." || name == ".." || filepath.Base(p) != name || filepath.Dir(p) != filepath.Clean(dir) {
		return "", fmt.Errorf("masking: file name %q would leave %s", name, dir)
	}
	return p, nil
}

// SpillPath returns the path of a call's truncated output in dir (see
// SpillFileName), checked to lie directly in dir.
func SpillPath(dir, tool, callID string) (string, error) {
	return joinName(dir, SpillFileName(tool, callID))
}
