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
