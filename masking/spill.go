package masking

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A placeholder names its spill file, and the caller persists the
// placeholders as soon as Mask returns, replacing what was the only other
// copy of the output; so every file of a pass is complete before Mask
// returns, and a file is never truncated and rewritten in place.
//
// The files are not synced. The session store's SQLite runs with
// synchronous=NORMAL, which survives a crash of the process but may lose
// its newest transactions to a crash of the machine; the spill files give
// the same promise, and gemini-cli does not sync its spill files either.
// Syncing would cost a device flush per file (about 0.2 ms on a virtio
// disk, 200–300 ms for the ~1,000 files of a first pass over a long
// history) or a sync of the whole file system.

// mkdirSpill creates the spill directory dir and its parents, private to
// the user.
func mkdirSpill(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("masking: create spill directory: %w", err)
	}
	return nil
}

// writeSpill writes data to path, a file of a spill directory. Names are
// deterministic, so the file may exist already, left by an earlier pass
// over the same history (one whose placeholders were never stored, say):
// when it holds data, it is left alone; otherwise (another output under
// the same name) it is replaced by renaming a complete file over it,
// never truncated and rewritten in place. Besides keeping the file whole
// at every moment, that is faster: ext4 truncating a file it holds data
// for waits on the old blocks and writes the new data back at close.
func writeSpill(path string, data []byte) error {
	err := createFile(path, data)
	if errors.Is(err, fs.ErrExist) {
		var same bool
		if same, err = sameFile(path, data); err == nil && !same {
			err = replaceFile(path, data)
		}
	}
	if err != nil {
		return fmt.Errorf("masking: spill tool output: %w", err)
	}
	return nil
}

// replaceFile replaces path by a file holding data: it writes a temporary
// file beside it and renames it over path, so that path holds either its
// old content or data, whole. It is the rare path, and uses the os
// package.
func replaceFile(path string, data []byte) error {
	dir, name := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
