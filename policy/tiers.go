package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ExtensionRules filters the rules an extension's policies/ directory
// contributes (loaded with LoadPaths at TierExtension), as gemini-cli does:
// allow rules and rules for yolo mode are dropped, and each Source names
// the extension ("Extension (<name>): <file>").
func ExtensionRules(extension string, rules []Rule) []Rule {
	var out []Rule
	for _, r := range rules {
		if r.Decision == Allow || slices.Contains(r.Modes, ModeYolo) {
			continue
		}
		if rest, ok := strings.CutPrefix(r.Source, "Extension: "); ok {
			r.Source = "Extension (" + extension + "): " + rest
		}
		out = append(out, r)
	}
	return out
}

// SystemDirWarning is gemini-cli's warning for a system policy directory
// that is not secure; its policies are skipped.
func SystemDirWarning(dir string, err error) string {
	return fmt.Sprintf("Security Warning: Skipping system policies from %s: %v", dir, err)
}

// CheckSystemDir reports whether a system (admin) policy directory may be
// trusted, as gemini-cli's isDirectorySecure does on POSIX systems: nil
// when it is missing, or a directory owned by root and writable by neither
// group nor others (a symbolic link to it owned by root too); otherwise an
// error with gemini-cli's reason (see SystemDirWarning).
func CheckSystemDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("Failed to access directory: %w", err)
	}
	if !st.IsDir() {
		return errors.New("Not a directory")
	}
	if lst, err := os.Lstat(dir); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		if uid, ok := ownerUID(lst); ok && uid != 0 {
			return fmt.Errorf("Symlink '%s' is not owned by root (uid 0). Current uid: %d. To fix this, run: sudo chown -h root:root \"%s\"", dir, uid, dir)
		}
	}
	if uid, ok := ownerUID(st); ok && uid != 0 {
		return fmt.Errorf("Directory '%s' is not owned by root (uid 0). Current uid: %d. To fix this, run: sudo chown root:root \"%s\"", dir, uid, dir)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("Directory '%s' is writable by group or others (mode: %o). To fix this, run: sudo chmod g-w,o-w \"%s\"", dir, unixMode(st), dir)
	}
	return nil
}
