package safefs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// mountSmallTmpfs mounts a 64 KiB tmpfs for the test. It needs root (CI runs
// as root); elsewhere the test is skipped, except under CI=1, where it
// fails so that the check cannot quietly disappear.
func mountSmallTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a small tmpfs (needs root): %v", err)
		}
		t.Skipf("mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// TestWriteFileInFullDisk overwrites a file on a full file system: the
// write fails and the original is intact.
func TestWriteFileInFullDisk(t *testing.T) {
	root := mountSmallTmpfs(t)
	orig := []byte(strings.Repeat("original\n", 1000))
	p := filepath.Join(root, "main.go")
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	// Fill the rest of the disk.
	filler, err := os.Create(filepath.Join(root, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := filler.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	filler.Close()
	err = safefs.WriteFileIn(root, "main.go", bytes.Repeat([]byte("new\n"), 20000), 0o644)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("WriteFileIn on a full disk = %v, want ENOSPC", err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("original after a failed write: %d bytes, %v; want the %d original bytes", len(got), err, len(orig))
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 2 {
		t.Fatalf("directory after a failed write: %v, want main.go and filler only", ents)
	}
}
