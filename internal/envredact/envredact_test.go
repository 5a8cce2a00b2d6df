package envredact

import (
	"slices"
	"testing"
)

func TestRedacted(t *testing.T) {
	ghToken := "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789AB"
	for _, tc := range []struct {
		name, value string
		c           Config
		want        bool
	}{
		// agentry's own secrets, whatever the settings say.
		{"AGENTRY_A2A_TOKEN", "t", Default(), true},
		{"AGENTRY_A2A_TOKEN", "t", Config{Allowed: []string{"AGENTRY_A2A_TOKEN"}}, true},
		{"agentry_a2a_token", "t", Config{}, true},
		{"AGENTRY_SESSION_POSTGRESDSN", "postgres://u:p@h/db", Config{}, true},
		{"AGENTRY_MODEL", "flash", Default(), false},
		{"AGENTRY_PROJECT_DIR", "/p", Default(), false},
		// Names and values that look secret, by default.
		{"GEMINI_API_KEY", "k", Default(), true},
		{"OPENAI_API_KEY", "k", Default(), true},
		{"GITHUB_TOKEN", "x", Default(), true},
		{"DB_PASSWORD", "x", Default(), true},
		{"DATABASE_URL", "x", Default(), true},
		{"MY_VAR", ghToken, Default(), true},
		{"MY_VAR", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc", Default(), true},
		{"MY_VAR", "https://user:pass@example.com/", Default(), true},
		{"MY_VAR", "AKIAABCDEFGHIJKLMNOP", Default(), true},
		{"PLAIN", "hello", Default(), false},
		{"PATH", "/usr/bin", Default(), false},
		{"SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1", Default(), false},
		{"GIT_CONFIG_KEY_0", "core.pager", Default(), false},
		// The user's lists.
		{"GITHUB_TOKEN", ghToken, Config{Enabled: true, Allowed: []string{"github_token"}}, false},
		{"PLAIN", "hello", Config{Enabled: true, Blocked: []string{"PLAIN"}}, true},
		{"PLAIN", "hello", Config{Blocked: []string{"PLAIN"}}, true},
		{"HOME", "/h", Config{Enabled: true, Blocked: []string{"HOME"}}, true},
		// Redaction off.
		{"GEMINI_API_KEY", "k", Config{}, false},
		{"MY_VAR", ghToken, Config{}, false},
	} {
		if got := tc.c.Redacted(tc.name, tc.value); got != tc.want {
			t.Errorf("%+v.Redacted(%q, %q) = %v, want %v", tc.c, tc.name, tc.value, got, tc.want)
		}
	}
}

func TestEnviron(t *testing.T) {
	in := []string{"PATH=/bin", "GEMINI_API_KEY=k", "AGENTRY_A2A_TOKEN=t", "PLAIN=a=b", "EMPTY="}
	if got, want := Default().Environ(in), []string{"PATH=/bin", "PLAIN=a=b", "EMPTY="}; !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
}
