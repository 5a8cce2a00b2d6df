//go:build unix

package ide

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// readDiscoveryFile reads a discovery file agentry may trust: a regular
// file, not a symbolic link (not followed), owned by uid and writable by
// nobody else, of at most limit bytes. It returns the content, or why the
// file is refused.
func readDiscoveryFile(path string, uid int, limit int64) ([]byte, string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, "a symbolic link: not followed"
	}
	if err != nil {
		return nil, fmt.Sprintf("cannot open: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Sprintf("cannot stat: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "not a regular file"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uid >= 0 && int(st.Uid) != uid {
		return nil, fmt.Sprintf("owned by uid %d, not by this user (uid %d)", st.Uid, uid)
	}
	if uid >= 0 && fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Sprintf("mode %04o: writable by group or others", fi.Mode().Perm())
	}
	if fi.Size() > limit {
		return nil, fmt.Sprintf("%d bytes: larger than %d", fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Sprintf("cannot read: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Sprintf("larger than %d bytes", limit)
	}
	return data, ""
}

// checkDir says why the discovery directory dir cannot be trusted to
// hold this user's files, or "": it must be a directory, not a symbolic
// link, owned by uid or by root, and not writable by others unless it is
// sticky (as /tmp is). A group-writable one is accepted: with a umask of
// 002 an editor's companion makes it so, and a group member's files are
// refused by their owner anyway.
func checkDir(dir string, uid int) string {
	if uid < 0 {
		return ""
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return ""
	case fi.Mode()&os.ModeSymlink != 0:
		return "is a symbolic link"
	case !fi.IsDir():
		return "is not a directory"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Sprintf("is owned by uid %d, not by this user (uid %d) or root", st.Uid, uid)
	}
	if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Sprintf("has mode %04o: anybody may replace its files", fi.Mode().Perm())
	}
	return ""
}

// alive reports whether pid is a process: kill(pid, 0) succeeds or is
// refused with EPERM (gemini-cli's isPidAlive).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
