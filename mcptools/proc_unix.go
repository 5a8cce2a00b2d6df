//go:build unix

package mcptools

import "syscall"

// killProcessGroup sends SIGKILL to the process group led by pid. It is
// harmless when the group is already empty.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
