package compose

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/runtime"
)

// Policies are the policy rules of a session's settings: the files of
// every tier, the settings' rules and the bundled defaults, and where
// "always and save" answers go. A driver loads them for each session it
// builds (so that a rule saved in one holds in the next) or once for many
// (a batch), and shows their warnings once.
type Policies struct {
	// Rules are every rule, in no particular order (policy.New sorts).
	Rules []policy.Rule
	// Saver writes proceed_always_and_save answers: the trusted
	// workspace's .agentry/policies/auto-saved.toml, else the user's
	// ~/.agentry/policies/auto-saved.toml.
	Saver *policy.Saver
	// Warnings are for the user: policy files that failed to load
	// (skipped whole, or a rule dropped), system directories skipped as
	// insecure, and an untrusted workspace's policy directories ignored.
	Warnings []string
	// noAlways is security.disableAlwaysAllow.
	noAlways bool
}

// LoadPolicies loads the policy rules of s, as gemini-cli's
// createPolicyEngineConfig does, in tiers (a higher tier wins):
//
//   - admin: /etc/agentry/policies and /etc/gemini-cli/policies (or
//     AGENTRY_ADMIN_POLICY_DIR), each skipped with gemini-cli's security
//     warning unless owned by root and writable by nobody else; then
//     adminPolicyPaths (--admin-policy), ignored when a system directory
//     holds policies;
//   - user: ~/.gemini/policies and ~/.agentry/policies, or policyPaths
//     (--policy), which replace them;
//   - workspace: <workspace>/.gemini/policies and .agentry/policies, only
//     in a trusted workspace (gemini-cli 0.61.0 never loads this tier);
//     an untrusted workspace's existing directories are reported and
//     never read;
//   - the settings' rules (tools.exclude, tools.allowed or --allowed-tools,
//     tools.core, tools.confirmationRequired, mcp.allowed, mcp.excluded)
//     and the bundled defaults.
//
// interactive tells the settings' rules whether someone can answer (a
// session with an approver). Nothing here fails: a file that cannot be
// used is a warning, and loading goes on without it.
func LoadPolicies(s *config.Settings, interactive bool) *Policies {
	p := &Policies{Saver: policy.NewSaver(s.AutoSavedPolicyPath()), noAlways: s.Security.DisableAlwaysAllow}
	load := func(paths []string, tier policy.Tier) {
		rules, errs := policy.LoadPaths(paths, tier)
		p.Rules = append(p.Rules, rules...)
		for _, err := range errs {
			p.Warnings = append(p.Warnings, err.Error())
		}
	}

	// Admin tier.
	var system []string
	systemHasPolicies := ""
	for _, dir := range s.SystemPolicyDirs() {
		if reason, ok := secureDir(dir); !ok {
			p.Warnings = append(p.Warnings, fmt.Sprintf("Security Warning: Skipping system policies from %s: %s", dir, reason))
			continue
		}
		system = append(system, dir)
		if systemHasPolicies == "" && hasTOML(dir) {
			systemHasPolicies = dir
		}
	}
	load(system, policy.TierAdmin)
	if len(s.AdminPolicyPaths) > 0 {
		if systemHasPolicies != "" {
			p.Warnings = append(p.Warnings, fmt.Sprintf("Security Warning: Ignoring --admin-policy because system policies are already defined in %s", systemHasPolicies))
		} else {
			load(s.AdminPolicyPaths, policy.TierAdmin)
		}
	}

	// User tier.
	if len(s.PolicyPaths) > 0 {
		load(s.PolicyPaths, policy.TierUser)
	} else {
		load(s.UserPolicyDirs(), policy.TierUser)
	}

	// Workspace tier: a trusted workspace's own policies. An untrusted
	// one's are never read, so they cannot loosen anything.
	if s.Trusted {
		load(s.WorkspacePolicyDirs(), policy.TierWorkspace)
	} else {
		for _, dir := range s.WorkspacePolicyDirs() {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				p.Warnings = append(p.Warnings, fmt.Sprintf(
					"%s ignored: the workspace is not trusted, so its policies are not loaded (trust it with --trust-workspace, AGENTRY_TRUST_WORKSPACE=true, or security.trustedFolders in %s)",
					dir, s.UserSettingsPath()))
			}
		}
	}

	rules, err := policy.SettingsRules(policy.Settings{
		ToolsExclude: s.Tools.Exclude, ToolsAllowed: s.Tools.Allowed, ToolsCore: s.Tools.Core,
		ConfirmationRequired: s.Tools.ConfirmationRequired, AllowedFlagGiven: s.AllowedToolsFlag,
		MCPExcluded: s.MCP.Excluded, MCPAllowed: s.MCP.Allowed, Interactive: interactive,
	})
	if err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("settings' policy rules left out: %v", err))
	}
	p.Rules = append(p.Rules, rules...)
	p.Rules = append(p.Rules, policy.Defaults()...)
	return p
}

// Policy returns a new approval policy over the rules in mode: each
// session has its own engine, for its own "always" answers (its subagents
// share it).
func (p *Policies) Policy(s *config.Settings, mode runtime.ApprovalMode) (*runtime.Policy, error) {
	var engineOpts []policy.Option
	opts := []runtime.PolicyOption{
		runtime.WithTrusted(s.Trusted), runtime.WithSaver(p.Saver), runtime.WithAllowedTools(s.Tools.Allowed),
	}
	if p.noAlways {
		engineOpts = append(engineOpts, policy.WithoutAlwaysAllow())
		opts = append(opts, runtime.WithoutAlwaysOptions())
	}
	if s.Security.EnablePermanentToolApproval {
		opts = append(opts, runtime.WithPermanentApproval())
	}
	engine, err := policy.New(p.Rules, engineOpts...)
	if err != nil {
		return nil, err
	}
	return runtime.NewPolicyWith(mode, engine, opts...)
}

// hasTOML reports whether dir holds a .toml file.
func hasTOML(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".toml") {
			return true
		}
	}
	return false
}

// secureDir is gemini-cli's isDirectorySecure for a system policy
// directory: owned by root and writable by neither group nor others. A
// directory that does not exist is secure (there is nothing to read).
func secureDir(dir string) (reason string, ok bool) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", true
	case err != nil:
		return "Failed to access directory: " + err.Error(), false
	case !fi.IsDir():
		return "Not a directory", false
	}
	if uid, known := ownerUID(fi); known && uid != 0 {
		return fmt.Sprintf("Directory '%s' is not owned by root (uid 0). Current uid: %d. To fix this, run: sudo chown root:root %q", dir, uid, dir), false
	}
	if mode := fi.Mode().Perm(); mode&0o022 != 0 {
		return fmt.Sprintf("Directory '%s' is writable by group or others (mode: %o). To fix this, run: sudo chmod g-w,o-w %q", dir, uint32(fi.Mode().Perm())|0o40000, dir), false
	}
	return "", true
}
