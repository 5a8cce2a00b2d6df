package config

import (
	"path/filepath"
	"strings"
)

// SessionDBPath returns the SQLite session file: session.path (a leading
// ~ is the user's home), else <Home>/sessions.db.
func (s *Settings) SessionDBPath() string {
	if s.Session.Path != "" {
		return expandHome(s.Session.Path, filepath.Dir(s.Home))
	}
	return filepath.Join(s.Home, "sessions.db")
}

// AdminPolicyDirEnv overrides the system policy directories (for tests and
// packaging): when set, it is the one admin-tier directory agentry reads
// in place of /etc/agentry/policies and /etc/gemini-cli/policies, under
// the same ownership check.
const AdminPolicyDirEnv = "AGENTRY_ADMIN_POLICY_DIR"

// SystemPolicyDirs returns the admin-tier policy directories:
// /etc/agentry/policies and gemini-cli's /etc/gemini-cli/policies, or the
// directory AGENTRY_ADMIN_POLICY_DIR names.
func (s *Settings) SystemPolicyDirs() []string {
	if s.adminPolicyDir != "" {
		return []string{s.adminPolicyDir}
	}
	return []string{"/etc/agentry/policies", "/etc/gemini-cli/policies"}
}

// UserPolicyDirs returns the user-tier policy directories:
// ~/.gemini/policies (gemini-cli's) and ~/.agentry/policies.
func (s *Settings) UserPolicyDirs() []string {
	return []string{filepath.Join(filepath.Dir(s.Home), geminiDir, "policies"), filepath.Join(s.Home, "policies")}
}

// WorkspacePolicyDirs returns the workspace-tier policy directories,
// <workspace>/.gemini/policies and <workspace>/.agentry/policies; none
// when the workspace is the home directory, whose are the user's.
func (s *Settings) WorkspacePolicyDirs() []string {
	if resolvePath(s.Workspace) == resolvePath(filepath.Dir(s.Home)) {
		return nil
	}
	return []string{filepath.Join(s.Workspace, geminiDir, "policies"), filepath.Join(s.Workspace, ".agentry", "policies")}
}

// AutoSavedPolicyPath returns the file "always and save" answers are
// written to: <workspace>/.agentry/policies/auto-saved.toml in a trusted
// workspace, else <Home>/policies/auto-saved.toml.
func (s *Settings) AutoSavedPolicyPath() string {
	if dirs := s.WorkspacePolicyDirs(); s.Trusted && len(dirs) > 0 {
		return filepath.Join(dirs[1], "auto-saved.toml")
	}
	return filepath.Join(s.Home, "policies", "auto-saved.toml")
}

// UserSettingsPath returns the user settings file, <Home>/settings.json.
func (s *Settings) UserSettingsPath() string {
	return filepath.Join(s.Home, "settings.json")
}

// TempDir returns the per-workspace scratch directory,
// <Home>/tmp/<slug of the workspace name>. Load does not create it; the
// components that write there do, so that a read-only run leaves no trace.
func (s *Settings) TempDir() string {
	return filepath.Join(s.Home, "tmp", slug(filepath.Base(s.Workspace)))
}

// slug lower-cases name and replaces every character other than an ASCII
// letter or digit with '-', so the result is a safe directory name on every
// file system.
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// expandHome replaces a leading "~" or "~/" with userHome.
func expandHome(p, userHome string) string {
	if p == "~" {
		return userHome
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(userHome, rest)
	}
	return p
}

// within reports whether path is dir or lies below it. Both must be clean
// absolute paths.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolvePath makes p absolute and resolves symlinks when it exists, so
// that two spellings of one directory compare equal.
func resolvePath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
