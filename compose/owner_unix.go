//go:build unix

package compose

import (
	"os"
	"syscall"
)

// ownerUID returns the user id owning a file.
func ownerUID(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
