package safefs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/safefs"
)

func TestRefusal(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "big"), strings.Repeat("x", 2048))
	for _, tc := range []struct {
		name, want string
	}{
		{"fifo", "not a regular file (a FIFO, a device, a socket or a directory)"},
		{"out", "a symbolic link or path leading outside the workspace"},
		{"big", "larger than 1 KiB"},
		{"missing", ""},
	} {
		_, err := safefs.ReadFileIn(root, tc.name, 1024)
		if err == nil {
			t.Fatalf("ReadFileIn(%s) succeeded", tc.name)
		}
		if got := safefs.Refusal(err, 1024, "the workspace"); got != tc.want {
			t.Errorf("Refusal(%v) = %q, want %q", err, got, tc.want)
		}
	}
	if got := safefs.Refusal(errors.New("other"), 1, "x"); got != "" {
		t.Errorf("Refusal(other) = %q", got)
	}
	for n, want := range map[int64]string{1 << 20: "1 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := safefs.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
