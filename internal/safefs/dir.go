package safefs

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// ReadDirIn lists the directory name beneath root, sorted by file name,
// as [os.ReadDir] does, without ever blocking: a FIFO or a device in the
// directory's place is opened without waiting and refused with
// syscall.ENOTDIR. With root "" the directory may be anywhere and symlinks
// are followed (the user's own directories); otherwise, as with [OpenIn],
// nothing on the way may lead outside root.
func ReadDirIn(root, name string) ([]fs.DirEntry, error) {
	var f *os.File
	var err error
	if root == "" {
		f, err = os.OpenFile(name, os.O_RDONLY|openFlags, 0)
	} else {
		f, err = OpenIn(root, name, os.O_RDONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
