// Package safefs opens, reads and writes files the way agentry must treat
// anything that lives in a workspace it does not control: confined beneath
// a root without a window between the check and the use, never blocking on
// a FIFO or a device, bounded in size, and replaced atomically on write.
//
// Confinement is done by the kernel where it can be: on Linux with
// openat2(2) and RESOLVE_BENEATH, elsewhere (and on kernels without
// openat2) with [os.Root], which walks the path one component at a time
// with O_NOFOLLOW. Either way symlinks are followed only while they stay
// beneath the root, and absolute symlinks are refused.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Errors a caller can test for with [errors.Is].
var (
	// ErrNotRegular: the path names a directory, FIFO, device or socket
	// where a regular file was expected.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the caller's limit.
	ErrTooLarge = errors.New("file too large")
	// ErrEscapes: the path, or a symlink on it, leads outside the root.
	ErrEscapes = errors.New("path leads outside its root")
)

// openFlags are added to every open: no controlling terminal from a device,
// no fd leak to children, and no blocking in open(2) on a FIFO (a reader
// would otherwise wait forever for a writer, deaf to signals).
const openFlags = o_NOCTTY | o_NONBLOCK | o_CLOEXEC

// ReadFile reads the regular file at path, following symlinks, and returns
// at most limit bytes. It is for files outside any workspace (the user's
// own settings); a FIFO, device or directory is [ErrNotRegular] and a
// longer file [ErrTooLarge]. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, path, limit)
}

// ReadFileIn reads the regular file name beneath root, at most limit bytes.
// name may be relative to root or an absolute path inside it.
func ReadFileIn(root, name string, limit int64) ([]byte, error) {
	f, err := OpenIn(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, f.Name(), limit)
}

// OpenRegularIn opens name beneath root for reading and checks that it is a
// regular file, so that the caller may read it knowing it cannot block.
func OpenRegularIn(root, name string) (*os.File, fs.FileInfo, error) {
	f, err := OpenIn(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: f.Name(), Err: ErrNotRegular}
	}
	return f, fi, nil
}

// OpenIn opens name beneath root with the given flags (os.O_RDONLY,
// os.O_WRONLY|os.O_CREATE, …). Every component of name, and every symlink
// met on the way, must stay beneath root; otherwise the error satisfies
// errors.Is(err, ErrEscapes). A FIFO opens without blocking.
func OpenIn(root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	rel, err := relName(root, name)
	if err != nil {
		return nil, err
	}
	f, err := openBeneath(root, rel, flag|openFlags, perm)
	if err != nil {
		return nil, mapEscape(err)
	}
	return f, nil
}

// readRegular checks that f is a regular file and reads at most limit
// bytes of it.
func readRegular(f *os.File, name string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	if fi.Size() > limit {
		return nil, tooLarge(name, limit)
	}
	// The size can grow after the Stat (and /proc files report 0), so the
	// read itself is bounded too.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(name, limit)
	}
	return b, nil
}

func tooLarge(name string, limit int64) error {
	return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (limit %d bytes)", ErrTooLarge, limit)}
}

// relName turns name into a clean path relative to root. An absolute name
// must lie lexically inside root; a relative one may not climb out of it.
func relName(root, name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", &fs.PathError{Op: "open", Path: name, Err: errors.New("path contains a NUL byte")}
	}
	rel := name
	if filepath.IsAbs(name) {
		r, err := filepath.Rel(filepath.Clean(root), filepath.Clean(name))
		if err != nil {
			return "", &fs.PathError{Op: "open", Path: name, Err: ErrEscapes}
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", &fs.PathError{Op: "open", Path: name, Err: ErrEscapes}
	}
	return rel, nil
}

// mapEscape makes the escape errors of openat2 and os.Root satisfy
// errors.Is(err, ErrEscapes).
func mapEscape(err error) error {
	if err == nil || errors.Is(err, ErrEscapes) {
		return err
	}
	if isEscape(err) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			// The kernel's EXDEV ("invalid cross-device link") would only
			// confuse; the cause stays reachable through errors.Is.
			return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: escapeError{pe.Err}}
		}
		return fmt.Errorf("%w: %w", ErrEscapes, err)
	}
	return err
}

// rootEscapeText is os.Root's error text for a path that leaves the root;
// os does not export the error value.
const rootEscapeText = "path escapes from parent"

func isEscapeText(err error) bool {
	return strings.Contains(err.Error(), rootEscapeText)
}

// openRootFallback opens rel beneath root with os.Root.
func openRootFallback(root, rel string, flag int, perm fs.FileMode) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(rel, flag, perm)
}

func joinName(root, rel string) string { return filepath.Join(root, rel) }

func syscallMode(perm fs.FileMode) uint32 { return uint32(perm.Perm()) }

// escapeError reads as ErrEscapes and wraps the kernel's or os.Root's own
// error.
type escapeError struct{ cause error }

func (e escapeError) Error() string        { return ErrEscapes.Error() }
func (e escapeError) Is(target error) bool { return target == ErrEscapes }
func (e escapeError) Unwrap() error        { return e.cause }
