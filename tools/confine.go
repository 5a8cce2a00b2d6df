package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// The file tools check a path with Workspace.Resolve, whose errors speak
// gemini-cli's language, and then open it with the functions below, which
// walk it again from the workspace root that contains it without letting
// any symlink lead out (internal/safefs). A symlink swapped in between the
// check and the use therefore makes the call fail instead of escaping.

// openFile opens abs, a path returned by Resolve, for reading, confined to
// its workspace root, and returns it with its FileInfo. It opens anything
// (a directory, a FIFO without blocking); callers check the kind.
func (w *Workspace) openFile(abs string) (*os.File, fs.FileInfo, error) {
	root := w.rootOf(abs)
	if root == "" {
		return nil, nil, w.outsideError(abs, abs)
	}
	f, err := safefs.OpenIn(root, abs, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, w.confineError(abs, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readFile reads the regular file abs, confined to its workspace root, if
// it holds at most limit bytes. Errors satisfy errors.Is with
// fs.ErrNotExist, safefs.ErrNotRegular and safefs.ErrTooLarge.
func (w *Workspace) readFile(abs string, limit int64) ([]byte, error) {
	root := w.rootOf(abs)
	if root == "" {
		return nil, w.outsideError(abs, abs)
	}
	b, err := safefs.ReadFileIn(root, abs, limit)
	if err != nil {
		return nil, w.confineError(abs, err)
	}
	return b, nil
}

// readDir lists the directory abs, confined to its workspace root, sorted
// by name.
func (w *Workspace) readDir(abs string) ([]fs.DirEntry, error) {
	f, fi, err := w.openFile(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: abs, Err: errors.New("not a directory")}
	}
	des, err := f.ReadDir(-1)
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	return des, err
}

// writeFile replaces abs, a path returned by Resolve, with data: atomically
// (a failed write leaves the old file intact), keeping an existing file's
// mode and owner, creating missing parent directories, and confined to the
// workspace root containing abs. Its error is the tool error to return.
func (w *Workspace) writeFile(abs string, data []byte) error {
	root := w.rootOf(abs)
	if root == "" {
		return w.outsideError(abs, abs)
	}
	err := safefs.WriteFileIn(root, abs, data, 0o644)
	if err == nil {
		return nil
	}
	if errors.Is(err, safefs.ErrEscapes) {
		return w.confineError(abs, err)
	}
	return writeError(abs, err)
}

// confineError turns safefs' refusal of a path that leads out of its root
// into the error Resolve gives for such a path; other errors pass through.
func (w *Workspace) confineError(abs string, err error) error {
	if !errors.Is(err, safefs.ErrEscapes) {
		return err
	}
	e := w.outsideError(abs, abs)
	e.Msg += " (a symbolic link on the path leads outside it)"
	e.Err = err
	return e
}

// readAllBounded reads f, whose size Stat reported as size, refusing more
// than limit bytes even if the file grew since.
func readAllBounded(f *os.File, size, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(min(size, limit)) + 1)
	if _, err := io.Copy(&buf, io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%s: %w (limit %d bytes)", f.Name(), safefs.ErrTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// warnings logs each distinct problem with a file agentry reads on its own
// initiative (an ignore file it had to skip) once, rather than on every
// call. It is safe for concurrent use.
type warnings struct {
	log  *slog.Logger // nil: slog.Default()
	mu   sync.Mutex
	seen map[string]bool
}

// warn logs msg about path and err, unless it did so already.
func (ws *warnings) warn(msg, path string, err error) {
	if ws == nil {
		return
	}
	key := msg + "\x00" + path + "\x00" + err.Error()
	ws.mu.Lock()
	if ws.seen == nil {
		ws.seen = map[string]bool{}
	}
	dup := ws.seen[key]
	ws.seen[key] = true
	log := ws.log
	ws.mu.Unlock()
	if dup {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Warn(msg, "path", path, "err", err)
}

// confinedDirs is the file system below one workspace root as walk sees
// it: every directory is opened beneath the root (never through a symlink
// leading out, never blocking should a FIFO be swapped in for it).
type confinedDirs struct{ root string }

func (c confinedDirs) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return safefs.OpenIn(c.root, filepath.FromSlash(name), os.O_RDONLY, 0)
}

func (c confinedDirs) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := c.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.(*os.File).ReadDir(-1)
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	return des, err
}
