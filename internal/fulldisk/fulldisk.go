//go:build linux

// Package fulldisk gives tests a small, full file system: a tmpfs mounted
// for the test and a file filling it. Mounting needs root (CI runs as root,
// or in a user namespace in which it is); elsewhere a test using it is
// skipped, except under CI=1, where it fails so that the check cannot
// quietly disappear.
package fulldisk

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size (such as "64k") on the directory dir for the
// rest of the test, and returns dir.
func Mount(t testing.TB, dir, size string) string {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a small tmpfs (needs root): %v", err)
		}
		t.Skipf("mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	return dir
}

// Fill fills the file system holding dir with a file named "filler".
func Fill(t testing.TB, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			return
		}
	}
}
