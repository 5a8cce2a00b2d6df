//go:build !unix

package childproc

import "os/exec"

// Prepare does nothing where there are no Unix process groups.
func Prepare(*exec.Cmd) {}
