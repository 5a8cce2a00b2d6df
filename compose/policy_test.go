package compose_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

const (
	allowShell = "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"allow\"\npriority = 100\n"
	denyShell  = "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 100\n"
)

// policyEnv is a home, a workspace and a system policy directory of a
// test's own.
type policyEnv struct {
	home, ws, system string
	env              map[string]string
}

func newPolicyEnv(t *testing.T) *policyEnv {
	t.Helper()
	root := t.TempDir()
	e := &policyEnv{home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), system: filepath.Join(root, "etc", "policies")}
	for _, d := range []string{e.home, e.ws, e.system} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.env = map[string]string{config.AdminPolicyDirEnv: e.system}
	return e
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// load loads the settings (trusted or not, with mutations) and their
// policies.
func (e *policyEnv) load(t *testing.T, trusted bool, mutate func(*config.Settings)) (*config.Settings, *compose.Policies) {
	t.Helper()
	s, err := config.Load(config.LoadOptions{
		Workspace: e.ws, UserHome: e.home, TrustWorkspace: trusted,
		LookupEnv: func(k string) (string, bool) { v, ok := e.env[k]; return v, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(s)
	}
	return s, compose.LoadPolicies(s, true)
}

// decide is the decision of the policies for `npm test` in default mode,
// with a human to ask.
func decide(t *testing.T, s *config.Settings, p *compose.Policies) runtime.Decision {
	t.Helper()
	pol, err := p.Policy(s, runtime.ApprovalDefault)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := pol.Decide(&modeltest.FakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}, map[string]any{"command": "npm test"})
	return d
}

func warningWith(p *compose.Policies, parts ...string) bool {
	for _, w := range p.Warnings {
		all := true
		for _, part := range parts {
			all = all && strings.Contains(w, part)
		}
		if all {
			return true
		}
	}
	return false
}

// TestWorkspacePoliciesNeedTrust: an untrusted workspace's policy
// directory is ignored with a warning naming it and how to trust the
// workspace; trusted, its rules apply.
func TestWorkspacePoliciesNeedTrust(t *testing.T) {
	e := newPolicyEnv(t)
	dir := filepath.Join(e.ws, ".gemini", "policies")
	writeFile(t, filepath.Join(dir, "x.toml"), allowShell)

	s, p := e.load(t, false, nil)
	if d := decide(t, s, p); d != runtime.Ask {
		t.Errorf("untrusted: %v, want ask (the workspace's allow rule ignored)", d)
	}
	if !warningWith(p, dir, "not trusted", "--trust-workspace") || len(p.Warnings) != 1 {
		t.Errorf("untrusted: warnings %q", p.Warnings)
	}

	s, p = e.load(t, true, nil)
	if d := decide(t, s, p); d != runtime.Allow {
		t.Errorf("trusted: %v, want allow", d)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("trusted: warnings %q", p.Warnings)
	}
	if want := filepath.Join(s.Workspace, ".agentry", "policies", "auto-saved.toml"); s.AutoSavedPolicyPath() != want {
		t.Errorf("trusted workspace saves to %s, want %s", s.AutoSavedPolicyPath(), want)
	}
}

// TestPolicyTiers: user files (both homes) load; --policy replaces them;
// the admin tier beats the user's; a file that fails is skipped with a
// warning while the others load.
func TestPolicyTiers(t *testing.T) {
	e := newPolicyEnv(t)
	writeFile(t, filepath.Join(e.home, ".agentry", "policies", "a.toml"), allowShell)
	s, p := e.load(t, false, nil)
	if d := decide(t, s, p); d != runtime.Allow {
		t.Errorf("~/.agentry/policies: %v, want allow", d)
	}
	if want := filepath.Join(e.home, ".agentry", "policies", "auto-saved.toml"); s.AutoSavedPolicyPath() != want {
		t.Errorf("untrusted workspace saves to %s, want %s", s.AutoSavedPolicyPath(), want)
	}

	// --policy FILE replaces the user directories.
	flagFile := filepath.Join(t.TempDir(), "flag.toml")
	writeFile(t, flagFile, denyShell)
	s, p = e.load(t, false, func(s *config.Settings) { s.PolicyPaths = []string{flagFile} })
	if d := decide(t, s, p); d != runtime.Deny {
		t.Errorf("--policy deny: %v, want deny", d)
	}

	// A broken file is skipped whole, with gemini-cli's error text.
	writeFile(t, filepath.Join(e.home, ".gemini", "policies", "bad.toml"), "[[rule]\ntoolName=")
	s, p = e.load(t, false, nil)
	if d := decide(t, s, p); d != runtime.Allow {
		t.Errorf("with a broken file beside: %v, want allow", d)
	}
	if !warningWith(p, "bad.toml") {
		t.Errorf("no warning for the broken file: %q", p.Warnings)
	}

	// The admin tier wins over the user's allow.
	writeFile(t, filepath.Join(e.system, "admin.toml"), denyShell)
	s, p = e.load(t, false, nil)
	if d := decide(t, s, p); d != runtime.Deny {
		t.Errorf("admin deny: %v, want deny", d)
	}
	// --admin-policy is ignored while the system directory has policies.
	extra := filepath.Join(t.TempDir(), "extra.toml")
	writeFile(t, extra, allowShell)
	_, p = e.load(t, false, func(s *config.Settings) { s.AdminPolicyPaths = []string{extra} })
	if !warningWith(p, "Security Warning: Ignoring --admin-policy because system policies are already defined in "+e.system) {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// TestInsecureSystemPolicies: a system directory writable by others (or
// not root's) is skipped with gemini-cli's security warning.
func TestInsecureSystemPolicies(t *testing.T) {
	e := newPolicyEnv(t)
	writeFile(t, filepath.Join(e.system, "admin.toml"), denyShell)
	if err := os.Chmod(e.system, 0o777); err != nil {
		t.Fatal(err)
	}
	s, p := e.load(t, false, nil)
	if d := decide(t, s, p); d != runtime.Ask {
		t.Errorf("insecure admin directory: %v, want ask (its deny skipped)", d)
	}
	want := "Security Warning: Skipping system policies from " + e.system + ": "
	if !warningWith(p, want) {
		t.Errorf("warnings %q, want one starting %q", p.Warnings, want)
	}
}

// TestSettingsRulesOfCompose: tools.exclude denies, tools.allowed from
// --allowed-tools allows git and denies other shell commands.
func TestSettingsRulesOfCompose(t *testing.T) {
	e := newPolicyEnv(t)
	s, p := e.load(t, false, func(s *config.Settings) {
		s.Tools.Allowed, s.AllowedToolsFlag = []string{"run_shell_command(git)"}, true
	})
	pol, err := p.Policy(s, runtime.ApprovalDefault)
	if err != nil {
		t.Fatal(err)
	}
	shell := &modeltest.FakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	if d, _ := pol.Decide(shell, map[string]any{"command": "git log"}); d != runtime.Allow {
		t.Errorf("git log: %v, want allow", d)
	}
	if d, _ := pol.Decide(shell, map[string]any{"command": "npm test"}); d != runtime.Deny {
		t.Errorf("npm test: %v, want deny", d)
	}
	s, p = e.load(t, false, func(s *config.Settings) { s.Tools.Exclude = []string{"run_shell_command"} })
	if d := decide(t, s, p); d != runtime.Deny {
		t.Errorf("tools.exclude: %v, want deny", d)
	}
}
