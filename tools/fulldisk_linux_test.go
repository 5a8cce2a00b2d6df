package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fulldisk"
)

// TestWritesOnFullDiskKeepOriginal overwrites a file through write_file and
// replace on a full file system: the call fails with NO_SPACE_LEFT and the
// original is intact, with its mode, and no temporary file is left behind.
func TestWritesOnFullDiskKeepOriginal(t *testing.T) {
	root := fulldisk.Mount(t, realDir(t), "64k")
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSet(Config{Workspace: ws, TempDir: realDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	orig := strings.Repeat("original line\n", 600) // 8400 bytes
	p := filepath.Join(root, "main.go")
	// setup writes the original and fills the rest of the disk.
	setup := func(t *testing.T) {
		t.Helper()
		os.Remove(filepath.Join(root, "filler"))
		if err := os.WriteFile(p, []byte(orig), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o640); err != nil {
			t.Fatal(err)
		}
		fulldisk.Fill(t, root)
	}
	big := strings.Repeat("new content line\n", 5000) // 85000 bytes: more than the disk

	check := func(t *testing.T, err error) {
		t.Helper()
		wantToolError(t, err, ErrNoSpaceLeft, p)
		got, rerr := os.ReadFile(p)
		if rerr != nil || string(got) != orig {
			t.Fatalf("original after a failed write: %d bytes, %v; want its %d bytes intact", len(got), rerr, len(orig))
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode after a failed write = %v, want 0640", fi.Mode().Perm())
		}
		ents, _ := os.ReadDir(root)
		if len(ents) != 2 {
			t.Errorf("directory after a failed write holds %v, want main.go and filler only", ents)
		}
	}
	t.Run("write_file", func(t *testing.T) {
		setup(t)
		_, err := run(t, s, "write_file", map[string]any{"file_path": "main.go", "content": big})
		check(t, err)
	})
	t.Run("replace", func(t *testing.T) {
		setup(t)
		_, err := run(t, s, "replace", map[string]any{
			"file_path": "main.go", "instruction": "grow it",
			"old_string": "original line\n", "new_string": big, "allow_multiple": true,
		})
		check(t, err)
	})
}
