package loopguard

import (
	"testing"

	"github.com/agentry-dev/agentry/loopdetect"
)

// TestLoopCheckModels: the LLM check asks gemini-cli's models for a
// Gemini chat model and the chat model itself (no double-check) otherwise.
func TestLoopCheckModels(t *testing.T) {
	for _, c := range []struct {
		chat, alias, want string
		ok                bool
	}{
		{"gemini-2.5-flash", loopdetect.ModelLoopDetection, "gemini-3-flash-preview", true},
		{"gemini-2.5-flash", loopdetect.ModelDoubleCheck, "gemini-3-pro-preview", true},
		{"openai:qwen3", loopdetect.ModelLoopDetection, "openai:qwen3", true},
		{"openai:qwen3", loopdetect.ModelDoubleCheck, "", false},
	} {
		g := &guard{model: func() string { return c.chat }}
		got, ok := g.checkModel(c.alias)
		if got != c.want || ok != c.ok {
			t.Errorf("checkModel(%s) for %s = %q, %v; want %q, %v", c.alias, c.chat, got, ok, c.want, c.ok)
		}
	}
}
