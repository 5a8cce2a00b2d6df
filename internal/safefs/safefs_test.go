package safefs_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/safefs"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFileInRefusesFIFOWithoutBlocking(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without O_NONBLOCK this open would wait for a writer forever.
	_, err := safefs.ReadFileIn(root, ".gitignore", 1<<20)
	if !errors.Is(err, safefs.ErrNotRegular) {
		t.Fatalf("ReadFileIn(FIFO) = %v, want ErrNotRegular", err)
	}
	_, err = safefs.ReadFile(filepath.Join(root, ".gitignore"), 1<<20)
	if !errors.Is(err, safefs.ErrNotRegular) {
		t.Fatalf("ReadFile(FIFO) = %v, want ErrNotRegular", err)
	}
}

func TestReadRefusesDevices(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(root, "settings.json")); err != nil {
		t.Fatal(err)
	}
	// Inside a root, the absolute symlink is not followed at all.
	if _, err := safefs.ReadFileIn(root, "settings.json", 1<<20); !errors.Is(err, safefs.ErrEscapes) {
		t.Fatalf("ReadFileIn(link to /dev/zero) = %v, want ErrEscapes", err)
	}
	// Outside any root (the user's own files), it is followed but /dev/zero
	// is not a regular file, so nothing is read.
	if _, err := safefs.ReadFile(filepath.Join(root, "settings.json"), 1<<20); !errors.Is(err, safefs.ErrNotRegular) {
		t.Fatalf("ReadFile(/dev/zero) = %v, want ErrNotRegular", err)
	}
	if _, err := safefs.ReadFileIn(root, ".", 1<<20); !errors.Is(err, safefs.ErrNotRegular) {
		t.Fatalf("ReadFileIn(dir) = %v, want ErrNotRegular", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "big"), strings.Repeat("x", 101))
	write(t, filepath.Join(root, "fits"), strings.Repeat("x", 100))
	if _, err := safefs.ReadFileIn(root, "big", 100); !errors.Is(err, safefs.ErrTooLarge) {
		t.Fatalf("ReadFileIn(101 bytes, limit 100) = %v, want ErrTooLarge", err)
	}
	if _, err := safefs.ReadFile(filepath.Join(root, "big"), 100); !errors.Is(err, safefs.ErrTooLarge) {
		t.Fatalf("ReadFile(101 bytes, limit 100) = %v, want ErrTooLarge", err)
	}
	b, err := safefs.ReadFileIn(root, "fits", 100)
	if err != nil || len(b) != 100 {
		t.Fatalf("ReadFileIn(100 bytes, limit 100) = %d bytes, %v", len(b), err)
	}
	// A file that reports no size (procfs) is still bounded by the read.
	if _, err := safefs.ReadFile("/proc/self/maps", 10); !errors.Is(err, safefs.ErrTooLarge) {
		t.Fatalf("ReadFile(/proc/self/maps, limit 10) = %v, want ErrTooLarge", err)
	}
}

func TestOpenInConfinement(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	write(t, filepath.Join(root, "a", "in.txt"), "inside")
	write(t, filepath.Join(base, "secret"), "outside")
	for _, l := range []struct{ name, target string }{
		{"rel-out", "../secret"},
		{"abs-out", filepath.Join(base, "secret")},
		{"abs-in", filepath.Join(root, "a", "in.txt")},
		{"rel-in", "a/in.txt"},
		{"dir-out", ".."},
	} {
		if err := os.Symlink(l.target, filepath.Join(root, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		want    string
		escapes bool
	}{
		{"a/in.txt", "inside", false},
		{filepath.Join(root, "a", "in.txt"), "inside", false},
		{"rel-in", "inside", false},
		{"a/../a/in.txt", "inside", false},
		{"rel-out", "", true},
		{"abs-out", "", true},
		// Absolute symlinks are refused even when they point inside.
		{"abs-in", "", true},
		{"dir-out/secret", "", true},
		{"../secret", "", true},
		{filepath.Join(base, "secret"), "", true},
	} {
		b, err := safefs.ReadFileIn(root, tc.name, 1<<20)
		if tc.escapes {
			if !errors.Is(err, safefs.ErrEscapes) {
				t.Errorf("ReadFileIn(%q) = %q, %v; want ErrEscapes", tc.name, b, err)
			}
			continue
		}
		if err != nil || string(b) != tc.want {
			t.Errorf("ReadFileIn(%q) = %q, %v; want %q", tc.name, b, err, tc.want)
		}
	}
	if _, err := safefs.ReadFileIn(root, "missing", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFileIn(missing) = %v, want fs.ErrNotExist", err)
	}
}

// TestOpenInSymlinkRace swaps a directory for a symlink to the outside while
// readers and writers go through it: the kernel's check and the open are one
// operation, so nothing outside is ever read or written.
func TestOpenInSymlinkRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	write(t, filepath.Join(outside, "f.txt"), "outside")
	write(t, filepath.Join(root, "real", "f.txt"), "inside")
	link := filepath.Join(root, "d")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(root, "swap")
			target := "real"
			if i%2 == 1 {
				target = outside
			}
			os.Remove(tmp)
			if err := os.Symlink(target, tmp); err != nil {
				continue
			}
			os.Rename(tmp, link)
		}
	}()
	var reads, writes int
	for i := 0; i < 400; i++ {
		if b, err := safefs.ReadFileIn(root, "d/f.txt", 1<<20); err == nil {
			reads++
			if !bytes.Equal(b, []byte("inside")) && !bytes.HasPrefix(b, []byte("w")) {
				t.Fatalf("read %q through a swapped symlink", b)
			}
		}
		if err := safefs.WriteFileIn(root, "d/f.txt", []byte("w"), 0o644); err == nil {
			writes++
		}
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(outside, "f.txt")); string(b) != "outside" {
		t.Fatalf("file outside the root was written: %q", b)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		t.Fatalf("files created outside the root: %v", ents)
	}
	t.Logf("%d reads and %d writes succeeded inside, none outside", reads, writes)
}

func TestWriteFileInKeepsModeAndCreatesDirs(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.sh")
	write(t, p, "old")
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := safefs.WriteFileIn(root, "run.sh", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("mode after rewrite = %v, want 0751", fi.Mode().Perm())
	}
	if err := safefs.WriteFileIn(root, "x/y/z.txt", []byte("deep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "x/y/z.txt")); string(b) != "deep" {
		t.Errorf("new file = %q", b)
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if err := safefs.WriteFileIn(root, "../escape.txt", []byte("x"), 0o644); !errors.Is(err, safefs.ErrEscapes) {
		t.Errorf("WriteFileIn(../escape.txt) = %v, want ErrEscapes", err)
	}
}

// TestWritePrivateIn: a private file is 0600 whatever it was, its new
// directories 0700; a symbolic link in its place is replaced, and what it
// pointed to is left as it was; a directory in its place and a path
// leading outside the root are refused.
func TestWritePrivateIn(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "token.json")
	write(t, p, "old")
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := safefs.WritePrivateIn(root, "token.json", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten file: %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if err := safefs.WritePrivateIn(root, "a/b/c.json", []byte("deep")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "a/b"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("directory %s: %v, %v; want 0700", d, fi.Mode().Perm(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "a/b/c.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	write(t, elsewhere, "theirs")
	link := filepath.Join(root, "link.json")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if err := safefs.WritePrivateIn(root, "link.json", []byte("ours")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v", err)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != "theirs" {
		t.Errorf("written through the link: %q", b)
	}
	if err := os.Mkdir(filepath.Join(root, "dir.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := safefs.WritePrivateIn(root, "dir.json", []byte("x")); !errors.Is(err, safefs.ErrNotRegular) {
		t.Errorf("over a directory: %v, want ErrNotRegular", err)
	}
	if err := safefs.WritePrivateIn(root, "../escape.json", []byte("x")); !errors.Is(err, safefs.ErrEscapes) {
		t.Errorf("../escape.json: %v, want ErrEscapes", err)
	}
}
