package tools

import (
	"strings"
	"testing"
)

// TestShellEnvironmentWithholdsSecrets: a command the model chose sees
// neither agentry's own token nor the model's API keys.
func TestShellEnvironmentWithholdsSecrets(t *testing.T) {
	t.Setenv("AGENTRY_A2A_TOKEN", "a2a-secret")
	t.Setenv("GEMINI_API_KEY", "gemini-secret")
	t.Setenv("OPENAI_API_KEY", "openai-secret")
	t.Setenv("PLAIN_FOR_TEST", "kept")
	s, _ := newTestSet(t, Config{})
	for _, background := range []bool{false, true} {
		res, err := run(t, s, "run_shell_command", map[string]any{"command": "env", "is_background": background, "delay_ms": 60000})
		if err != nil {
			t.Fatal(err)
		}
		out := res.LLMContent
		for _, secret := range []string{"a2a-secret", "gemini-secret", "openai-secret", "AGENTRY_A2A_TOKEN", "GEMINI_API_KEY"} {
			if strings.Contains(out, secret) {
				t.Errorf("background %v: the command saw %s:\n%s", background, secret, out)
			}
		}
		if !strings.Contains(out, "PLAIN_FOR_TEST=kept") {
			t.Errorf("background %v: an ordinary variable is missing:\n%s", background, out)
		}
	}
}
