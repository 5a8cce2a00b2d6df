//go:build unix

package policy

import (
	"io/fs"
	"syscall"
)

func ownerUID(st fs.FileInfo) (uint32, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Uid, true
	}
	return 0, false
}

// unixMode is the st_mode node prints (file type bits included).
func unixMode(st fs.FileInfo) uint32 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint32(s.Mode)
	}
	return uint32(st.Mode().Perm())
}

// openNoFollow and openNonBlock are the open flags of a policy file read
// from a directory: a symbolic link swapped in is refused, and a FIFO
// swapped in is not waited on.
const (
	openNoFollow = syscall.O_NOFOLLOW
	openNonBlock = syscall.O_NONBLOCK
)
