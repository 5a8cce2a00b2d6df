package masking

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteSpill: a new file is created private to the user; an existing
// file with the same content is left alone (not rewritten); one with other
// content, or a symbolic link, is replaced whole; no temporary file stays.
func TestWriteSpill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := mkdirSpill(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out.json")
	if err := writeSpill(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("spill file mode %o, want 600", perm)
	}

	// Same content: kept as it is, modification time included.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := writeSpill(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); !info.ModTime().Equal(old) {
		t.Errorf("an identical spill file was rewritten")
	}

	// Other content, shorter or longer: replaced.
	for _, want := range []string{"1st", "the first output, longer"} {
		if err := writeSpill(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("spill file holds %q, want %q", got, want)
		}
	}

	// A symbolic link is replaced, never followed.
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeSpill(link, []byte("keep")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink != 0 {
		t.Errorf("the link was not replaced by a file (%v)", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("the link's target was changed to %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("spill directory holds %d entries, want 2 (no temporary files)", len(entries))
	}
}
