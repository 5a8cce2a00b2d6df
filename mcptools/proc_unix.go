//go:build unix

package mcptools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts a stdio server in a process group of its own, so
// that killProcessGroup reaches the children it starts and a signal meant
// for agentry's group (Ctrl-C) is not delivered to it behind the client's
// back.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to the process group led by pid. It is
// harmless when the group is already empty.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
