package main

import (
	"testing"

	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/proctest"
)

type noEditor struct{}

func (noEditor) OpenDiff(string, string) error { return nil }
func (noEditor) CloseDiff(string)              {}

// TestIDEConnToAgentrysCompanion: the terminal's connection adapter
// against agentry's own companion over HTTP: enabled, it reports the
// companion's context and can diff; disabled, nothing; enabled again, its
// context numbers go past the first connection's.
func TestIDEConnToAgentrysCompanion(t *testing.T) {
	ws := t.TempDir()
	srv, err := companion.New(companion.Config{Workspace: []string{ws}, Editor: noEditor{}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ep := ide.Endpoint{Port: srv.Port(), Token: srv.Token(), Workspace: []string{ws}}
	conn := &ideConn{discover: func() (ide.Endpoint, error) { return ep, nil }}
	defer conn.Close()
	if st := conn.State(); st.Status != ideDisconnected || conn.CanDiff() {
		t.Fatalf("before Enable: %+v, CanDiff %v", st, conn.CanDiff())
	}
	if _, n := conn.Context(); n != 0 {
		t.Fatalf("context counter %d before any connection", n)
	}
	if err := conn.Enable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !conn.CanDiff() {
		t.Error("connected to agentry's companion, CanDiff is false")
	}
	file := idewire.File{Path: ws + "/main.go", Timestamp: 1, IsActive: true, Cursor: &idewire.Cursor{Line: 3, Character: 1}}
	srv.SetContext(idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: []idewire.File{file}}})
	first := waitContext(t, conn, 0)
	if st := conn.State(); st.Status != ideConnected || len(st.OpenFiles) != 1 || st.OpenFiles[0].Path != file.Path {
		t.Errorf("connected state %+v", st)
	}
	if err := conn.Disable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, n := conn.Context(); n != 0 || conn.CanDiff() {
		t.Fatalf("after Disable: counter %d, CanDiff %v", n, conn.CanDiff())
	}
	if st := conn.State(); st.Status != ideDisconnected || st.Detail != ideTextDisabled {
		t.Errorf("disabled state %+v", st)
	}
	if err := conn.Enable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if again := waitContext(t, conn, first); again <= first {
		t.Errorf("the second connection's context is numbered %d, not past the first's %d", again, first)
	}
}

// waitContext waits for a context numbered past after.
func waitContext(t *testing.T, conn *ideConn, after uint64) uint64 {
	t.Helper()
	var n uint64
	proctest.Eventually(t, "a context from the companion", func() bool {
		c, got := conn.Context()
		n = got
		return got > after && c.WorkspaceState != nil
	})
	return n
}
