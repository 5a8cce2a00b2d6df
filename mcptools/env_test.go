//go:build unix

package mcptools

import (
	"slices"
	"strings"
	"testing"
)

// TestServerEnvironmentWithholdsSecrets: a stdio server sees neither
// agentry's own token nor the model's API keys, but gets what its
// configured env passes, references to withheld variables included.
func TestServerEnvironmentWithholdsSecrets(t *testing.T) {
	t.Setenv("AGENTRY_A2A_TOKEN", "a2a-secret")
	t.Setenv("GEMINI_API_KEY", "gemini-secret")
	t.Setenv("GITHUB_TOKEN", "github-secret")
	t.Setenv("PLAIN_FOR_TEST", "kept")
	m := newManager(t, map[string]ServerConfig{"s": {Command: serverBin, Env: map[string]string{
		"SERVER_TOKEN": "${GITHUB_TOKEN}", "LITERAL_KEY": "configured",
	}}})
	out := mustRun(t, get(t, listTools(t, m), "environ"), nil).LLMContent
	vars := strings.Split(out, "\n")
	for _, secret := range []string{"AGENTRY_A2A_TOKEN=a2a-secret", "GEMINI_API_KEY=gemini-secret", "GITHUB_TOKEN=github-secret"} {
		if slices.Contains(vars, secret) {
			t.Errorf("the server saw %s:\n%s", secret, out)
		}
	}
	for _, want := range []string{"PLAIN_FOR_TEST=kept", "SERVER_TOKEN=github-secret", "LITERAL_KEY=configured"} {
		if !slices.Contains(vars, want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, out)
		}
	}
}
