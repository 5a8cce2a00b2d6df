package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullHome mounts a 64 KiB tmpfs as the home directory and fills it. It
// needs root (CI runs as root); elsewhere the test is skipped, except under
// CI=1, where it fails so that the check cannot quietly disappear.
func fullHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a small tmpfs (needs root): %v", err)
		}
		t.Skipf("mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	f.Close()
	return dir
}

// TestFullHomeIsAStorageError: with the home directory on a full disk,
// agentry run exits 56 (not 52, bad configuration) with a message naming
// the file it could not write and the cause.
func TestFullHomeIsAStorageError(t *testing.T) {
	for _, tc := range []struct {
		name, store, want string
	}{
		{"sqlite", "", "cannot write agentry's session store at %s/.agentry/sessions.db: no space left on device"},
		{"memory", "memory", "cannot write agentry's transcript at %s/.agentry/tmp/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.home = fullHome(t)
			if tc.store != "" {
				e.set("AGENTRY_SESSION_STORE=" + tc.store)
			}
			r := e.run("", "run", "-m", "replay:"+quickstart(), "-p", "hi")
			want := strings.ReplaceAll(tc.want, "%s", e.home)
			if r.code != 56 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "no space left on device") {
				t.Fatalf("exit %d, want 56 and %q; stderr:\n%s", r.code, want, r.stderr)
			}
			t.Logf("stderr: %s", r.stderr)
		})
	}
}
