package runtime

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrStorage marks a failure to write agentry's own files — the session
// store, a transcript, the project's temporary directory — because of the
// storage under them: a full disk, a quota, a read-only file system, a
// failing device, missing permissions. It is not bad configuration: the
// CLI exits with ExitStorage.
var ErrStorage = errors.New("cannot write agentry's files")

// StorageError names the file agentry could not write, the cause and what
// to do. It matches ErrStorage.
type StorageError struct {
	// What names the file: "session store", "transcript", "temporary
	// directory".
	What string
	// Path is the file or directory.
	Path string
	// Hint says what the user can do besides fixing the storage itself.
	Hint string
	// Err is the underlying error.
	Err error
}

// Error reads "cannot write agentry's session store at PATH: no space left
// on device — free space there or …".
func (e *StorageError) Error() string {
	msg := fmt.Sprintf("cannot write agentry's %s at %s: %s", e.What, e.Path, storageCause(e.Path, e.Err))
	if e.Hint != "" {
		msg += " — " + e.Hint
	}
	return msg
}

// Is reports whether target is ErrStorage.
func (e *StorageError) Is(target error) bool { return target == ErrStorage }

// Unwrap returns the underlying error.
func (e *StorageError) Unwrap() error { return e.Err }

// storageCause words the cause of err for a user. SQLite reports a full
// disk as "database or disk is full" or "disk I/O error", without the
// errno; the file system's free space tells which it was.
func storageCause(path string, err error) string {
	if cause := errnoCause(err); cause != "" {
		return cause
	}
	if fileSystemFull(path) {
		return "no space left on device"
	}
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	return err.Error()
}

// SessionStoreHint is what to do about a session store that cannot be
// written.
const SessionStoreHint = "free space there, or set session.path (AGENTRY_SESSION_PATH) to another location, " +
	`or session.store (AGENTRY_SESSION_STORE) to "memory" to keep no sessions`

// HomeHint is what to do about agentry's other files under its home.
const HomeHint = "free space there: agentry keeps transcripts and temporary files under ~/.agentry"

// StorageFailure reports whether err comes from the storage under a file
// rather than from what was written: an errno of a full, read-only or
// failing file system, or SQLite's codes for the same (SQLITE_READONLY,
// SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN), which carry no errno.
func StorageFailure(err error) bool {
	if errnoCause(err) != "" {
		return true
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff { // the primary code of an extended one
		case 8, 10, 13, 14:
			return true
		}
	}
	return false
}
