//go:build unix && !linux

package safefs

import (
	"io/fs"
	"os"
	"syscall"
)

const (
	o_NOCTTY   = syscall.O_NOCTTY
	o_NONBLOCK = syscall.O_NONBLOCK
	o_CLOEXEC  = syscall.O_CLOEXEC
)

// openBeneath opens rel beneath root with os.Root, which walks the path one
// component at a time without following symlinks out of the root.
func openBeneath(root, rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return openRootFallback(root, rel, flag, perm)
}

func isEscape(err error) bool { return isEscapeText(err) }
