// Package ansi removes terminal escape sequences from text agentry passes
// on: command output shown to the model, model output shown to the user.
package ansi

import (
	"regexp"
	"strings"
	"sync"
)

// escape matches terminal control sequences: CSI, OSC and two-byte
// escapes. It is compiled on first use: most text holds no escape.
var escape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)
})

// Strip removes terminal control sequences from s.
func Strip(s string) string {
	if !strings.ContainsRune(s, 0x1b) {
		return s
	}
	return escape().ReplaceAllString(s, "")
}

// DropControls removes what a terminal would take as a control from s: the
// C0 controls but "\n" (a tab becomes four spaces), DEL and the C1 controls
// (U+0080–U+009F: U+009B is an 8-bit CSI to some terminals). Run it after
// Strip, which removes whole sequences.
func DropControls(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		// 0xC2 leads the UTF-8 encoding of every C1 control.
		if c := s[i]; c < 0x20 && c != '\n' || c == 0x7f || c == 0xc2 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
