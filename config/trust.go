package config

import (
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
// user can vouch for a workspace: the flag, the real environment, or the
// user settings file. Nothing inside the workspace is consulted, since a
// cloned repository would otherwise trust itself.
func decideTrust(opts LoadOptions, lookup func(string) (string, bool), userValues map[string]any, userHome, workspace string) (string, error) {
	if opts.TrustWorkspace {
		return TrustFromFlag, nil
	}
	if text, ok := lookup(trustEnv); ok && text != "" {
		on, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return "", &Error{Env: trustEnv, Got: text, Msg: "must be true, false, 1 or 0"}
		}
		if on {
			return TrustFromEnv, nil
		}
	}
	folders, _ := userValues["security.trustedFolders"].([]string)
	for _, f := range folders {
		if within(workspace, resolvePath(expandHome(f, userHome))) {
			return TrustFromSettings, nil
		}
	}
	return "", nil
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
func escalations(raw map[string]any) []string {
	var keys []string
	if v, ok := rawValue(raw, "general.defaultApprovalMode"); ok {
		mode, isString := v.(string)
		if !isString || ApprovalRank(mode) > ApprovalRank(ApprovalDefault) || ApprovalRank(mode) < 0 {
			keys = append(keys, fmt.Sprintf("general.defaultApprovalMode=%v", v))
		}
	}
	for _, key := range []string{"tools.allowed", "context.includeDirectories", "gemini.baseUrl", "openai.baseUrl"} {
		if v, ok := rawValue(raw, key); ok && !emptyJSON(v) {
			keys = append(keys, key)
		}
	}
	if _, ok := raw["security"]; ok {
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
