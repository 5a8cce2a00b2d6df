package runtime

import (
	"strings"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/plugins/loopguard"
)

// LoopConfig turns loop detection on (Config.LoopDetection; nil is off).
type LoopConfig = loopguard.Config

// loopDetectedMessage is gemini-cli's text for a stopped loop, in the
// error event and in stream-json's warning.
const loopDetectedMessage = "Loop detected, stopping execution"

// promptText is the text of a prompt's content, the LLM check's
// <original_user_request>.
func promptText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
