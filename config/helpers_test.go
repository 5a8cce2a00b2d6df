package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/config"
)

// env is an injected environment.
type env map[string]string

func (e env) lookup(k string) (string, bool) {
	v, ok := e[k]
	return v, ok
}

// environ lists e as os.Environ does.
func (e env) environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

// fixture is a hermetic user home and workspace.
type fixture struct {
	userHome, home, ws string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	userHome := t.TempDir()
	return fixture{userHome: userHome, home: filepath.Join(userHome, ".agentry"), ws: t.TempDir()}
}

func (f fixture) userSettings() string { return filepath.Join(f.home, "settings.json") }
func (f fixture) wsSettings() string   { return filepath.Join(f.ws, ".agentry", "settings.json") }

// write creates path with content, making its directories.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// flagKeys is the mapping the CLI uses.
func flagKeys() map[string]string {
	return map[string]string{
		"model":                    "model.name",
		"approval-mode":            "general.defaultApprovalMode",
		"max-session-turns":        "model.maxSessionTurns",
		"allowed-tools":            "tools.allowed",
		"exclude-tools":            "tools.exclude",
		"include-directories":      "context.includeDirectories",
		"output-format":            "output.format",
		"policy":                   "policyPaths",
		"admin-policy":             "adminPolicyPaths",
		"allowed-mcp-server-names": "mcp.allowed",
	}
}

// flags returns a real flag set parsed from args.
func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("agentry", pflag.ContinueOnError)
	fs.String("model", config.DefaultModel, "")
	fs.String("approval-mode", config.ApprovalDefault, "")
	fs.Int("max-session-turns", -1, "")
	fs.StringSlice("allowed-tools", nil, "")
	fs.StringSlice("exclude-tools", nil, "")
	fs.StringSlice("include-directories", nil, "")
	fs.String("output-format", "text", "")
	fs.StringSlice("policy", nil, "")
	fs.StringSlice("admin-policy", nil, "")
	fs.StringSlice("allowed-mcp-server-names", nil, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// options returns LoadOptions for f with the given environment and flags.
func (f fixture) options(t *testing.T, e env, args ...string) config.LoadOptions {
	t.Helper()
	return config.LoadOptions{
		Workspace: f.ws,
		UserHome:  f.userHome,
		LookupEnv: e.lookup,
		Environ:   e.environ,
		Flags:     flags(t, args...),
		FlagKeys:  flagKeys(),
	}
}

// trustedFolders returns user settings trusting dirs.
func trustedFolders(dirs ...string) string {
	s := `{"security": {"trustedFolders": [`
	for i, d := range dirs {
		if i > 0 {
			s += ","
		}
		s += `"` + d + `"`
	}
	return s + `]}}`
}
