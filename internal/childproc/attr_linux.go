//go:build linux

package childproc

import (
	"os/exec"
	"syscall"
)

// Prepare makes cmd lead a process group of its own, so that one signal
// reaches it and everything it starts, and asks the kernel to SIGKILL it
// when agentry dies.
//
// Linux sends the parent-death signal when the thread that started the
// child exits, not the process (https://go.dev/issue/27505). The Go
// runtime ends a thread only when a goroutine locked to it with
// runtime.LockOSThread returns without unlocking; agentry starts children
// only from goroutines that never lock their thread, so the thread lives
// as long as agentry does.
func Prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
