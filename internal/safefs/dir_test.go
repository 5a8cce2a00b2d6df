package safefs_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/safefs"
)

func TestReadDirIn(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	write(t, filepath.Join(root, "d", "b"), "")
	write(t, filepath.Join(root, "d", "a"), "")
	write(t, filepath.Join(base, "out", "secret"), "")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "out"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ents, err := safefs.ReadDirIn(root, "d")
	if err != nil || len(ents) != 2 || ents[0].Name() != "a" || ents[1].Name() != "b" {
		t.Fatalf("ReadDirIn(d) = %v, %v", ents, err)
	}
	// A FIFO where a directory is expected: refused without blocking.
	for _, r := range []string{root, ""} {
		name := "fifo"
		if r == "" {
			name = filepath.Join(root, "fifo")
		}
		if _, err := safefs.ReadDirIn(r, name); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("ReadDirIn(%q, %q) = %v, want ENOTDIR", r, name, err)
		}
	}
	if _, err := safefs.ReadDirIn(root, "link"); !errors.Is(err, safefs.ErrEscapes) {
		t.Errorf("ReadDirIn(link to outside) = %v, want ErrEscapes", err)
	}
	// Outside any root, the user's symlinks are followed.
	if ents, err := safefs.ReadDirIn("", filepath.Join(root, "link")); err != nil || len(ents) != 1 {
		t.Errorf("ReadDirIn(\"\", link) = %v, %v", ents, err)
	}
}
