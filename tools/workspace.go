package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinkHops bounds symlink resolution, like the kernel's ELOOP limit.
const maxSymlinkHops = 255

// Workspace is the set of directories the file and shell tools may touch:
// a primary root, against which relative paths resolve, and optional extra
// roots (settings' includeDirectories). Every root is stored as an absolute,
// symlink-resolved path, and every path a tool touches is resolved the same
// way before it is checked, so a symlink inside the workspace cannot lead a
// tool outside it. The tools open files through the workspace too, confined
// to the root that contains them, so that a symlink swapped in after the
// check cannot lead them out either. A Workspace is immutable and safe for
// concurrent use.
type Workspace struct {
	roots    []string
	warnings *warnings // about ignore files that had to be skipped
}

// NewWorkspace returns a workspace whose primary root is root and whose
// other roots are extra. Each root must exist and be a directory; relative
// roots are taken relative to the process's working directory.
func NewWorkspace(root string, extra ...string) (*Workspace, error) {
	ws := &Workspace{warnings: &warnings{}}
	for _, r := range append([]string{root}, extra...) {
		if r == "" {
			return nil, errors.New("workspace root is empty")
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", r, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", r, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("workspace root %q is not a directory", r)
		}
		dup := false
		for _, have := range ws.roots {
			if have == real {
				dup = true
				break
			}
		}
		if !dup {
			ws.roots = append(ws.roots, real)
		}
	}
	return ws, nil
}

// Roots returns the workspace roots, the primary one first.
func (w *Workspace) Roots() []string {
	return append([]string(nil), w.roots...)
}

// Root returns the primary root.
func (w *Workspace) Root() string { return w.roots[0] }

// Contains reports whether the absolute path abs lies inside one of the
// roots (a root itself included). It compares paths lexically: pass a path
// returned by Resolve.
func (w *Workspace) Contains(abs string) bool {
	return w.rootOf(abs) != ""
}

// rootOf returns the root that contains abs, or "".
func (w *Workspace) rootOf(abs string) string {
	abs = filepath.Clean(abs)
	for _, r := range w.roots {
		if withinDir(abs, r) {
			return r
		}
	}
	return ""
}

// withinDir reports whether p is dir or lies beneath it; both are clean and
// absolute.
func withinDir(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Resolve turns a path given by the model into the absolute, real path a
// tool may use. Relative paths resolve against the primary root; "~" is not
// expanded (a file may be called "~"). Symlinks are followed the way the
// kernel would follow them, component by component; for a path that does
// not exist yet, its longest existing prefix is resolved and the rest
// appended, so a write through a symlinked parent directory, or through a
// dangling symlink, is checked against its real target. A path that ends up
// outside every root is an *Error of type ErrPathNotInWorkspace.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", Errorf(ErrInvalidParams, "Invalid path %q: paths must not contain NUL bytes.", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		// Join without Clean: ".." after a symlink must climb from the
		// link's target, as the kernel would, not lexically.
		abs = w.Root() + string(filepath.Separator) + p
	}
	real, err := resolveReal(abs)
	if err != nil {
		return "", &Error{
			Type: ErrInvalidParams,
			Msg:  fmt.Sprintf("Failed to resolve path %q: %v", p, err),
			Err:  err,
		}
	}
	if !w.Contains(real) {
		return "", w.outsideError(filepath.Clean(abs), real)
	}
	return real, nil
}

// resolveFileArg resolves a file path given to read_file, write_file or
// replace. Models sometimes write paths in the CLI's "@path" reference
// syntax; as in gemini-cli, a leading "@" is dropped unless a path with it
// literally exists (npm scopes such as "@types" are real directories).
func (w *Workspace) resolveFileArg(p string) (string, error) {
	if len(p) > 1 && p[0] == '@' {
		if _, err := os.Lstat(w.lexical(p)); err != nil {
			stripped := strings.TrimLeft(p[1:], "/")
			first, _, _ := strings.Cut(stripped, "/")
			_, ferr := os.Lstat(w.lexical("@" + first))
			if stripped != "" && (p[1] == '/' || ferr != nil) {
				p = stripped
			}
		}
	}
	return w.Resolve(p)
}

// lexical joins a relative path to the primary root without resolving
// anything.
func (w *Workspace) lexical(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(w.Root(), p)
}

// outsideError is the error for a path that resolves outside the roots,
// with gemini-cli's wording so that models trained on it recognise it.
func (w *Workspace) outsideError(requested, real string) *Error {
	target := ""
	if real != requested {
		target = fmt.Sprintf(" (it resolves to %q)", real)
	}
	return Errorf(ErrPathNotInWorkspace,
		"Path not in workspace: Attempted path %q%s resolves outside the allowed workspace directories: %s. Use a path inside one of these directories.",
		requested, target, strings.Join(w.roots, ", "))
}

// resolveReal resolves every symlink in the absolute path p. Components that
// do not exist are appended lexically: nothing that does not exist can be a
// symlink, so the result names what a later create would create.
func resolveReal(p string) (string, error) {
	pending := splitPath(p)
	resolved := string(filepath.Separator)
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			// resolved is already real, so its parent is the real parent.
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || isNotDir(err) {
				// Nothing below here exists (or can be inspected), so the
				// rest cannot contain symlinks we could follow; what the
				// kernel will do with it is decided lexically.
				rest := filepath.Join(append([]string{next}, pending...)...)
				return filepath.Clean(rest), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// display returns abs relative to the primary root when it lies inside it,
// else abs itself, with forward slashes: the form gemini-cli shows paths in.
func (w *Workspace) display(abs string) string {
	if rel, ok := w.relTo(w.Root(), abs); ok {
		return rel
	}
	return abs
}

// relTo returns abs relative to dir if abs lies within dir.
func (w *Workspace) relTo(dir, abs string) (string, bool) {
	if !withinDir(abs, dir) {
		return "", false
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
