package agents

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it does not return: reading a FIFO
// opened without O_NONBLOCK waits for a writer forever.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("blocked on a file for 60s")
	}
}

// TestReadFileRefusesFIFOAndDevices: a definition file that is a FIFO or
// a device is refused at once, with the reason.
func TestReadFileRefusesFIFOAndDevices(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.md")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{fifo, zero} {
		var err error
		within(t, func() { _, err = ReadFile(file) })
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadFile(%s) = %v, want a refusal naming the file", file, err)
		}
	}
}

// TestLoadRefusesHostileWorkspaceDefinitions: in a trusted workspace, a
// definition that is a FIFO, a symlink to /dev/zero or to a file outside,
// or a definitions directory that is a symlink to one outside, is refused
// with an error naming the file; nothing outside the workspace loads.
func TestLoadRefusesHostileWorkspaceDefinitions(t *testing.T) {
	ws, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "evil.md"), agent("evil", "from outside"))
	write(t, filepath.Join(outside, "agents", "far.md"), agent("far", "from outside"))
	dir := filepath.Join(ws, ".agentry", "agents")
	write(t, filepath.Join(dir, "ok.md"), agent("ok", "fine"))
	if err := syscall.Mkfifo(filepath.Join(dir, "x.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "agents"), filepath.Join(ws, ".gemini", "agents")); err != nil {
		t.Fatal(err)
	}
	// The user's definitions directory is a FIFO: listed without blocking.
	if err := os.MkdirAll(filepath.Join(home, ".agentry"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(home, ".agentry", "agents"), 0o644); err != nil {
		t.Fatal(err)
	}
	var defs []Definition
	var errs []error
	within(t, func() { defs, errs = Load(LoadConfig{Workspace: ws, Home: home, Trusted: true}) })
	if len(defs) != 1 || defs[0].Name != "ok" {
		t.Errorf("definitions %+v, want only ok", defs)
	}
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		filepath.Join(dir, "x.md") + ": not a regular file",
		filepath.Join(dir, "zero.md") + ": a symbolic link or path leading outside the workspace",
		filepath.Join(dir, "link.md") + ": a symbolic link or path leading outside the workspace",
		filepath.Join(ws, ".gemini", "agents") + ": cannot list the directory: a symbolic link or path leading outside the workspace",
		filepath.Join(home, ".agentry", "agents") + ": cannot list the directory",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("errors do not say %q:\n%s", want, all)
		}
	}
}

// TestLoadFollowsUserSymlinks: the user's own definitions may be symlinks
// to regular files anywhere (a dotfile repository).
func TestLoadFollowsUserSymlinks(t *testing.T) {
	home, dotfiles := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dotfiles, "mine.md"), agent("mine", "m"))
	dir := filepath.Join(home, ".agentry", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dotfiles, "mine.md"), filepath.Join(dir, "mine.md")); err != nil {
		t.Fatal(err)
	}
	defs, errs := Load(LoadConfig{Home: home})
	if len(defs) != 1 || defs[0].Name != "mine" || len(errs) != 0 {
		t.Errorf("Load = %+v, %v; want the symlinked definition", defs, errs)
	}
}
