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
