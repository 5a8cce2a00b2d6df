//go:build unix

package childproc

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// TestCloseLeavesTheGroup: closing a guard stops its watchdog and nothing
// else; the group's processes are the caller's to end.
func TestCloseLeavesTheGroup(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done })

	g, err := Watch(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	watchdog := g.cmd.Process.Pid
	if pgid, err := syscall.Getpgid(watchdog); err != nil || pgid != cmd.Process.Pid {
		t.Fatalf("the watchdog is in group %d (%v), want %d", pgid, err, cmd.Process.Pid)
	}
	g.Close()
	g.Close() // idempotent
	if proctest.Running(watchdog) {
		t.Error("the watchdog outlived Close")
	}
	select {
	case <-done:
		t.Fatal("Close killed the group")
	default:
	}
	var nilGuard *Guard
	nilGuard.Close()
}

// TestWatchGoneGroup: there is nothing to watch in a group that is gone.
func TestWatchGoneGroup(t *testing.T) {
	cmd := exec.Command("true")
	Prepare(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if g, err := Watch(cmd.Process.Pid); err == nil {
		g.Close()
		t.Fatal("Watch of a reaped group succeeded")
	}
}
