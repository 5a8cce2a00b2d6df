//go:build !unix

package companion

import (
	"fmt"
	"os"
)

// checkDir only checks that p is a directory: ownership is the ACLs'
// business on this system.
func checkDir(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: not a directory", errUnsafeDir)
	}
	return nil
}
