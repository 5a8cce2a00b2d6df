package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/config"
)

// addWithin runs memory.Add and fails the test if it does not return.
func addWithin(t *testing.T, m memory, fact string) (string, error) {
	t.Helper()
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := m.Add(t.Context(), fact)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.path, r.err
	case <-time.After(60 * time.Second):
		t.Fatal("memory add blocked on the memory file for 60s")
		return "", nil
	}
}

func memoryIn(home string) memory {
	s := config.Defaults()
	s.Home = home
	return memory{ws: &workspaceSettings{base: &s}}
}

// TestMemoryAddRefusesHostileFile: a memory file that is a FIFO, a device
// or larger than 1 MiB is refused promptly, with the file and the reason,
// and left as it was.
func TestMemoryAddRefusesHostileFile(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero", "large"} {
		t.Run(kind, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, "AGENTRY.md")
			var err error
			want := "not a regular file"
			switch kind {
			case "fifo":
				err = syscall.Mkfifo(path, 0o600)
			case "devzero":
				err = os.Symlink("/dev/zero", path)
			case "large":
				err = os.WriteFile(path, []byte(strings.Repeat("x", 1<<20+1)), 0o600)
				want = "larger than 1 MiB"
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = addWithin(t, memoryIn(home), "a fact")
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Add = %v, want an error naming %s and %q", err, path, want)
			}
		})
	}
}

// TestMemoryAddWritesThroughSymlink: a memory file kept in a dotfile
// repository is updated there, atomically, and stays a symlink.
func TestMemoryAddWritesThroughSymlink(t *testing.T) {
	home, dotfiles := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "AGENTRY.md")
	if err := os.WriteFile(target, []byte("# Mine\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "AGENTRY.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	path, err := addWithin(t, memoryIn(home), "likes  tea")
	if err != nil || path != link {
		t.Fatalf("Add = %q, %v", path, err)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "# Mine\n\n## Added Memories\n- likes tea\n" {
		t.Fatalf("memory file = %q, %v", b, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v, %v", fi, err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after the write: %v, %v; want 0640 kept", fi, err)
	}
	ents, _ := os.ReadDir(dotfiles)
	if len(ents) != 1 {
		t.Errorf("files left next to the memory file: %v", ents)
	}
}
