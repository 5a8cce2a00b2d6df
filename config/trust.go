package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Trust sources, as reported in Settings.TrustSource.
const (
	TrustFromFlag     = "flag"
	TrustFromEnv      = "env"
	TrustFromSettings = "settings"
	// TrustFromTrustedFolders is gemini-cli's ~/.gemini/trustedFolders.json.
	TrustFromTrustedFolders = "trustedFolders"
)

// trustEnv is the variable that trusts the workspace for one run.
const trustEnv = "AGENTRY_TRUST_WORKSPACE"

// resolveWorkspace makes dir absolute and resolves symlinks, so that trust
// decisions and path checks compare one canonical spelling.
func resolveWorkspace(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("config: finding the current directory: %w", err)
		}
		dir = wd
	}
	// A workspace that cannot be used is an invalid setting (exit 52), like
	// any other value the user gave.
	bad := func(msg string, err error) error {
		return &Error{Msg: fmt.Sprintf("workspace %s %s", dir, msg), Err: err}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", bad("cannot be resolved", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", bad("does not exist", nil)
	}
	if err != nil {
		return "", bad("cannot be resolved", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", bad("cannot be read", err)
	}
	if !fi.IsDir() {
		return "", bad("is not a directory", nil)
	}
	return real, nil
}

// decideTrust decides whether the workspace is trusted and why. Only the
// user can vouch for a workspace: the flag, the real environment, the user
// settings file or gemini-cli's trustedFolders.json in the user's home.
// Nothing inside the workspace is consulted, since a cloned repository would
// otherwise trust itself. The warnings are about variables it ignored.
func decideTrust(opts LoadOptions, lookup func(string) (string, bool), userValues map[string]any, userHome, workspace string) (string, []string, error) {
	if opts.TrustWorkspace {
		return TrustFromFlag, nil, nil
	}
	if text, ok := lookup(trustEnv); ok && text != "" {
		on, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return "", nil, &Error{Env: trustEnv, Got: text, Msg: "must be true, false, 1 or 0"}
		}
		if on {
			return TrustFromEnv, nil, nil
		}
	}
	var warnings []string
	// gemini-cli's variable, compared as gemini-cli compares it: "false"
	// distrusts even a folder its files trust.
	switch text, _ := lookup(geminiTrustEnv); text {
	case "true":
		return TrustFromEnv, nil, nil
	case "false":
		return "", nil, nil
	case "":
	default:
		warnings = append(warnings, fmt.Sprintf("%s=%q ignored: like gemini-cli, agentry reads only true or false", geminiTrustEnv, text))
	}
	rules, more, err := readTrustedFolders(filepath.Join(userHome, geminiDir, trustedFoldersFile))
	if err != nil {
		return "", nil, err
	}
	warnings = append(warnings, more...)
	folders, _ := userValues["security.trustedFolders"].([]string)
	for _, f := range folders {
		rules = append(rules, trustRule{path: resolvePath(expandHome(f, userHome)), level: trustFolder, source: TrustFromSettings})
	}
	if r, ok := nearestRule(rules, workspace); ok && r.level != doNotTrust {
		return r.source, warnings, nil
	}
	return "", warnings, nil
}

// Trust levels of gemini-cli's trustedFolders.json.
const (
	trustFolder = "TRUST_FOLDER"
	trustParent = "TRUST_PARENT"
	doNotTrust  = "DO_NOT_TRUST"
)

// trustedFoldersFile is gemini-cli's trust file in ~/.gemini.
const trustedFoldersFile = "trustedFolders.json"

// geminiTrustEnv is gemini-cli's variable that trusts the workspace.
const geminiTrustEnv = "GEMINI_CLI_TRUST_WORKSPACE"

// trustRule is one folder rule: an entry of trustedFolders.json, or of
// security.trustedFolders (a TRUST_FOLDER rule).
type trustRule struct {
	path   string // the rule's folder, absolute and resolved
	level  string
	source string // the TrustFrom* constant reported when the rule trusts
}

// nearestRule returns the rule that decides dir, as gemini-cli's
// isPathTrusted decides: among the rules whose folder contains dir (for
// TRUST_PARENT, the folder's parent), the one with the longest path; on a
// tie DO_NOT_TRUST wins, the safer reading.
func nearestRule(rules []trustRule, dir string) (trustRule, bool) {
	var best trustRule
	found := false
	for _, r := range rules {
		effective := r.path
		if r.level == trustParent {
			effective = resolvePath(filepath.Dir(r.path))
		}
		if !within(dir, effective) {
			continue
		}
		if !found || len(r.path) > len(best.path) || len(r.path) == len(best.path) && r.level == doNotTrust {
			best, found = r, true
		}
	}
	return best, found
}

// readTrustedFolders reads gemini-cli's trustedFolders.json: an object
// mapping folders to TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST. A missing
// file has no rules; an invalid level is an error, as it is for gemini-cli.
// A relative folder is skipped with a warning: trust must not depend on the
// directory agentry starts in.
func readTrustedFolders(path string) ([]trustRule, []string, error) {
	raw, err := readSettingsFile("", path)
	if err != nil || raw == nil {
		return nil, nil, err
	}
	var rules []trustRule
	var warnings []string
	for _, folder := range sortedKeys(raw) {
		level, _ := raw[folder].(string)
		switch level {
		case trustFolder, trustParent, doNotTrust:
		default:
			got, _ := json.Marshal(raw[folder])
			return nil, nil, &Error{File: path, Msg: fmt.Sprintf(
				"invalid trust level %s for path %q: must be %s, %s or %s", got, folder, trustFolder, trustParent, doNotTrust)}
		}
		if !filepath.IsAbs(folder) {
			warnings = append(warnings, fmt.Sprintf("%s: relative folder %q ignored: trust rules need absolute paths", path, folder))
			continue
		}
		rules = append(rules, trustRule{path: resolvePath(folder), level: level, source: TrustFromTrustedFolders})
	}
	return rules, warnings, nil
}

// rawValue returns the value at a dotted key of a decoded JSON object.
func rawValue(raw map[string]any, key string) (any, bool) {
	parts := strings.Split(key, ".")
	var cur any = raw
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// escalations lists what an untrusted workspace settings file asks for that
// would raise permissions or redirect credentials. It works on the raw JSON,
// before any validation, so that a misspelled or mistyped file cannot slip
// through: any non-empty value of a sensitive key counts.
// withSecurity counts any security key: agentry's own workspace file may
// not set one, and gemini-cli's holds only gemini-cli's, never read.
func escalations(raw map[string]any, withSecurity bool) []string {
	var keys []string
	if v, ok := rawValue(raw, "general.defaultApprovalMode"); ok {
		mode, isString := v.(string)
		if !isString || ApprovalRank(mode) > ApprovalRank(ApprovalDefault) || ApprovalRank(mode) < 0 {
			keys = append(keys, fmt.Sprintf("general.defaultApprovalMode=%v", v))
		}
	}
	for _, key := range []string{"tools.allowed", "context.includeDirectories", "gemini.baseUrl", "openai.baseUrl",
		"policyPaths", "adminPolicyPaths", "mcp.allowed"} {
		if v, ok := rawValue(raw, key); ok && !emptyJSON(v) {
			keys = append(keys, key)
		}
	}
	if _, ok := raw["security"]; ok && withSecurity {
		keys = append(keys, "security")
	}
	return keys
}

// emptyJSON reports whether a decoded JSON value is null, "" or [].
func emptyJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	}
	return false
}

// errWorkspaceSecurity rejects security.* in a trusted workspace's settings:
// trust is granted by the user, and a trusted repository must not be able
// to extend it to other folders.
func errWorkspaceSecurity(file, userSettings string, raw map[string]any) error {
	if _, ok := raw["security"]; !ok {
		return nil
	}
	return &Error{File: file, Key: "security", Msg: fmt.Sprintf(
		"\"security\" cannot be set in workspace settings: trust is decided only by the user, in %s", userSettings)}
}

// skippedContextFiles returns a warning naming the project context files
// (GEMINI.md, AGENTRY.md, …) an untrusted workspace has, which the agent
// does not read, and how to trust the workspace; "" when it has none. It
// looks where the context processor would look in a trusted workspace:
// every directory from each root's git root (or the root) down to the root.
func skippedContextFiles(roots, names []string, userPath string) string {
	var found []string
	seen := map[string]bool{}
	for _, root := range roots {
		for _, dir := range dirsFromGitRoot(root) {
			for _, name := range names {
				p := filepath.Join(dir, name)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && !seen[p] {
					seen[p] = true
					found = append(found, p)
				}
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("project context not read, the workspace is not trusted: %s; trust it with --trust-workspace, "+
		"AGENTRY_TRUST_WORKSPACE=true or GEMINI_CLI_TRUST_WORKSPACE=true, security.trustedFolders in %s, "+
		"or a TRUST_FOLDER entry in ~/.gemini/trustedFolders.json", strings.Join(found, ", "), userPath)
}

// dirsFromGitRoot returns the directories from root's git root (or root
// alone when it is in no repository) down to root, outermost first.
func dirsFromGitRoot(root string) []string {
	var chain []string
	for dir := root; ; {
		chain = append([]string{dir}, chain...)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return chain
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{root}
		}
		dir = parent
	}
}
