package compression

import (
	"errors"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
)

// SplitPoint is gemini-cli's findCompressSplitPoint: the index of the oldest
// content to keep when the older fraction of contents (by JSON length) is
// summarised. It may return len(contents), meaning everything can be
// summarised. Only a user turn without function responses can start the
// kept part, so a function call is never separated from its response.
//
// Each content's size is JSON.stringify(content).length, computed from
// genai's Go JSON encoding (masking.JSONLength), which cannot reproduce the
// JavaScript length where a Go value omits what a JavaScript object spells
// out (zero values, such as an empty `args` map). fraction must lie strictly between 0 and 1; NaN,
// which gemini-cli lets through, is rejected too. A nil content counts as
// JSON null and is never a split point.
func SplitPoint(contents []*genai.Content, fraction float64) (int, error) {
	if !(fraction > 0 && fraction < 1) {
		return 0, errors.New("compression: fraction must be between 0 and 1")
	}
	sizes := make([]int, len(contents))
	total := 0
	for i, c := range contents {
		n := masking.JSONLength(c)
		sizes[i] = n
		total += n
	}
	target := float64(total) * fraction

	last := 0 // compressing nothing is always valid
	cumulative := 0
	for i, c := range contents {
		if c != nil && c.Role == genai.RoleUser && !hasFunctionResponse(c) {
			if float64(cumulative) >= target {
				return i, nil
			}
			last = i
		}
		cumulative += sizes[i]
	}

	// No split point at or past the target: everything may be summarised
	// only if the history does not end waiting on a function call.
	if n := len(contents); n > 0 {
		if c := contents[n-1]; c != nil && c.Role == genai.RoleModel && !hasFunctionCall(c) {
			return n, nil
		}
	}
	return last, nil
}

// hasFunctionResponse reports whether c carries a function response.
func hasFunctionResponse(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// hasFunctionCall reports whether c carries a function call.
func hasFunctionCall(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}
