package config_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/config"
)

// TestIDEEnabled: ide.enabled is off by default and comes, in increasing
// precedence, from gemini-cli's user file, agentry's, a trusted
// workspace's files, AGENTRY_IDE_ENABLED and --ide; an untrusted
// workspace cannot turn it on.
func TestIDEEnabled(t *testing.T) {
	t.Parallel()
	ideFlags := func(t *testing.T, args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("agentry", pflag.ContinueOnError)
		fs.Bool("ide", false, "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	tests := []struct {
		name                       string
		gemini, user, wsGemini, ws string
		trusted                    bool
		env                        env
		args                       []string
		want                       bool
	}{
		{name: "default off"},
		{name: "gemini-cli's user file", gemini: `{"ide": {"enabled": true}}`, want: true},
		{name: "agentry's user file wins", gemini: `{"ide": {"enabled": true}}`, user: `{"ide": {"enabled": false}}`},
		{name: "untrusted workspace, gemini-cli's file", wsGemini: `{"ide": {"enabled": true}}`},
		{name: "untrusted workspace, agentry's file", ws: `{"ide": {"enabled": true}}`},
		{name: "trusted workspace", wsGemini: `{"ide": {"enabled": true}}`, trusted: true, want: true},
		{name: "variable", env: env{"AGENTRY_IDE_ENABLED": "true"}, want: true},
		{name: "flag on", args: []string{"--ide"}, want: true},
		{name: "flag off beats the file", user: `{"ide": {"enabled": true}}`, args: []string{"--ide=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			for path, content := range map[string]string{f.geminiSettings(): tt.gemini, f.userSettings(): tt.user, f.wsGeminiSettings(): tt.wsGemini, f.wsSettings(): tt.ws} {
				if content != "" {
					write(t, path, content)
				}
			}
			opts := config.LoadOptions{Workspace: f.ws, UserHome: f.userHome, LookupEnv: tt.env.lookup, Environ: tt.env.environ,
				Flags: ideFlags(t, tt.args...), FlagKeys: map[string]string{"ide": "ide.enabled"}, TrustWorkspace: tt.trusted}
			s, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if s.IDE.Enabled != tt.want {
				t.Errorf("ide.enabled = %v, want %v (warnings %q)", s.IDE.Enabled, tt.want, s.Warnings)
			}
		})
	}
}

// TestSetUserSetting: the key is set, the file's other keys kept, a new
// file created 0600, bad keys and values refused, and a file with
// comments left alone.
func TestSetUserSetting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := config.Load(f.options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserSetting("ide.enabled", true); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f.userSettings())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file: %v, mode %v", err, fi.Mode())
	}
	write(t, f.userSettings(), `{"model": {"name": "pro"}, "ide": {"enabled": true}, "security": {"trustedFolders": ["/x"]}}`)
	if err := s.SetUserSetting("ide.enabled", false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.userSettings())
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": map[string]any{"name": "pro"}, "ide": map[string]any{"enabled": false}, "security": map[string]any{"trustedFolders": []any{"/x"}}}
	if g, _ := json.Marshal(got); string(g) != mustJSON(t, want) {
		t.Errorf("file = %s, want %s", g, mustJSON(t, want))
	}
	reloaded, err := config.Load(f.options(t, nil))
	if err != nil || reloaded.IDE.Enabled || reloaded.Model.Name != "pro" {
		t.Fatalf("reloaded: %v, %+v", err, reloaded)
	}
	for _, bad := range []struct {
		key   string
		value any
	}{{"ide.enabled", "yes"}, {"ide.nope", true}, {"ide", true}, {"security.trustedFolders", []string{"/"}}} {
		if err := s.SetUserSetting(bad.key, bad.value); err == nil {
			t.Errorf("SetUserSetting(%q, %v) succeeded", bad.key, bad.value)
		}
	}
	write(t, f.userSettings(), "{\n  // mine\n  \"ide\": {\"enabled\": true}\n}\n")
	var ce *config.Error
	if err := s.SetUserSetting("ide.enabled", false); !errors.As(err, &ce) || !strings.Contains(err.Error(), "comments") {
		t.Fatalf("err %v, want the comments refusal", err)
	}
	if data, _ := os.ReadFile(f.userSettings()); !strings.Contains(string(data), "// mine") {
		t.Errorf("the file was rewritten: %s", data)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
