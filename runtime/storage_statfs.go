//go:build linux || darwin || freebsd || openbsd || netbsd

package runtime

import (
	"errors"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// errnoCause words the errno of a storage failure, "" when err carries
// none of them.
func errnoCause(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "no space left on device"
	case errors.Is(err, syscall.EDQUOT):
		return "disk quota exceeded"
	case errors.Is(err, syscall.EROFS):
		return "read-only file system"
	case errors.Is(err, syscall.EIO):
		return "input/output error"
	}
	return ""
}

// fileSystemFull reports whether the file system holding path (or its
// nearest existing parent) has no block left for an unprivileged writer.
func fileSystemFull(path string) bool {
	for dir := path; ; dir = filepath.Dir(dir) {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err == nil {
			return st.Bavail == 0
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}
