package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
)

// TestPrecedence checks default < user < workspace (trusted) < env < flag
// for scalar and list keys, and the union semantics of --allowed-tools.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	const (
		userModel = `{"model": {"name": "user-model", "maxSessionTurns": 10}}`
		wsModel   = `{"model": {"name": "ws-model", "maxSessionTurns": 20}}`
	)
	tests := []struct {
		name   string
		user   string
		ws     string
		env    env
		args   []string
		model  string
		turns  int
		extra  func(*testing.T, *config.Settings)
		noUser bool
	}{
		{name: "defaults", model: config.DefaultModel, turns: -1},
		{name: "user over default", user: userModel, model: "user-model", turns: 10},
		{name: "workspace over user", user: userModel, ws: wsModel, model: "ws-model", turns: 20},
		{
			name: "env over workspace", user: userModel, ws: wsModel,
			env:   env{"AGENTRY_MODEL_NAME": "env-model", "AGENTRY_MODEL_MAXSESSIONTURNS": "30"},
			model: "env-model", turns: 30,
		},
		{
			name: "flag over env", user: userModel, ws: wsModel,
			env:   env{"AGENTRY_MODEL_NAME": "env-model", "AGENTRY_MODEL_MAXSESSIONTURNS": "30"},
			args:  []string{"--model=flag-model", "--max-session-turns=40"},
			model: "flag-model", turns: 40,
		},
		{
			name: "unset flags do not override", user: userModel, ws: wsModel,
			env:   env{"AGENTRY_MODEL_NAME": "env-model"},
			args:  []string{"--output-format=json"},
			model: "env-model", turns: 20,
			extra: func(t *testing.T, s *config.Settings) {
				if s.Output.Format != "json" {
					t.Errorf("output.format = %q, want json", s.Output.Format)
				}
			},
		},
		{
			name: "alias AGENTRY_MODEL", env: env{"AGENTRY_MODEL": "alias-model"},
			model: "alias-model", turns: -1,
		},
		{
			name: "full name beats alias", env: env{"AGENTRY_MODEL": "alias-model", "AGENTRY_MODEL_NAME": "full-model"},
			model: "full-model", turns: -1,
		},
		{
			name: "empty variable is unset", user: userModel, env: env{"AGENTRY_MODEL": "", "AGENTRY_MODEL_NAME": ""},
			model: "user-model", turns: 10,
		},
		{
			name: "approval mode layers", user: `{"general": {"defaultApprovalMode": "plan"}}`,
			ws: `{"general": {"defaultApprovalMode": "yolo"}}`, env: env{"AGENTRY_APPROVAL_MODE": "auto_edit"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if s.General.DefaultApprovalMode != config.ApprovalAutoEdit {
					t.Errorf("approval = %q, want auto_edit", s.General.DefaultApprovalMode)
				}
			},
		},
		{
			name: "approval flag wins", env: env{"AGENTRY_APPROVAL_MODE": "auto_edit"}, args: []string{"--approval-mode=plan"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if s.General.DefaultApprovalMode != config.ApprovalPlan {
					t.Errorf("approval = %q, want plan", s.General.DefaultApprovalMode)
				}
			},
		},
		{
			name: "partial section keeps other defaults", user: `{"tools": {"exclude": ["web_fetch"]}}`,
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if s.Tools.Shell.TimeoutSeconds != 600 || !slices.Equal(s.Tools.Exclude, []string{"web_fetch"}) {
					t.Errorf("tools = %+v", s.Tools)
				}
				if !slices.Equal(s.Context.FileName, []string{"AGENTRY.md", "GEMINI.md"}) || s.Context.MaxDirectoryItems != 200 {
					t.Errorf("context = %+v", s.Context)
				}
			},
		},
		{
			name: "lists replace across files and env", user: `{"context": {"fileName": ["A.md", "B.md"]}, "tools": {"exclude": ["a"]}}`,
			ws: `{"context": {"fileName": ["C.md"]}}`, env: env{"AGENTRY_TOOLS_EXCLUDE": " b, c ,,"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if !slices.Equal(s.Context.FileName, []string{"C.md"}) {
					t.Errorf("fileName = %q", s.Context.FileName)
				}
				if !slices.Equal(s.Tools.Exclude, []string{"b", "c"}) {
					t.Errorf("exclude = %q", s.Tools.Exclude)
				}
			},
		},
		{
			name: "exclude flag replaces", user: `{"tools": {"exclude": ["a"]}}`, args: []string{"--exclude-tools=x,y"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if !slices.Equal(s.Tools.Exclude, []string{"x", "y"}) {
					t.Errorf("exclude = %q", s.Tools.Exclude)
				}
			},
		},
		{
			// gemini-cli's --allowed-tools replaces tools.allowed.
			name: "allowed tools flag replaces", user: `{"tools": {"allowed": ["read_file", "run_shell_command(git status)"]}}`,
			ws: `{"tools": {"allowed": ["read_file", "glob"]}}`, env: env{"AGENTRY_TOOLS_ALLOWED": "read_file,grep"},
			args:  []string{"--allowed-tools=write_file,read_file", "--allowed-tools=ls,write_file"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if want := []string{"write_file", "read_file", "ls"}; !slices.Equal(s.Tools.Allowed, want) || !s.AllowedToolsFlag {
					t.Errorf("allowed = %q (flag %v), want %q from the flag", s.Tools.Allowed, s.AllowedToolsFlag, want)
				}
			},
		},
		{
			// --policy and --allowed-mcp-server-names replace their
			// settings, as in gemini-cli (the latter also clears
			// mcp.excluded); paths become absolute.
			name: "policy flags replace", user: `{"policyPaths": ["~/p1"], "mcp": {"allowed": ["a"], "excluded": ["x"]}, "tools": {"core": ["read_file"], "confirmationRequired": ["glob"]}}`,
			args:  []string{"--policy=/abs/one.toml,rel", "--policy=~/two", "--allowed-mcp-server-names=gh"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				cwd, _ := os.Getwd()
				home := filepath.Dir(s.Home)
				if want := []string{"/abs/one.toml", filepath.Join(cwd, "rel"), filepath.Join(home, "two")}; !slices.Equal(s.PolicyPaths, want) {
					t.Errorf("policyPaths = %q, want %q", s.PolicyPaths, want)
				}
				if !slices.Equal(s.MCP.Allowed, []string{"gh"}) || len(s.MCP.Excluded) != 0 {
					t.Errorf("mcp = %+v", s.MCP)
				}
				if !slices.Equal(s.Tools.Core, []string{"read_file"}) || !slices.Equal(s.Tools.ConfirmationRequired, []string{"glob"}) {
					t.Errorf("tools = %+v", s.Tools)
				}
			},
		},
		{
			name: "mcp.excluded without the flag", user: `{"mcp": {"allowed": ["a"], "excluded": ["x"]}}`,
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if !slices.Equal(s.MCP.Allowed, []string{"a"}) || !slices.Equal(s.MCP.Excluded, []string{"x"}) {
					t.Errorf("mcp = %+v, want the settings' lists", s.MCP)
				}
			},
		},
		{
			name: "policy paths from settings", user: `{"policyPaths": ["~/p1"], "adminPolicyPaths": ["/etc/extra"]}`,
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				home := filepath.Dir(s.Home)
				if !slices.Equal(s.PolicyPaths, []string{filepath.Join(home, "p1")}) || !slices.Equal(s.AdminPolicyPaths, []string{"/etc/extra"}) {
					t.Errorf("policyPaths = %q, adminPolicyPaths = %q", s.PolicyPaths, s.AdminPolicyPaths)
				}
			},
		},
		{
			name: "allowed tools without the flag", env: env{"AGENTRY_TOOLS_ALLOWED": "read_file,grep"},
			model: config.DefaultModel, turns: -1,
			extra: func(t *testing.T, s *config.Settings) {
				if want := []string{"read_file", "grep"}; !slices.Equal(s.Tools.Allowed, want) || s.AllowedToolsFlag {
					t.Errorf("allowed = %q (flag %v), want %q from the variable", s.Tools.Allowed, s.AllowedToolsFlag, want)
				}
			},
		},
		{
			name: "every key from env", model: "m", turns: 5,
			env: env{
				"AGENTRY_MODEL_NAME": "m", "AGENTRY_MODEL_MAXSESSIONTURNS": "5",
				"AGENTRY_GENERAL_DEFAULTAPPROVALMODE": "plan", "AGENTRY_TOOLS_SHELL_TIMEOUTSECONDS": "7",
				"AGENTRY_CONTEXT_FILENAME": "X.md", "AGENTRY_CONTEXT_MAXDIRECTORYITEMS": "0",
				"AGENTRY_GEMINI_BASEURL": "http://g", "AGENTRY_OPENAI_BASEURL": "http://o",
				"AGENTRY_OUTPUT_FORMAT": "stream-json",
			},
			extra: func(t *testing.T, s *config.Settings) {
				if s.General.DefaultApprovalMode != "plan" || s.Tools.Shell.TimeoutSeconds != 7 ||
					!slices.Equal(s.Context.FileName, []string{"X.md"}) || s.Context.MaxDirectoryItems != 0 ||
					s.Gemini.BaseURL != "http://g" || s.OpenAI.BaseURL != "http://o" || s.Output.Format != "stream-json" {
					t.Errorf("settings = %+v", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tt.user != "" {
				write(t, f.userSettings(), tt.user)
			}
			if tt.ws != "" {
				write(t, f.wsSettings(), tt.ws)
			}
			opts := f.options(t, tt.env, tt.args...)
			opts.TrustWorkspace = true
			s, err := config.Load(opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.Model.Name != tt.model || s.Model.MaxSessionTurns != tt.turns {
				t.Errorf("model = %q/%d, want %q/%d", s.Model.Name, s.Model.MaxSessionTurns, tt.model, tt.turns)
			}
			if tt.extra != nil {
				tt.extra(t, s)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("warnings = %q", s.Warnings)
			}
		})
	}
}

// TestUntrustedWorkspaceIgnored checks that harmless workspace settings are
// skipped with a warning when the workspace is not trusted.
func TestUntrustedWorkspaceIgnored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ws   string
	}{
		{"harmless", `{"model": {"name": "ws-model"}, "general": {"defaultApprovalMode": "plan"}, "tools": {"allowed": []}}`},
		{"default approval", `{"general": {"defaultApprovalMode": "default"}, "gemini": {"baseUrl": ""}}`},
		{"invalid JSON is not even parsed into settings", `{"model": `},
		{"unknown keys do not matter", `{"modle": {"name": "x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			write(t, f.userSettings(), `{"model": {"name": "user-model"}}`)
			write(t, f.wsSettings(), tt.ws)
			s, err := config.Load(f.options(t, nil))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.Trusted || s.TrustSource != "" {
				t.Errorf("trusted = %v (%q)", s.Trusted, s.TrustSource)
			}
			if s.Model.Name != "user-model" || s.General.DefaultApprovalMode != config.ApprovalDefault {
				t.Errorf("workspace settings were applied: %+v", s)
			}
			if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], f.wsSettings()) || !strings.Contains(s.Warnings[0], "not trusted") {
				t.Errorf("warnings = %q", s.Warnings)
			}
		})
	}
}

// TestUntrustedWorkspaceEscalation checks that an untrusted workspace
// asking for more permissions or other endpoints is refused, and that the
// same file is honoured once the workspace is trusted.
func TestUntrustedWorkspaceEscalation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ws   string
		keys []string
	}{
		{"yolo", `{"general": {"defaultApprovalMode": "yolo"}}`, []string{"general.defaultApprovalMode=yolo"}},
		{"auto_edit", `{"general": {"defaultApprovalMode": "auto_edit"}}`, []string{"general.defaultApprovalMode=auto_edit"}},
		{"misspelt mode", `{"general": {"defaultApprovalMode": "YOLO"}}`, []string{"general.defaultApprovalMode=YOLO"}},
		{"allowed tools", `{"tools": {"allowed": ["run_shell_command"]}}`, []string{"tools.allowed"}},
		{"allowed tools of the wrong type", `{"tools": {"allowed": "run_shell_command"}}`, []string{"tools.allowed"}},
		{"include directories", `{"context": {"includeDirectories": ["/"]}}`, []string{"context.includeDirectories"}},
		{"gemini base URL", `{"gemini": {"baseUrl": "https://evil.example"}}`, []string{"gemini.baseUrl"}},
		{"openai base URL", `{"openai": {"baseUrl": "https://evil.example"}}`, []string{"openai.baseUrl"}},
		{"security", `{"security": {"trustedFolders": ["/"]}}`, []string{"security"}},
		{"policy paths", `{"policyPaths": ["/tmp/loose"]}`, []string{"policyPaths"}},
		{"admin policy paths", `{"adminPolicyPaths": ["/tmp/loose"]}`, []string{"adminPolicyPaths"}},
		{"allowed MCP servers", `{"mcp": {"allowed": ["gh"]}}`, []string{"mcp.allowed"}},
		{
			"several",
			`{"general": {"defaultApprovalMode": "yolo"}, "tools": {"allowed": ["x"]}, "gemini": {"baseUrl": "http://x"}, "model": {"name": "m"}}`,
			[]string{"general.defaultApprovalMode=yolo", "tools.allowed", "gemini.baseUrl"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			write(t, f.wsSettings(), tt.ws)
			_, err := config.Load(f.options(t, nil))
			if !errors.Is(err, config.ErrUntrustedWorkspace) {
				t.Fatalf("Load error = %v, want ErrUntrustedWorkspace", err)
			}
			if errors.Is(err, config.ErrInvalid) {
				t.Errorf("error also matches ErrInvalid")
			}
			var ue *config.UntrustedWorkspaceError
			if !errors.As(err, &ue) || ue.File != f.wsSettings() || !slices.Equal(ue.Keys, tt.keys) {
				t.Fatalf("error = %#v, want file %s keys %q", ue, f.wsSettings(), tt.keys)
			}
			msg := err.Error()
			for _, want := range append([]string{
				f.wsSettings(), f.ws, "--trust-workspace", "AGENTRY_TRUST_WORKSPACE=true",
				"security.trustedFolders", f.userSettings(),
			}, tt.keys...) {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}

	t.Run("honoured when trusted", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.wsSettings(), `{"general": {"defaultApprovalMode": "yolo"}, "tools": {"allowed": ["glob"]}, "gemini": {"baseUrl": "http://gw"}}`)
		opts := f.options(t, nil)
		opts.TrustWorkspace = true
		s, err := config.Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.General.DefaultApprovalMode != config.ApprovalYolo || !slices.Equal(s.Tools.Allowed, []string{"glob"}) || s.Gemini.BaseURL != "http://gw" {
			t.Errorf("settings = %+v", s)
		}
	})
}

// TestTrust checks each way to trust a workspace, and that nothing inside
// the workspace can.
func TestTrust(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(t *testing.T, f fixture) // writes files
		env    env
		flag   bool
		source string
	}{
		{name: "nothing", source: ""},
		{name: "flag", flag: true, source: config.TrustFromFlag},
		{name: "env true", env: env{"AGENTRY_TRUST_WORKSPACE": "true"}, source: config.TrustFromEnv},
		{name: "env 1", env: env{"AGENTRY_TRUST_WORKSPACE": "1"}, source: config.TrustFromEnv},
		{name: "env false", env: env{"AGENTRY_TRUST_WORKSPACE": "false"}, source: ""},
		{name: "flag beats env", flag: true, env: env{"AGENTRY_TRUST_WORKSPACE": "true"}, source: config.TrustFromFlag},
		{
			name: "user trusts the workspace",
			setup: func(t *testing.T, f fixture) {
				write(t, f.userSettings(), trustedFolders(f.ws))
			},
			source: config.TrustFromSettings,
		},
		{
			name: "user trusts an ancestor",
			setup: func(t *testing.T, f fixture) {
				write(t, f.userSettings(), trustedFolders("/nonexistent", filepath.Dir(f.ws)))
			},
			source: config.TrustFromSettings,
		},
		{
			name: "user trusts a symlink to the workspace",
			setup: func(t *testing.T, f fixture) {
				link := filepath.Join(f.userHome, "link")
				if err := os.Symlink(f.ws, link); err != nil {
					t.Fatal(err)
				}
				write(t, f.userSettings(), trustedFolders("~/link"))
			},
			source: config.TrustFromSettings,
		},
		{
			name: "a sibling with a common prefix is not an ancestor",
			setup: func(t *testing.T, f fixture) {
				write(t, f.userSettings(), trustedFolders(f.ws+"-other", f.ws[:len(f.ws)-1]))
			},
			source: "",
		},
		{
			name: "a subdirectory does not trust its parent",
			setup: func(t *testing.T, f fixture) {
				write(t, f.userSettings(), trustedFolders(filepath.Join(f.ws, "sub")))
			},
			source: "",
		},
		{
			name: "workspace .env cannot trust",
			setup: func(t *testing.T, f fixture) {
				write(t, filepath.Join(f.ws, ".env"), "AGENTRY_TRUST_WORKSPACE=true\nGEMINI_API_KEY=from-ws\n")
				write(t, filepath.Join(f.ws, ".agentry", ".env"), "AGENTRY_TRUST_WORKSPACE=1\nOPENAI_API_KEY=from-ws\n")
			},
			source: "",
		},
		{
			name: "user .env cannot trust either",
			setup: func(t *testing.T, f fixture) {
				write(t, filepath.Join(f.userHome, ".env"), "AGENTRY_TRUST_WORKSPACE=true\n")
				write(t, filepath.Join(f.home, ".env"), "AGENTRY_TRUST_WORKSPACE=true\n")
			},
			source: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			opts := f.options(t, tt.env)
			opts.TrustWorkspace = tt.flag
			s, err := config.Load(opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.TrustSource != tt.source || s.Trusted != (tt.source != "") {
				t.Errorf("trust = %v/%q, want %q", s.Trusted, s.TrustSource, tt.source)
			}
			if !s.Trusted && (s.Credentials.GeminiAPIKey != "" || s.Credentials.OpenAIAPIKey != "") {
				t.Errorf("untrusted workspace .env supplied credentials: %+v", s.Credentials)
			}
		})
	}

	t.Run("workspace .env warning", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		dotenv := filepath.Join(f.ws, ".env")
		write(t, dotenv, "AGENTRY_TRUST_WORKSPACE=true\nGEMINI_API_KEY=from-ws\nOTHER=1\n")
		s, err := config.Load(f.options(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], dotenv) || !strings.Contains(s.Warnings[0], "GEMINI_API_KEY") {
			t.Errorf("warnings = %q", s.Warnings)
		}
	})

	t.Run("workspace settings cannot trust", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.wsSettings(), trustedFolders(f.ws))
		_, err := config.Load(f.options(t, nil))
		if !errors.Is(err, config.ErrUntrustedWorkspace) {
			t.Fatalf("Load error = %v, want ErrUntrustedWorkspace", err)
		}
	})

	t.Run("trusted workspace settings cannot set security", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.wsSettings(), trustedFolders("/"))
		opts := f.options(t, nil)
		opts.TrustWorkspace = true
		_, err := config.Load(opts)
		want := f.wsSettings() + `: "security" cannot be set in workspace settings: trust is decided only by the user, in ` + f.userSettings()
		if !errors.Is(err, config.ErrInvalid) || err.Error() != want {
			t.Fatalf("Load error = %v, want %s", err, want)
		}
	})

	t.Run("bad AGENTRY_TRUST_WORKSPACE", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		_, err := config.Load(f.options(t, env{"AGENTRY_TRUST_WORKSPACE": "yes"}))
		want := `AGENTRY_TRUST_WORKSPACE="yes": must be true, false, 1 or 0`
		if !errors.Is(err, config.ErrInvalid) || err.Error() != want {
			t.Fatalf("Load error = %v, want %s", err, want)
		}
	})

	t.Run("security comes only from the user file", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		write(t, f.userSettings(), trustedFolders(f.ws))
		_, err := config.Load(f.options(t, env{"AGENTRY_SECURITY_TRUSTEDFOLDERS": "/"}))
		want := `AGENTRY_SECURITY_TRUSTEDFOLDERS: "security.trustedFolders" cannot be set by a variable: trust and the server's security are decided only in ~/.agentry/settings.json`
		if !errors.Is(err, config.ErrInvalid) || err.Error() != want {
			t.Fatalf("Load error = %v, want %s", err, want)
		}
	})
}

// TestWorkspaceIsHome checks that a workspace equal to the user home reads
// the user settings file once, as the user's, not as workspace settings.
func TestWorkspaceIsHome(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ws = f.userHome
	write(t, f.userSettings(), `{"security": {"trustedFolders": ["/nonexistent"]}, "general": {"defaultApprovalMode": "yolo"}}`)
	s, err := config.Load(f.options(t, nil))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Trusted || s.General.DefaultApprovalMode != config.ApprovalYolo || len(s.Warnings) != 0 {
		t.Errorf("settings = %+v", s)
	}
}

// TestWorkspace checks the resolution of the workspace directory.
func TestWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(f.ws, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(f.ws, "file")
	write(t, file, "x")
	real, err := filepath.EvalSymlinks(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, want, err string
	}{
		{name: "symlink resolved", dir: link, want: real},
		{name: "missing", dir: filepath.Join(f.ws, "nope"), err: "does not exist"},
		{name: "file", dir: file, err: "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := f.options(t, nil)
			opts.Workspace = tt.dir
			s, err := config.Load(opts)
			if tt.err != "" {
				if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), tt.dir) {
					t.Fatalf("Load error = %v, want ErrInvalid %q naming %s", err, tt.err, tt.dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Workspace != tt.want || s.Home != f.home {
				t.Errorf("workspace/home = %s/%s, want %s/%s", s.Workspace, s.Home, tt.want, f.home)
			}
		})
	}
}

// TestWorkspaceDefaultsToCurrentDirectory cannot run in parallel: it
// changes the current directory.
func TestWorkspaceDefaultsToCurrentDirectory(t *testing.T) {
	f := newFixture(t)
	t.Chdir(f.ws)
	s, err := config.Load(config.LoadOptions{UserHome: f.userHome, LookupEnv: env{}.lookup})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(f.ws)
	if s.Workspace != real {
		t.Errorf("workspace = %s, want %s", s.Workspace, real)
	}
}

// TestIncludeDirectories checks resolution against the workspace and the
// error for a missing directory, which names where the entry came from.
func TestIncludeDirectories(t *testing.T) {
	t.Parallel()
	t.Run("resolved", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		other := t.TempDir()
		if err := os.Mkdir(filepath.Join(f.ws, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, f.userSettings(), `{"context": {"includeDirectories": ["sub", "`+other+`"]}}`)
		s, err := config.Load(f.options(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		ws, _ := filepath.EvalSymlinks(f.ws)
		o, _ := filepath.EvalSymlinks(other)
		if want := []string{filepath.Join(ws, "sub"), o}; !slices.Equal(s.Context.IncludeDirectories, want) {
			t.Errorf("includeDirectories = %q, want %q", s.Context.IncludeDirectories, want)
		}
	})
	tests := []struct {
		name  string
		user  string
		env   env
		args  []string
		check func(f fixture) string // expected message
	}{
		{
			name: "missing in user file", user: `{"context": {"includeDirectories": ["nope"]}}`,
			check: func(f fixture) string {
				return f.userSettings() + `: "context.includeDirectories" entry "nope": directory ` + filepath.Join(f.ws, "nope") + " does not exist"
			},
		},
		{
			name: "missing in env", env: env{"AGENTRY_CONTEXT_INCLUDEDIRECTORIES": "/nonexistent/x"},
			check: func(fixture) string {
				return `AGENTRY_CONTEXT_INCLUDEDIRECTORIES="/nonexistent/x": "context.includeDirectories" entry "/nonexistent/x": directory /nonexistent/x does not exist`
			},
		},
		{
			name: "file from flag", args: []string{"--include-directories=.agentry/settings.json"},
			user: `{}`,
			check: func(f fixture) string {
				return `--include-directories="[.agentry/settings.json]": "context.includeDirectories" entry ".agentry/settings.json": ` +
					filepath.Join(f.ws, ".agentry/settings.json") + " is not a directory"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if ws, err := filepath.EvalSymlinks(f.ws); err == nil {
				f.ws = ws
			}
			write(t, f.wsSettings(), `{}`)
			if tt.user != "" {
				write(t, f.userSettings(), tt.user)
			}
			_, err := config.Load(f.options(t, tt.env, tt.args...))
			if want := tt.check(f); !errors.Is(err, config.ErrInvalid) || err.Error() != want {
				t.Fatalf("Load error = %v\nwant %s", err, want)
			}
		})
	}
}

// TestProcessEnvUnchanged checks that Load never writes the process
// environment, even with .env files full of variables.
func TestProcessEnvUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	write(t, filepath.Join(f.userHome, ".env"), "GEMINI_API_KEY=k1\nAGENTRY_TEST_UNIQUE_VAR=1\n")
	write(t, filepath.Join(f.ws, ".env"), "OPENAI_API_KEY=k2\n")
	before := os.Environ()
	opts := f.options(t, env{})
	opts.TrustWorkspace = true
	s, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Credentials.GeminiAPIKey != "k1" || s.Credentials.OpenAIAPIKey != "k2" {
		t.Errorf("credentials = %+v", s.Credentials)
	}
	if after := os.Environ(); !slices.Equal(before, after) {
		t.Errorf("process environment changed")
	}
	if _, ok := os.LookupEnv("AGENTRY_TEST_UNIQUE_VAR"); ok {
		t.Errorf("AGENTRY_TEST_UNIQUE_VAR was set")
	}
}

// TestAgentryIsAFile checks that a file named .agentry in the workspace
// means "no workspace settings", not an unreadable settings file.
func TestAgentryIsAFile(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		f := newFixture(t)
		write(t, filepath.Join(f.ws, ".agentry"), "not a directory")
		opts := f.options(t, nil)
		opts.TrustWorkspace = trusted
		s, err := config.Load(opts)
		if err != nil {
			t.Fatalf("trusted=%v: Load: %v", trusted, err)
		}
		if len(s.Warnings) != 0 {
			t.Errorf("trusted=%v: warnings = %q", trusted, s.Warnings)
		}
	}
}
