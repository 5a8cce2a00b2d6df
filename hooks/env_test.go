package hooks

import (
	"strings"
	"testing"
)

// TestHookEnvironmentWithholdsSecrets: a hook sees neither agentry's own
// token nor the model's API keys, but does see what its own env sets.
func TestHookEnvironmentWithholdsSecrets(t *testing.T) {
	t.Setenv("AGENTRY_A2A_TOKEN", "a2a-secret")
	t.Setenv("GEMINI_API_KEY", "gemini-secret")
	t.Setenv("PLAIN_FOR_TEST", "kept")
	f := newFixture(t)
	h := f.hook("env", `env > "$D/env.txt"`)
	h.Env["HOOK_TOKEN"] = "configured"
	res := run(t, f.runner(on(BeforeTool, def("", h))), BeforeTool, "x", nil)
	noFailures(t, res)
	out := f.read("env.txt")
	for _, secret := range []string{"a2a-secret", "gemini-secret", "AGENTRY_A2A_TOKEN", "GEMINI_API_KEY"} {
		if strings.Contains(out, secret) {
			t.Errorf("the hook saw %s:\n%s", secret, out)
		}
	}
	for _, want := range []string{"PLAIN_FOR_TEST=kept", "HOOK_TOKEN=configured", "GEMINI_PROJECT_DIR=" + f.dir} {
		if !strings.Contains(out, want) {
			t.Errorf("the hook's environment lacks %s:\n%s", want, out)
		}
	}
}
