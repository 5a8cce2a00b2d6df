//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadPathsHostileFiles: a FIFO, a symbolic link and an oversized file
// in a policy directory are not waited on, followed or read whole; the
// good file beside them still loads.
func TestLoadPathsHostileFiles(t *testing.T) {
	dir := t.TempDir()
	good := "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\n"
	if err := os.WriteFile(filepath.Join(dir, "good.toml"), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.toml")); err != nil {
		t.Fatal(err)
	}
	big := "# " + strings.Repeat("x", MaxFileSize) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "big.toml"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	rules, errs := LoadPaths([]string{dir}, TierUser)
	if len(rules) != 1 || rules[0].ToolName != "glob" {
		t.Errorf("rules = %+v, want the good file's one rule", rules)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "big.toml") {
		t.Errorf("errors = %v, want one naming big.toml", errs)
	}
	// A FIFO named on the command line is not waited on either.
	if _, errs := LoadPaths([]string{filepath.Join(dir, "fifo.toml")}, TierUser); len(errs) != 0 {
		t.Errorf("a FIFO path: %v (want it skipped as not a regular file)", errs)
	}
}
