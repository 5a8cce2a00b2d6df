//go:build !unix

package mcptools

import "os/exec"

// setProcessGroup does nothing where there are no Unix process groups; the
// transport's Close still kills the server itself.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup does nothing where there are no Unix process groups.
func killProcessGroup(int) {}
