//go:build unix && !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// Prepare makes cmd lead a process group of its own, so that one signal
// reaches it and everything it starts. There is no parent-death signal
// here; the watchdog (Watch) is what ends the group with agentry.
func Prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
