//go:build !unix

package safefs

import (
	"io/fs"
	"os"
)

const (
	o_NOCTTY   = 0
	o_NONBLOCK = 0
	o_CLOEXEC  = 0
)

// openBeneath opens rel beneath root with os.Root.
func openBeneath(root, rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return openRootFallback(root, rel, flag, perm)
}

func isEscape(err error) bool { return isEscapeText(err) }
