//go:build unix

package childproc

import (
	"os/exec"
	"syscall"
)

// Watch starts a watchdog in process group pgid (the group of a child set
// up by Prepare, whose process id is pgid) that SIGKILLs the group when
// agentry exits. Call it right after starting the child; Close the Guard
// when agentry has killed the group or means to leave it running. It fails
// when the group is already gone.
func Watch(pgid int) (*Guard, error) {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Dir = "/"
	cmd.Env = []string{} // nothing of agentry's environment
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	return start(cmd, pgid)
}
