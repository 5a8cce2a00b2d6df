package e2e

import (
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fulldisk"
)

// fullHome mounts a 64 KiB tmpfs as the home directory and fills it.
func fullHome(t *testing.T) string {
	t.Helper()
	dir := fulldisk.Mount(t, t.TempDir(), "64k")
	fulldisk.Fill(t, dir)
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
