package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileIn replaces the file name beneath root with data, atomically:
// the data goes to a temporary file in the same directory, is synced, and
// is renamed over the target, so that a reader sees the old content or the
// new, and a failure (a full disk, a crash) leaves the original intact. An
// existing file keeps its permission bits and, where the process may set
// them, its owner and group; a new file gets perm. Missing parent
// directories are created (mode 0o755). As with [OpenIn], nothing on the
// way may lead outside root.
func WriteFileIn(root, name string, data []byte, perm fs.FileMode) error {
	return writeIn(root, name, data, perm, false)
}

// WritePrivateIn is WriteFileIn for a file that agentry owns and only the
// user may read (a token, a cache, saved rules): the file is 0600 whatever
// it was before, missing parent directories are created 0700, and a
// symbolic link in the file's place is replaced by the file (never written
// through).
func WritePrivateIn(root, name string, data []byte) error {
	return writeIn(root, name, data, 0o600, true)
}

func writeIn(root, name string, data []byte, perm fs.FileMode, private bool) error {
	rel, err := relName(root, name)
	if err != nil {
		return err
	}
	if rel == "." {
		return &fs.PathError{Op: "write", Path: name, Err: ErrNotRegular}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	dirName, base := filepath.Split(rel)
	dirPerm := fs.FileMode(0o755)
	if private {
		dirPerm = 0o700
	}
	if dirName != "" {
		if err := r.MkdirAll(dirName, dirPerm); err != nil {
			return mapEscape(err)
		}
	} else {
		dirName = "."
	}
	// Every step below is relative to the directory's handle, so a symlink
	// swapped in for a parent directory cannot redirect the write.
	dir, err := r.OpenRoot(dirName)
	if err != nil {
		return mapEscape(err)
	}
	defer dir.Close()
	return replaceIn(dir, filepath.Join(root, rel), base, data, perm, private)
}

// replaceIn writes data to a temporary file in dir and renames it to base.
// A private file is written perm whatever base was, and replaces a
// symbolic link; otherwise an existing file's mode and owner are kept and
// a symbolic link is refused.
func replaceIn(dir *os.Root, full, base string, data []byte, perm fs.FileMode, private bool) error {
	mode := perm.Perm()
	uid, gid, existing := -1, -1, false
	if fi, err := dir.Lstat(base); err == nil {
		switch {
		case private && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0):
		case fi.Mode().IsRegular():
			mode, existing = fi.Mode().Perm(), true
			uid, gid = owner(fi)
		case fi.Mode()&fs.ModeSymlink != 0:
			// Replacing a symlink by a file would silently change what it
			// is; callers pass the resolved path of the file to write.
			return &fs.PathError{Op: "write", Path: full, Err: fmt.Errorf("%w: it is a symbolic link", ErrNotRegular)}
		default:
			return &fs.PathError{Op: "write", Path: full, Err: ErrNotRegular}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	createMode := mode // a new file: perm, less the umask
	if existing {
		createMode = 0o600 // Chmod below restores the original's bits
	}
	tmp, f, err := createTemp(dir, base, createMode)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return &fs.PathError{Op: "write", Path: full, Err: err}
	}
	if existing || private {
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if uid >= 0 {
		// Keeping another user's ownership needs privilege; without it the
		// file becomes ours, as with any editor that writes by rename.
		_ = f.Chown(uid, gid)
	}
	if err := f.Sync(); err != nil {
		return &fs.PathError{Op: "write", Path: full, Err: err}
	}
	if err := f.Close(); err != nil {
		return &fs.PathError{Op: "write", Path: full, Err: err}
	}
	if err := dir.Rename(tmp, base); err != nil {
		return err
	}
	ok = true
	syncDir(dir)
	return nil
}

// createTemp creates a new file next to base, named so that it is clearly
// agentry's and never collides.
func createTemp(dir *os.Root, base string, perm fs.FileMode) (string, *os.File, error) {
	for range 10 {
		var b [6]byte
		rand.Read(b[:])
		name := "." + base + ".agentry-" + hex.EncodeToString(b[:]) + ".tmp"
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|o_CLOEXEC, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, fmt.Errorf("create a temporary file next to %s: too many collisions", base)
}

// syncDir makes the rename durable; failures are ignored, as some file
// systems do not support syncing a directory.
func syncDir(dir *os.Root) {
	d, err := dir.Open(".")
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
