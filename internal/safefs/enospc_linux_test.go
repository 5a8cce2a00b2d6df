package safefs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/fulldisk"
	"github.com/agentry-dev/agentry/internal/safefs"
)

// TestWriteFileInFullDisk overwrites a file on a full file system: the
// write fails and the original is intact.
func TestWriteFileInFullDisk(t *testing.T) {
	root := fulldisk.Mount(t, t.TempDir(), "64k")
	orig := []byte(strings.Repeat("original\n", 1000))
	p := filepath.Join(root, "main.go")
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	fulldisk.Fill(t, root)
	err := safefs.WriteFileIn(root, "main.go", bytes.Repeat([]byte("new\n"), 20000), 0o644)
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
