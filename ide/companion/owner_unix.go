//go:build unix

package companion

import (
	"fmt"
	"os"
	"syscall"
)

// checkDir refuses a directory owned by another user (root excepted) or
// writable by group or others.
func checkDir(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: not a directory", errUnsafeDir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := uint32(os.Getuid()); st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("%w: owned by uid %d, not by this user (uid %d)", errUnsafeDir, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: writable by others (mode %v)", errUnsafeDir, fi.Mode().Perm())
	}
	return nil
}
