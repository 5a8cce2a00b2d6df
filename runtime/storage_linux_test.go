package runtime

import (
	"errors"
	"path/filepath"
	"testing"

	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/internal/fulldisk"
	"github.com/agentry-dev/agentry/sessions"
)

// TestSessionCreateOnFullDisk: a session store that opened but whose disk
// filled up before a new session could be written fails with a storage
// error, not a configuration one. Mounting the small tmpfs needs root (CI
// runs as root); elsewhere the test is skipped, except under CI=1.
func TestSessionCreateOnFullDisk(t *testing.T) {
	dir := fulldisk.Mount(t, t.TempDir(), "256k")
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fulldisk.Fill(t, dir)
	var svc session.Service = st
	_, _, err = EnsureSession(t.Context(), svc, "s1", dir, "", filepath.Join(dir, "t.jsonl"))
	if err == nil {
		t.Fatal("creating a session on a full disk succeeded")
	}
	if !StorageFailure(err) {
		t.Errorf("StorageFailure(%v) = false, want true", err)
	}
	if StorageFailure(errors.New("UNIQUE constraint failed")) {
		t.Error("StorageFailure of an ordinary error = true")
	}
}
