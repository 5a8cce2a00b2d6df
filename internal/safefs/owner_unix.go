//go:build unix

package safefs

import (
	"io/fs"
	"syscall"
)

// owner returns a file's owner and group, or -1, -1.
func owner(fi fs.FileInfo) (int, int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}
