package config_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/config"
)

// TestInvalidSettingsFile checks the messages for bad settings files: each
// names the file, the dotted key and what was expected.
func TestInvalidSettingsFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    string // message after "<file>"
		key     string // Error.Key, when there is one
	}{
		{"unknown key with suggestion", `{"model": {"nmae": "x"}}`, `: unknown key "model.nmae" (did you mean "model.name"?)`, "model.nmae"},
		{"unknown section with suggestion", `{"modle": {}}`, `: unknown key "modle" (did you mean "model"?)`, "modle"},
		{"case mismatch", `{"model": {"maxsessionturns": 3}}`, `: unknown key "model.maxsessionturns" (did you mean "model.maxSessionTurns"?)`, "model.maxsessionturns"},
		{"key at the wrong level", `{"maxSessionTurns": 3}`, `: unknown key "maxSessionTurns" (did you mean "model.maxSessionTurns"?)`, "maxSessionTurns"},
		{"unknown key without suggestion", `{"tools": {"zzzzzz": true}}`, `: unknown key "tools.zzzzzz"`, "tools.zzzzzz"},
		{"nested $schema", `{"model": {"$schema": "x"}}`, `: unknown key "model.$schema"`, "model.$schema"},
		{"derived field", `{"Workspace": "/"}`, `: unknown key "Workspace"`, "Workspace"},
		{"string for integer", `{"model": {"maxSessionTurns": "10"}}`, `: "model.maxSessionTurns" must be an integer, got string`, "model.maxSessionTurns"},
		{"fraction for integer", `{"tools": {"shell": {"timeoutSeconds": 1.5}}}`, `: "tools.shell.timeoutSeconds" must be an integer, got number 1.5`, "tools.shell.timeoutSeconds"},
		{"number for string", `{"model": {"name": 3}}`, `: "model.name" must be a string, got number`, "model.name"},
		{"null for string", `{"model": {"name": null}}`, `: "model.name" must be a string, got null`, "model.name"},
		{"string for list", `{"tools": {"exclude": "a,b"}}`, `: "tools.exclude" must be a list of strings, got string`, "tools.exclude"},
		{"string for policy paths", `{"policyPaths": "/etc/p"}`, `: "policyPaths" must be a list of strings, got string`, "policyPaths"},
		{"number in admin policy paths", `{"adminPolicyPaths": ["/a", 1]}`, `: "adminPolicyPaths[1]" must be a string, got number`, "adminPolicyPaths[1]"},
		{"string for core tools", `{"tools": {"core": "read_file"}}`, `: "tools.core" must be a list of strings, got string`, "tools.core"},
		{"object for confirmation", `{"tools": {"confirmationRequired": {}}}`, `: "tools.confirmationRequired" must be a list of strings, got object`, "tools.confirmationRequired"},
		{"string for mcp allowed", `{"mcp": {"allowed": "gh"}}`, `: "mcp.allowed" must be a list of strings, got string`, "mcp.allowed"},
		{"bool in mcp excluded", `{"mcp": {"excluded": [true]}}`, `: "mcp.excluded[0]" must be a string, got boolean`, "mcp.excluded[0]"},
		{"string for disableAlwaysAllow", `{"security": {"disableAlwaysAllow": "yes"}}`, `: "security.disableAlwaysAllow" must be a boolean, got string`, "security.disableAlwaysAllow"},
		{"number in list", `{"tools": {"allowed": ["a", 2]}}`, `: "tools.allowed[1]" must be a string, got number`, "tools.allowed[1]"},
		{"string for section", `{"model": "gemini-2.5-pro"}`, `: "model" must be an object, got string`, "model"},
		{"empty model", `{"model": {"name": ""}}`, `: "model.name" must be a non-empty string, got ""`, "model.name"},
		{"bad approval mode", `{"general": {"defaultApprovalMode": "bogus"}}`, `: "general.defaultApprovalMode" must be one of plan, default, auto_edit, yolo, got "bogus"`, "general.defaultApprovalMode"},
		{"bad output format", `{"output": {"format": "xml"}}`, `: "output.format" must be one of text, json, stream-json, events, got "xml"`, "output.format"},
		{"turns below -1", `{"model": {"maxSessionTurns": -2}}`, `: "model.maxSessionTurns" must be an integer >= -1 (-1 means unlimited), got -2`, "model.maxSessionTurns"},
		{"negative timeout", `{"tools": {"shell": {"timeoutSeconds": -1}}}`, `: "tools.shell.timeoutSeconds" must be an integer >= 0, got -1`, "tools.shell.timeoutSeconds"},
		{"negative items", `{"context": {"maxDirectoryItems": -1}}`, `: "context.maxDirectoryItems" must be an integer >= 0, got -1`, "context.maxDirectoryItems"},
		{"live idle of 0", `{"a2a": {"live": {"idleMinutes": 0}}}`, `: "a2a.live.idleMinutes" must be an integer >= 1 (minutes a task on a live stream may wait for an answer before it is cancelled; default 10): a task must not wait for ever, got 0`, "a2a.live.idleMinutes"},
		{"live idle never", `{"a2a": {"live": {"idleMinutes": -1}}}`, `: "a2a.live.idleMinutes" must be an integer >= 1 (minutes a task on a live stream may wait for an answer before it is cancelled; default 10): a task must not wait for ever, got -1`, "a2a.live.idleMinutes"},
		{"relative trusted folder", `{"security": {"trustedFolders": ["src"]}}`, `: "security.trustedFolders" must be a list of absolute paths (or paths starting with ~/), got ["src"]`, "security.trustedFolders"},
		{"trailing comma", "{\n  \"model\": {\n    \"name\": \"x\",\n  }\n}", `:4:3: invalid JSON: invalid character '}' looking for beginning of object key string`, ""},
		{"truncated", `{"model": `, `:1:11: invalid JSON: unexpected EOF`, ""},
		{"position counts characters", `{"model": {"name": "é"}} x`, `:1:26: invalid JSON: unexpected data after the top-level object`, ""},
		{"position after a comment", "/* é */ {\n// x\n \"a\" 1}", `:3:6: invalid JSON: invalid character '1' after object key`, ""},
		{"comment on the error line", `/* é */ {"a" 1}`, `:1:14: invalid JSON: invalid character '1' after object key`, ""},
		{"not an object", `["model"]`, `: settings must be a JSON object, got array`, ""},
	}
	for _, tt := range tests {
		for _, where := range []string{"user", "workspace"} {
			if where == "workspace" && strings.HasPrefix(tt.key, "security") {
				continue // workspace files may not set security at all (see TestTrust)
			}
			t.Run(where+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				file := f.userSettings()
				opts := f.options(t, nil)
				if where == "workspace" {
					file = f.wsSettings()
					opts.TrustWorkspace = true
				}
				write(t, file, tt.content)
				_, err := config.Load(opts)
				if !errors.Is(err, config.ErrInvalid) {
					t.Fatalf("Load error = %v, want ErrInvalid", err)
				}
				if got, want := err.Error(), file+tt.want; got != want {
					t.Errorf("message:\n got %s\nwant %s", got, want)
				}
				var ce *config.Error
				if !errors.As(err, &ce) || ce.File != file || ce.Key != tt.key {
					t.Errorf("error = %#v, want File %s Key %q", ce, file, tt.key)
				}
			})
		}
	}
}

// TestValidSettingsFile checks what a settings file may contain beyond
// plain JSON: comments and nothing at all.
func TestValidSettingsFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, model string
	}{
		{"empty", "", config.DefaultModel},
		{"whitespace", " \n\t", config.DefaultModel},
		{"empty object", "{}", config.DefaultModel},
		{"comments", "// user settings\n{\n  /* the model */ \"model\": {\"name\": \"a//b /* c */\"} // trailing\n}\n", "a//b /* c */"},
		{"JSON schema reference", `{"$schema": "https://example.com/agentry-settings.json", "model": {"name": "m"}}`, "m"},
		{"escaped quote", `{"model": {"name": "a\"//b"}}`, `a"//b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			write(t, f.userSettings(), tt.content)
			s, err := config.Load(f.options(t, nil))
			if err != nil {
				t.Fatal(err)
			}
			if s.Model.Name != tt.model {
				t.Errorf("model = %q, want %q", s.Model.Name, tt.model)
			}
		})
	}
}

// TestUnreadableSettingsFile checks that a settings file that exists but
// cannot be read is an error, unlike a missing one.
func TestUnreadableSettingsFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := os.MkdirAll(f.userSettings(), 0o755); err != nil { // a directory cannot be read as a file
		t.Fatal(err)
	}
	_, err := config.Load(f.options(t, nil))
	if !errors.Is(err, config.ErrInvalid) || !strings.HasPrefix(err.Error(), f.userSettings()+": cannot read settings file: ") {
		t.Fatalf("Load error = %v", err)
	}
}

// TestInvalidEnv checks the messages for bad AGENTRY_* variables: each
// names the variable, its value and the key.
func TestInvalidEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, variable, value, want string
	}{
		{"integer", "AGENTRY_MODEL_MAXSESSIONTURNS", "abc", `AGENTRY_MODEL_MAXSESSIONTURNS="abc": model.maxSessionTurns must be an integer`},
		{"range", "AGENTRY_TOOLS_SHELL_TIMEOUTSECONDS", "-5", `AGENTRY_TOOLS_SHELL_TIMEOUTSECONDS="-5": tools.shell.timeoutSeconds must be an integer >= 0`},
		{"approval alias", "AGENTRY_APPROVAL_MODE", "bogus", `AGENTRY_APPROVAL_MODE="bogus": general.defaultApprovalMode must be one of plan, default, auto_edit, yolo`},
		{"approval", "AGENTRY_GENERAL_DEFAULTAPPROVALMODE", "YOLO", `AGENTRY_GENERAL_DEFAULTAPPROVALMODE="YOLO": general.defaultApprovalMode must be one of plan, default, auto_edit, yolo`},
		{"format", "AGENTRY_OUTPUT_FORMAT", "xml", `AGENTRY_OUTPUT_FORMAT="xml": output.format must be one of text, json, stream-json, events`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			_, err := config.Load(f.options(t, env{tt.variable: tt.value}))
			if !errors.Is(err, config.ErrInvalid) || err.Error() != tt.want {
				t.Fatalf("Load error = %v\nwant %s", err, tt.want)
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Env != tt.variable || ce.Got != tt.value {
				t.Errorf("error = %#v", ce)
			}
		})
	}
}

// TestInvalidFlag checks bad flag values (ErrInvalid) and bad flag wiring
// (a programming error, not ErrInvalid).
func TestInvalidFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		keys    map[string]string
		noFlags bool
		want    string
		invalid bool
	}{
		{
			name: "approval", args: []string{"--approval-mode=bogus"}, invalid: true,
			want: `--approval-mode="bogus": general.defaultApprovalMode must be one of plan, default, auto_edit, yolo`,
		},
		{
			name: "turns", args: []string{"--max-session-turns=-3"}, invalid: true,
			want: `--max-session-turns="-3": model.maxSessionTurns must be an integer >= -1 (-1 means unlimited)`,
		},
		{
			name: "unknown key", keys: map[string]string{"model": "model.nmae"},
			want: `config: flag --model is mapped to unknown settings key "model.nmae"`,
		},
		{
			name: "section key", keys: map[string]string{"model": "model"},
			want: `config: flag --model is mapped to unknown settings key "model"`,
		},
		{
			name: "security key", keys: map[string]string{"allowed-tools": "security.trustedFolders"},
			want: `config: flag --allowed-tools may not set "security.trustedFolders": trust is decided by the user settings file`,
		},
		{
			name: "undefined flag", keys: map[string]string{"nope": "model.name"},
			want: `config: flag --nope is not defined`,
		},
		{
			name: "no flag set", noFlags: true,
			want: `config: FlagKeys given without a flag set`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			opts := f.options(t, nil, tt.args...)
			if tt.keys != nil {
				opts.FlagKeys = tt.keys
			}
			if tt.noFlags {
				opts.Flags = nil
			}
			_, err := config.Load(opts)
			if err == nil || err.Error() != tt.want || errors.Is(err, config.ErrInvalid) != tt.invalid {
				t.Fatalf("Load error = %v (invalid %v)\nwant %s (invalid %v)", err, errors.Is(err, config.ErrInvalid), tt.want, tt.invalid)
			}
		})
	}

	t.Run("nil flags without keys", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		if _, err := config.Load(config.LoadOptions{Workspace: f.ws, UserHome: f.userHome, LookupEnv: env{}.lookup}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("string array flag", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.StringArray("exclude", nil, "")
		if err := fs.Parse([]string{"--exclude=a,b", "--exclude=c"}); err != nil {
			t.Fatal(err)
		}
		s, err := config.Load(config.LoadOptions{
			Workspace: f.ws, UserHome: f.userHome, LookupEnv: env{}.lookup,
			Flags: fs, FlagKeys: map[string]string{"exclude": "tools.exclude"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.Tools.Exclude, "|"); got != "a,b|c" {
			t.Errorf("exclude = %q", s.Tools.Exclude)
		}
	})
}

// TestErrorFormat checks the formatting of an *Error built by hand.
func TestErrorFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *config.Error
		want string
	}{
		{&config.Error{Key: "k", Msg: "bad"}, "bad"},
		{&config.Error{File: "/f", Line: 2, Column: 3, Msg: "invalid JSON", Err: errors.New("x")}, "/f:2:3: invalid JSON: x"},
		{&config.Error{Flag: "model", Got: "", Key: "model.name", Expected: "a non-empty string"}, `--model="": model.name must be a non-empty string`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, config.ErrInvalid) || errors.Is(tt.err, config.ErrUntrustedWorkspace) {
			t.Errorf("%v: wrong sentinel", tt.err)
		}
	}
}

// TestLiveIdleMinutes: a2a.live.idleMinutes is 10 unless a file sets it.
func TestLiveIdleMinutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := config.Load(f.options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.A2A.Live.IdleMinutes != 10 {
		t.Fatalf("default %d, want 10", s.A2A.Live.IdleMinutes)
	}
	write(t, f.userSettings(), `{"a2a": {"live": {"idleMinutes": 3}}}`)
	if s, err = config.Load(f.options(t, nil)); err != nil || s.A2A.Live.IdleMinutes != 3 {
		t.Fatalf("set to 3: %d %v", s.A2A.Live.IdleMinutes, err)
	}
}
