package atpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/atpath"
	"github.com/agentry-dev/agentry/tools"
)

// TestExpandRefusesFIFOsAndDevices: a reference to a FIFO (or a device,
// through a symlink) is refused at once with the reason, never read.
func TestExpandRefusesFIFOsAndDevices(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.txt")); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prompt string
		is     error
		msg    string
	}{
		{"read @pipe.txt", atpath.ErrNotRegular, "@pipe.txt: not a regular file or directory (a FIFO, a device or a socket) (write \\@ for a literal @)"},
		{"read @zero.txt", atpath.ErrOutside, ""},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := atpath.Expand(t.Context(), ws, tc.prompt)
			done <- err
		}()
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("Expand(%q) blocked for 60s", tc.prompt)
		}
		var re *atpath.RefError
		if !errors.Is(err, tc.is) || !errors.As(err, &re) {
			t.Fatalf("Expand(%q) error = %v, want %v", tc.prompt, err, tc.is)
		}
		if tc.msg != "" && err.Error() != tc.msg {
			t.Errorf("message = %q, want %q", err.Error(), tc.msg)
		}
	}
}
