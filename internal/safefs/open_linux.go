package safefs

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

const (
	o_NOCTTY   = unix.O_NOCTTY
	o_NONBLOCK = unix.O_NONBLOCK
	o_CLOEXEC  = unix.O_CLOEXEC
)

// openBeneath opens rel beneath root with openat2(2) and RESOLVE_BENEATH,
// so that resolving the path and opening it are one kernel operation. On a
// kernel without openat2 (before 5.6, or where a seccomp filter refuses it)
// it falls back to os.Root.
func openBeneath(root, rel string, flag int, perm fs.FileMode) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	how := unix.OpenHow{
		Flags:   uint64(flag),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&(os.O_CREATE|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(syscallMode(perm))
	}
	for {
		fd, err := unix.Openat2(dir, rel, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), joinName(root, rel)), nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			// EAGAIN: a rename raced the lookup; the kernel asks to retry.
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM) && !permissionDenied(dir, rel):
			return openRootFallback(root, rel, flag, perm)
		}
		return nil, &fs.PathError{Op: "open", Path: joinName(root, rel), Err: err}
	}
}

// permissionDenied tells a real EPERM (an O_NOATIME on someone else's file,
// say) from a seccomp filter refusing openat2 itself: the latter also
// refuses an openat2 of ".".
func permissionDenied(dir int, rel string) bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH}
	fd, err := unix.Openat2(dir, ".", &how)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// isEscape reports whether err is openat2's or os.Root's refusal of a path
// that leaves the root.
func isEscape(err error) bool {
	return errors.Is(err, unix.EXDEV) || isEscapeText(err)
}
