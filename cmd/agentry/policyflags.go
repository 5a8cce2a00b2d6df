package main

import (
	"path/filepath"
	"sync"

	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
)

// policyFlagKeys are the policy flags' settings keys, gemini-cli's flags
// of the same names: each replaces its setting.
func policyFlagKeys() map[string]string {
	return map[string]string{
		"policy":                   "policyPaths",
		"admin-policy":             "adminPolicyPaths",
		"allowed-mcp-server-names": "mcp.allowed",
	}
}

// withPolicyFlags returns keys with the policy flags' keys added.
func withPolicyFlags(keys map[string]string) map[string]string {
	out := make(map[string]string, len(keys)+3)
	for k, v := range keys {
		out[k] = v
	}
	for k, v := range policyFlagKeys() {
		out[k] = v
	}
	return out
}

// addPolicyFlags defines the policy flags on fl: run, the root command,
// serve and batch share them.
func addPolicyFlags(fl *pflag.FlagSet) {
	fl.StringSlice("policy", nil, "policy `FILE`s or directories loaded at the user tier in place of ~/.gemini/policies and ~/.agentry/policies (repeatable or comma-separated; policyPaths)")
	fl.StringSlice("admin-policy", nil, "policy `FILE`s or directories loaded at the admin tier, unless a system policy directory holds policies (repeatable or comma-separated; adminPolicyPaths)")
	fl.StringSlice("allowed-mcp-server-names", nil, "MCP servers whose tools run without approval outside plan mode (replaces mcp.allowed)")
}

// allowedToolsUsage is --allowed-tools' help, deprecated as in gemini-cli.
const allowedToolsUsage = `deprecated (use a policy file, see docs/policy.md): tools that run without approval, replacing tools.allowed, e.g. write_file,"run_shell_command(git status)"`

// absSlice returns the flag's values with relative paths made absolute
// (for a snapshot another process reads).
func absSlice(fl *pflag.FlagSet, name string) []string {
	if !fl.Changed(name) {
		return nil
	}
	vals, _ := fl.GetStringSlice(name)
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if len(v) > 0 && v[0] != '~' && !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		out = append(out, v)
	}
	return out
}

// policyLoader loads a session's policies (compose.LoadPolicies) each
// time one is built, so that a rule saved by an "always and save" answer
// holds in the next session of the process (/clear, /resume, a new A2A
// context), and shows each of their warnings once per process.
type policyLoader struct {
	warn func(string)

	mu    sync.Mutex
	shown map[string]bool
}

func newPolicyLoader(warn func(string)) *policyLoader {
	return &policyLoader{warn: warn, shown: map[string]bool{}}
}

// load loads the policies of s; interactive is whether the session has an
// approver.
func (l *policyLoader) load(s *config.Settings, interactive bool) *compose.Policies {
	p := compose.LoadPolicies(s, interactive)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range p.Warnings {
		if !l.shown[w] {
			l.shown[w] = true
			l.warn(w)
		}
	}
	return p
}
