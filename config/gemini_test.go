package config_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
)

func (f fixture) geminiSettings() string {
	return filepath.Join(f.userHome, ".gemini", "settings.json")
}
func (f fixture) wsGeminiSettings() string {
	return filepath.Join(f.ws, ".gemini", "settings.json")
}

// TestGeminiUserSettings checks that ~/.gemini/settings.json is a layer
// under ~/.agentry/settings.json: shared keys apply, gemini-cli's own keys
// and values agentry cannot use give one warning and never an error.
func TestGeminiUserSettings(t *testing.T) {
	t.Parallel()
	// A gemini-cli user's file, as gemini-cli 0.61.0 writes and reads it.
	const geminiFile = `{
	  // gemini-cli's own keys
	  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": true}},
	  "general": {"previewFeatures": true, "vimMode": true, "maxAttempts": 4},
	  "ui": {"theme": "GitHub"},
	  "model": {"name": "gemini-2.5-pro", "maxSessionTurns": 7},
	  "context": {"fileName": "CONTEXT.md"},
	  "tools": {"allowed": ["read_file"], "exclude": ["glob"], "shell": {"showColor": true}},
	  "telemetry": {"enabled": false, "target": "local"},
	  "mcpServers": {
	    "good": {"command": "srv", "args": ["-x"]},
	    "oauth": {"httpUrl": "https://example.com/mcp", "oauth": {"enabled": true, "scopes": ["read"]}},
	    "tcp": {"tcp": "127.0.0.1:9"},
	    "gcp": {"url": "https://x.run.app/mcp", "authProviderType": "google_credentials"}
	  }
	}`
	tests := []struct {
		name     string
		gemini   string
		user     string
		env      env
		check    func(*testing.T, *config.Settings)
		warnings []string
	}{
		{
			name:   "shared keys and one warning",
			gemini: geminiFile,
			check: func(t *testing.T, s *config.Settings) {
				if s.Model.Name != "gemini-2.5-pro" || s.Model.MaxSessionTurns != 7 || s.General.MaxAttempts != 4 {
					t.Errorf("model = %+v, general = %+v", s.Model, s.General)
				}
				if !slices.Equal(s.Context.FileName, []string{"CONTEXT.md"}) {
					t.Errorf("context.fileName = %q, want the string as a one-name list", s.Context.FileName)
				}
				if !slices.Equal(s.Tools.Allowed, []string{"read_file"}) || !slices.Equal(s.Tools.Exclude, []string{"glob"}) {
					t.Errorf("tools = %+v", s.Tools)
				}
				if o := s.MCPServers["oauth"].OAuth; len(s.MCPServers) != 2 || s.MCPServers["good"].Command != "srv" || o == nil || !o.Enabled || !slices.Equal(o.Scopes, []string{"read"}) {
					t.Errorf("mcpServers = %+v, want only the two agentry can run (the OAuth one with its oauth object)", s.MCPServers)
				}
			},
			warnings: []string{`{gemini}: ignoring gemini-cli settings agentry does not share: general.previewFeatures, general.vimMode, ` +
				`security.auth, security.folderTrust, telemetry.target, tools.shell.showColor, ui (agentry's own settings go in ~/.agentry/settings.json); ` +
				`ignoring values agentry cannot use: mcpServers.gcp: mcp server "gcp": authProviderType "google_credentials" is not supported by agentry (only "dynamic_discovery"); ` +
				`mcpServers.tcp: unknown field "tcp"`},
		},
		{
			name:   "agentry's user file wins",
			gemini: `{"model": {"name": "gemini-2.5-pro", "maxSessionTurns": 7}}`,
			user:   `{"model": {"name": "user-model"}}`,
			check: func(t *testing.T, s *config.Settings) {
				if s.Model.Name != "user-model" || s.Model.MaxSessionTurns != 7 {
					t.Errorf("model = %q, %d; want user-model, 7", s.Model.Name, s.Model.MaxSessionTurns)
				}
			},
		},
		{
			name:   "variables win",
			gemini: `{"model": {"name": "gemini-2.5-pro"}}`,
			env:    env{"AGENTRY_MODEL": "env-model"},
			check: func(t *testing.T, s *config.Settings) {
				if s.Model.Name != "env-model" {
					t.Errorf("model = %q, want env-model", s.Model.Name)
				}
			},
		},
		{
			name:   "wrong types are warnings",
			gemini: `{"model": {"name": 3, "maxSessionTurns": -5}, "context": {"fileName": [1]}, "general": {"defaultApprovalMode": "yolo"}, "tools": "x"}`,
			check: func(t *testing.T, s *config.Settings) {
				if s.Model.Name != config.DefaultModel || s.Model.MaxSessionTurns != -1 || s.General.DefaultApprovalMode != config.ApprovalDefault {
					t.Errorf("settings changed by invalid values: %+v %+v", s.Model, s.General)
				}
			},
			warnings: []string{`{gemini}: ignoring values agentry cannot use: "context.fileName[0]" must be a string, got number; ` +
				`"general.defaultApprovalMode": yolo is not a settings value in gemini-cli (use --yolo, or set it in ~/.agentry/settings.json); ` +
				`"model.maxSessionTurns" must be an integer >= -1 (-1 means unlimited), got -5; "model.name" must be a string, got number; ` +
				`"tools" must be an object, got string`},
		},
		{
			name:     "invalid JSON is a warning",
			gemini:   `{"model": `,
			warnings: []string{`{gemini}:1:11: invalid JSON: unexpected EOF (gemini-cli's file, ignored)`},
		},
		{
			name: "string context.fileName in agentry's file too",
			user: `{"context": {"fileName": "NOTES.md"}}`,
			check: func(t *testing.T, s *config.Settings) {
				if !slices.Equal(s.Context.FileName, []string{"NOTES.md"}) {
					t.Errorf("context.fileName = %q", s.Context.FileName)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tt.gemini != "" {
				write(t, f.geminiSettings(), tt.gemini)
			}
			if tt.user != "" {
				write(t, f.userSettings(), tt.user)
			}
			s, err := config.Load(f.options(t, tt.env))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
			var want []string
			for _, w := range tt.warnings {
				want = append(want, strings.ReplaceAll(w, "{gemini}", f.geminiSettings()))
			}
			if !slices.Equal(s.Warnings, want) {
				t.Errorf("warnings =\n%q\nwant\n%q", s.Warnings, want)
			}
		})
	}
}

// TestGeminiWorkspaceSettings checks a workspace's .gemini/settings.json:
// read (shared keys) only when the workspace is trusted, under its
// .agentry/settings.json; when untrusted, ignored with a warning unless it
// asks for more permissions (exit 55, as for agentry's own file).
func TestGeminiWorkspaceSettings(t *testing.T) {
	t.Parallel()
	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.wsGeminiSettings(), `{"model": {"name": "gemini-ws", "maxSessionTurns": 3}, "security": {"auth": {}}}`)
		write(t, f.wsSettings(), `{"model": {"name": "agentry-ws"}}`)
		opts := f.options(t, nil)
		opts.TrustWorkspace = true
		s, err := config.Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.Model.Name != "agentry-ws" || s.Model.MaxSessionTurns != 3 {
			t.Errorf("model = %q, %d; want agentry-ws, 3", s.Model.Name, s.Model.MaxSessionTurns)
		}
		want := []string{f.wsGeminiSettings() + `: ignoring gemini-cli settings agentry does not share: security.auth (agentry's own settings go in ~/.agentry/settings.json)`}
		if !slices.Equal(s.Warnings, want) {
			t.Errorf("warnings = %q, want %q", s.Warnings, want)
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.wsGeminiSettings(), `{"model": {"name": "gemini-ws"}, "security": {"folderTrust": {"enabled": false}}}`)
		s, err := config.Load(f.options(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if s.Model.Name != config.DefaultModel {
			t.Errorf("model = %q from an untrusted workspace", s.Model.Name)
		}
		want := []string{f.wsGeminiSettings() + " ignored: the workspace is not trusted (trust it with --trust-workspace, AGENTRY_TRUST_WORKSPACE=true, or security.trustedFolders in " + f.userSettings() + ")"}
		if !slices.Equal(s.Warnings, want) {
			t.Errorf("warnings = %q, want %q", s.Warnings, want)
		}
	})
	t.Run("untrusted escalation", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.wsGeminiSettings(), `{"tools": {"allowed": ["run_shell_command"]}}`)
		_, err := config.Load(f.options(t, nil))
		var ue *config.UntrustedWorkspaceError
		if !errors.Is(err, config.ErrUntrustedWorkspace) || !errors.As(err, &ue) || ue.File != f.wsGeminiSettings() || !slices.Equal(ue.Keys, []string{"tools.allowed"}) {
			t.Fatalf("Load error = %v, want the untrusted workspace error for %s", err, f.wsGeminiSettings())
		}
	})
	t.Run("home workspace reads it once", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.ws = f.userHome
		write(t, f.geminiSettings(), `{"tools": {"allowed": ["read_file"]}}`)
		s, err := config.Load(f.options(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Tools.Allowed, []string{"read_file"}) || len(s.Warnings) != 0 {
			t.Errorf("allowed = %q, warnings = %q", s.Tools.Allowed, s.Warnings)
		}
	})
}

// TestGeminiTrust checks gemini-cli's ways of trusting a workspace:
// ~/.gemini/trustedFolders.json (the nearest rule wins, as in gemini-cli's
// isPathTrusted) and GEMINI_CLI_TRUST_WORKSPACE from the real environment.
func TestGeminiTrust(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		folders  func(ws string) string // trustedFolders.json
		user     func(ws string) string // ~/.agentry/settings.json
		env      env
		trusted  bool
		source   string
		warnings []string
	}{
		{name: "no rules"},
		{
			name:    "TRUST_FOLDER",
			folders: func(ws string) string { return `{"` + ws + `": "TRUST_FOLDER"}` },
			trusted: true, source: config.TrustFromTrustedFolders,
		},
		{
			name:    "TRUST_FOLDER of a parent",
			folders: func(ws string) string { return `{"` + filepath.Dir(ws) + `": "TRUST_FOLDER"}` },
			trusted: true, source: config.TrustFromTrustedFolders,
		},
		{
			name: "TRUST_PARENT trusts the folder's parent",
			folders: func(ws string) string {
				return `{"` + filepath.Join(filepath.Dir(ws), "sibling") + `": "TRUST_PARENT"}`
			},
			trusted: true, source: config.TrustFromTrustedFolders,
		},
		{
			name:    "TRUST_FOLDER of a sibling",
			folders: func(ws string) string { return `{"` + ws + `-other": "TRUST_FOLDER"}` },
		},
		{
			name: "nearest DO_NOT_TRUST wins",
			folders: func(ws string) string {
				return `{"` + filepath.Dir(ws) + `": "TRUST_FOLDER", "` + ws + `": "DO_NOT_TRUST"}`
			},
		},
		{
			name: "nearest TRUST_FOLDER wins",
			folders: func(ws string) string {
				return `{"` + filepath.Dir(ws) + `": "DO_NOT_TRUST", "` + ws + `": "TRUST_FOLDER"}`
			},
			trusted: true, source: config.TrustFromTrustedFolders,
		},
		{
			name:    "DO_NOT_TRUST beats a broader security.trustedFolders",
			folders: func(ws string) string { return `{"` + ws + `": "DO_NOT_TRUST"}` },
			user:    func(ws string) string { return trustedFolders(filepath.Dir(ws)) },
		},
		{
			name:    "security.trustedFolders nearer than DO_NOT_TRUST",
			folders: func(ws string) string { return `{"` + filepath.Dir(ws) + `": "DO_NOT_TRUST"}` },
			user:    func(ws string) string { return trustedFolders(ws) },
			trusted: true, source: config.TrustFromSettings,
		},
		{
			name:    "relative rule ignored",
			folders: func(string) string { return `{"src": "TRUST_FOLDER"}` },
			warnings: []string{
				`{folders}: relative folder "src" ignored: trust rules need absolute paths`,
			},
		},
		{name: "GEMINI_CLI_TRUST_WORKSPACE=true", env: env{"GEMINI_CLI_TRUST_WORKSPACE": "true"}, trusted: true, source: config.TrustFromEnv},
		{
			name:    "GEMINI_CLI_TRUST_WORKSPACE=false distrusts",
			env:     env{"GEMINI_CLI_TRUST_WORKSPACE": "false"},
			folders: func(ws string) string { return `{"` + ws + `": "TRUST_FOLDER"}` },
		},
		{
			name:    "AGENTRY_TRUST_WORKSPACE beats it",
			env:     env{"GEMINI_CLI_TRUST_WORKSPACE": "false", "AGENTRY_TRUST_WORKSPACE": "1"},
			trusted: true, source: config.TrustFromEnv,
		},
		{
			name:     "other values are ignored",
			env:      env{"GEMINI_CLI_TRUST_WORKSPACE": "1"},
			warnings: []string{`GEMINI_CLI_TRUST_WORKSPACE="1" ignored: like gemini-cli, agentry reads only true or false`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ws, err := filepath.EvalSymlinks(f.ws)
			if err != nil {
				t.Fatal(err)
			}
			foldersFile := filepath.Join(f.userHome, ".gemini", "trustedFolders.json")
			if tt.folders != nil {
				write(t, foldersFile, tt.folders(ws))
			}
			if tt.user != nil {
				write(t, f.userSettings(), tt.user(ws))
			}
			s, err := config.Load(f.options(t, tt.env))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.Trusted != tt.trusted || s.TrustSource != tt.source {
				t.Errorf("trusted = %v (%q), want %v (%q)", s.Trusted, s.TrustSource, tt.trusted, tt.source)
			}
			var want []string
			for _, w := range tt.warnings {
				want = append(want, strings.ReplaceAll(w, "{folders}", foldersFile))
			}
			if !slices.Equal(s.Warnings, want) {
				t.Errorf("warnings = %q, want %q", s.Warnings, want)
			}
		})
	}

	t.Run("invalid trust level", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		path := filepath.Join(f.userHome, ".gemini", "trustedFolders.json")
		write(t, path, `{"/x": "TRUST_EVERYTHING"}`)
		_, err := config.Load(f.options(t, nil))
		want := path + `: invalid trust level "TRUST_EVERYTHING" for path "/x": must be TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST`
		if !errors.Is(err, config.ErrInvalid) || err.Error() != want {
			t.Fatalf("Load error = %v, want %s", err, want)
		}
	})

	t.Run("never from a .env file", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		for _, p := range []string{
			filepath.Join(f.ws, ".gemini", ".env"), filepath.Join(f.ws, ".env"),
			filepath.Join(f.userHome, ".gemini", ".env"), filepath.Join(f.userHome, ".env"),
		} {
			write(t, p, "GEMINI_CLI_TRUST_WORKSPACE=true\nAGENTRY_TRUST_WORKSPACE=true\n")
		}
		s, err := config.Load(f.options(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if s.Trusted {
			t.Errorf("trusted by a .env file (%q)", s.TrustSource)
		}
	})
}

// TestGeminiEnv checks ~/.gemini/.env and GEMINI_MODEL: the model variable
// ranks below AGENTRY_* and above every settings file, as in gemini-cli
// (--model > GEMINI_MODEL > model.name), and may come from a .env file the
// workspace allows.
func TestGeminiEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     env
		files   map[string]string // relative to the user home ("~/") or workspace
		user    string
		trusted bool
		args    []string
		model   string
		key     string
	}{
		{
			name:  "~/.gemini/.env credentials and model",
			files: map[string]string{"~/.gemini/.env": "GEMINI_API_KEY=gem\nGEMINI_MODEL=gemini-2.5-pro\n"},
			model: "gemini-2.5-pro", key: "gem",
		},
		{
			name: "~/.agentry/.env before ~/.gemini/.env before ~/.env",
			files: map[string]string{
				"~/.agentry/.env": "GEMINI_API_KEY=agentry\n",
				"~/.gemini/.env":  "GEMINI_API_KEY=gemini\nGEMINI_MODEL=from-gemini\n",
				"~/.env":          "GEMINI_API_KEY=home\nGEMINI_MODEL=from-home\n",
			},
			model: "from-gemini", key: "agentry",
		},
		{
			name:  "~/.gemini/.env read leniently, as gemini-cli's dotenv reads it",
			files: map[string]string{"~/.gemini/.env": "# keys\nthis is not an assignment\nGEMINI_API_KEY=gem\n"},
			model: config.DefaultModel, key: "gem",
		},
		{
			name: "GEMINI_MODEL over settings files", env: env{"GEMINI_MODEL": "env-model"},
			user: `{"model": {"name": "user-model"}}`, model: "env-model",
		},
		{
			name: "AGENTRY_MODEL over GEMINI_MODEL", env: env{"GEMINI_MODEL": "gemini-model", "AGENTRY_MODEL": "agentry-model"},
			model: "agentry-model",
		},
		{
			name: "--model over GEMINI_MODEL", env: env{"GEMINI_MODEL": "gemini-model"},
			args: []string{"--model=flag-model"}, model: "flag-model",
		},
		{
			name: "real environment over .env", env: env{"GEMINI_MODEL": "real"},
			files: map[string]string{"~/.gemini/.env": "GEMINI_MODEL=file\n"}, model: "real",
		},
		{
			name:  "untrusted workspace .gemini/.env not read",
			files: map[string]string{".gemini/.env": "GEMINI_API_KEY=ws\nGEMINI_MODEL=ws-model\n"},
			model: config.DefaultModel,
		},
		{
			name:    "trusted workspace .gemini/.env before .env",
			files:   map[string]string{".gemini/.env": "GEMINI_MODEL=gemini-ws\n", ".env": "GEMINI_MODEL=ws\nGEMINI_API_KEY=ws\n"},
			trusted: true, model: "gemini-ws", key: "ws",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			for rel, content := range tt.files {
				p := filepath.Join(f.ws, rel)
				if r, ok := strings.CutPrefix(rel, "~/"); ok {
					p = filepath.Join(f.userHome, r)
				}
				write(t, p, content)
			}
			if tt.user != "" {
				write(t, f.userSettings(), tt.user)
			}
			opts := f.options(t, tt.env, tt.args...)
			opts.TrustWorkspace = tt.trusted
			s, err := config.Load(opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.Model.Name != tt.model || s.Credentials.GeminiAPIKey != tt.key {
				t.Errorf("model %q, key %q; want %q, %q", s.Model.Name, s.Credentials.GeminiAPIKey, tt.model, tt.key)
			}
		})
	}
}

// TestUntrustedContextFiles checks the warning for project context files an
// untrusted workspace has: it names them and the ways to trust.
func TestUntrustedContextFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ws, err := filepath.EvalSymlinks(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(ws, "GEMINI.md"), "rules")
	write(t, filepath.Join(ws, "sub", "AGENTRY.md"), "more rules")
	f.ws = filepath.Join(ws, "sub")
	s, err := config.Load(f.options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"project context not read, the workspace is not trusted: " +
		filepath.Join(ws, "GEMINI.md") + ", " + filepath.Join(ws, "sub", "AGENTRY.md") +
		"; trust it with --trust-workspace, AGENTRY_TRUST_WORKSPACE=true or GEMINI_CLI_TRUST_WORKSPACE=true, security.trustedFolders in " +
		f.userSettings() + ", or a TRUST_FOLDER entry in ~/.gemini/trustedFolders.json"}
	if !slices.Equal(s.Warnings, want) {
		t.Errorf("warnings =\n%q\nwant\n%q", s.Warnings, want)
	}
	opts := f.options(t, nil)
	opts.TrustWorkspace = true
	if s, err = config.Load(opts); err != nil || len(s.Warnings) != 0 {
		t.Errorf("trusted: warnings %q, error %v", s.Warnings, err)
	}
}

// TestMisspeltVariables checks that an AGENTRY_* variable naming no
// settings key fails with the closest variable, while agentry's other
// variables and the harnesses' are accepted.
func TestMisspeltVariables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  env
		want string // "" for no error
	}{
		{name: "typo in a key", env: env{"AGENTRY_MODEL_NMAE": "x"}, want: `AGENTRY_MODEL_NMAE: unknown variable: it names no settings key (did you mean AGENTRY_MODEL_NAME?); the README's Configuration section lists the keys`},
		{name: "typo in an alias", env: env{"AGENTRY_APROVAL_MODE": "yolo"}, want: `AGENTRY_APROVAL_MODE: unknown variable: it names no settings key (did you mean AGENTRY_APPROVAL_MODE?); the README's Configuration section lists the keys`},
		{name: "key at the wrong level", env: env{"AGENTRY_MAXSESSIONTURNS": "3"}, want: `AGENTRY_MAXSESSIONTURNS: unknown variable: it names no settings key (did you mean AGENTRY_MODEL_MAXSESSIONTURNS?); the README's Configuration section lists the keys`},
		{name: "nothing close", env: env{"AGENTRY_ZZZZZZZZZZZZ": "1"}, want: `AGENTRY_ZZZZZZZZZZZZ: unknown variable: it names no settings key; the README's Configuration section lists the keys`},
		{name: "typo of the trust variable", env: env{"AGENTRY_TRUST_WORKSPAEC": "true"}, want: `AGENTRY_TRUST_WORKSPAEC: unknown variable: it names no settings key (did you mean AGENTRY_TRUST_WORKSPACE?); the README's Configuration section lists the keys`},
		{name: "first in name order", env: env{"AGENTRY_MODLE": "x", "AGENTRY_AAA": "y"}, want: `AGENTRY_AAA: unknown variable: it names no settings key; the README's Configuration section lists the keys`},
		{name: "empty is unset", env: env{"AGENTRY_MODLE": ""}},
		{name: "keys, aliases and agentry's variables", env: env{
			"AGENTRY_MODEL": "m", "AGENTRY_MODEL_NAME": "m", "AGENTRY_TOOLS_SHELL_TIMEOUTSECONDS": "5", "AGENTRY_TRUST_WORKSPACE": "false",
			"AGENTRY_A2A_TOKEN": "t", "AGENTRY_PROJECT_DIR": "/p", "AGENTRY_SESSION_ID": "s",
			"AGENTRY_TEST_POSTGRES_DSN": "x", "AGENTRY_BENCH_DIR": "x", "AGENTRY_SESSIONS_CRASH_DB": "x",
			"AGENTRYX": "x", "GEMINI_FOO": "x",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			_, err := config.Load(f.options(t, tt.env))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if !errors.Is(err, config.ErrInvalid) || err.Error() != tt.want {
				t.Fatalf("Load error = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestAPIKeys checks which key the Gemini backend gets and the warning
// when both keys are set: it names the key actually used.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     env
		key     string
		warning string
	}{
		{name: "Gemini API, both", env: env{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "o"}, key: "g",
			warning: "both GEMINI_API_KEY and GOOGLE_API_KEY are set; the Gemini API uses GEMINI_API_KEY"},
		{name: "Vertex AI, both", env: env{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "o", "GOOGLE_GENAI_USE_VERTEXAI": "true"}, key: "o",
			warning: "both GEMINI_API_KEY and GOOGLE_API_KEY are set; Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) uses GOOGLE_API_KEY"},
		{name: "Vertex AI takes only GOOGLE_API_KEY", env: env{"GEMINI_API_KEY": "g", "GOOGLE_GENAI_USE_VERTEXAI": "true"}},
		{name: "Gemini API, one", env: env{"GOOGLE_API_KEY": "o"}, key: "o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s, err := config.Load(f.options(t, tt.env))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if tt.warning != "" {
				want = []string{tt.warning}
			}
			if s.Credentials.GeminiAPIKey != tt.key || !slices.Equal(s.Warnings, want) {
				t.Errorf("key %q, warnings %q; want %q, %q", s.Credentials.GeminiAPIKey, s.Warnings, tt.key, want)
			}
		})
	}
}

// TestIncludeDirectoriesFlagAdds checks that --include-directories adds to
// the settings' list, as gemini-cli concatenates them.
func TestIncludeDirectoriesFlagAdds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := t.TempDir(), t.TempDir()
	write(t, f.userSettings(), `{"context": {"includeDirectories": ["`+a+`"]}}`)
	s, err := config.Load(f.options(t, nil, "--include-directories="+b+","+a))
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := filepath.EvalSymlinks(a)
	rb, _ := filepath.EvalSymlinks(b)
	if want := []string{ra, rb}; !slices.Equal(s.Context.IncludeDirectories, want) {
		t.Errorf("includeDirectories = %q, want %q", s.Context.IncludeDirectories, want)
	}
}
