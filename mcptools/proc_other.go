//go:build !unix

package mcptools

// killProcessGroup does nothing where there are no Unix process groups.
func killProcessGroup(int) {}
