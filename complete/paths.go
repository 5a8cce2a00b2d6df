package complete

import (
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentry-dev/agentry/internal/safefs"
	"github.com/agentry-dev/agentry/tools"
)

// Defaults of Options.
const (
	// DefaultMaxResults is gemini-cli's maxResults.
	DefaultMaxResults = 50
	// DefaultMaxEntries bounds the directory entries one completion
	// reads, over every directory it lists.
	DefaultMaxEntries = 20000
	// DefaultMaxDepth is gemini-cli's maxDepth for the recursive search.
	DefaultMaxDepth = 10
)

// readBatch is how many entries one read of a directory takes at most.
const readBatch = 256

// Options bound path completion.
type Options struct {
	// MaxResults bounds the suggestions; zero is DefaultMaxResults.
	MaxResults int
	// MaxEntries bounds the directory entries read in all; zero is
	// DefaultMaxEntries. A directory larger than what is left is read in
	// part: its suggestions are those among the entries read.
	MaxEntries int
	// MaxDepth bounds how deep the recursive search goes below a root;
	// zero is DefaultMaxDepth.
	MaxDepth int
	// NoRecursive turns the recursive search off (gemini-cli's
	// enableRecursiveFileSearch false): a name without a slash is then
	// completed in the workspace root only.
	NoRecursive bool
}

func (o Options) withDefaults() Options {
	if o.MaxResults <= 0 {
		o.MaxResults = DefaultMaxResults
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	return o
}

// Paths completes partial, the path after an "@" (unescaped, as
// Token.Path gives it), in the workspace ws. With a slash in it, or when
// it is empty, the entries of the directory it names whose names start
// with what follows the last slash are suggested; a name without a slash
// is searched for at every depth, breadth first. Names match by prefix,
// ignoring case; entries starting with "." only when the name typed does,
// and the search never enters dot directories or node_modules.
//
// Paths in the primary root are relative to it, those in other roots
// absolute; directories end in "/". Nothing the ignore files exclude is
// suggested, nor anything outside the workspace: no "..", no symlink
// leading out, no FIFO, device or socket (a symlink is suggested for what
// it leads to, and never followed into by the search). Suggestions are
// ordered as gemini-cli orders them: shallower first, directories first,
// then by name.
func Paths(ctx context.Context, ws *tools.Workspace, partial string, opts Options) ([]Suggestion, error) {
	s := &search{ctx: ctx, ws: ws, opts: opts.withDefaults(), ignorers: map[string]*tools.Ignorer{}}
	err := s.run(partial)
	slices.SortFunc(s.found, compareFound)
	if len(s.found) > s.opts.MaxResults {
		s.found = s.found[:s.opts.MaxResults]
	}
	out := make([]Suggestion, len(s.found))
	for i, f := range s.found {
		out[i] = Suggestion{Label: f.label, Value: Escape(f.label)}
	}
	return out, err
}

// found is one path suggested.
type found struct {
	label string // ending in "/" for a directory
	depth int    // directories between its root and it
}

// search is one path completion.
type search struct {
	ctx      context.Context
	ws       *tools.Workspace
	opts     Options
	ignorers map[string]*tools.Ignorer // by root
	read     int                       // directory entries read
	found    []found
}

func (s *search) run(partial string) error {
	if partial == "" {
		return s.listDir("", "")
	}
	if strings.ContainsAny(partial, "\x00\n\r") {
		return nil
	}
	for _, c := range strings.Split(filepath.ToSlash(partial), "/") {
		if c == ".." {
			return nil // completion never climbs
		}
	}
	slash := strings.LastIndexByte(partial, '/')
	if slash < 0 && !s.opts.NoRecursive {
		return s.recursive(partial)
	}
	return s.listDir(partial[:slash+1], partial[slash+1:])
}

// listDir suggests the entries of the directory dir (as typed, ending in
// "/", or "" for the roots) whose names start with prefix.
func (s *search) listDir(dir, prefix string) error {
	roots := s.ws.Roots()
	if filepath.IsAbs(dir) {
		roots = nil // the absolute directory is looked up as it is
		if s.ws.Contains(filepath.Clean(dir)) {
			roots = []string{""}
		}
	}
	for i, root := range roots {
		lexical := filepath.Join(root, filepath.FromSlash(dir))
		real, err := s.ws.Resolve(lexical)
		if err != nil {
			continue // outside the workspace, or unresolvable
		}
		labelDir := dir
		if root != "" && i > 0 {
			labelDir = filepath.ToSlash(lexical) + "/"
		}
		depth := strings.Count(dir, "/")
		if root == "" {
			if r := s.rootOf(filepath.Clean(dir)); r != "" {
				depth = strings.Count(filepath.ToSlash(strings.TrimPrefix(filepath.Clean(dir), r)), "/")
			}
		}
		err = s.entries(real, func(name, abs string, isDir bool) {
			if matches(name, prefix) {
				s.add(labelDir+name, depth, isDir)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// recursive suggests everything at most MaxDepth below each root whose
// name starts with prefix, breadth first.
func (s *search) recursive(prefix string) error {
	for i, root := range s.ws.Roots() {
		type dir struct {
			abs, label string // label: "" or ending in "/"
			depth      int
		}
		queue := []dir{{abs: root, label: rootLabel(root, i), depth: 0}}
		for len(queue) > 0 && len(s.found) < s.opts.MaxResults {
			d := queue[0]
			queue = queue[1:]
			err := s.entries(d.abs, func(name, abs string, isDir bool) {
				if matches(name, prefix) {
					s.add(d.label+name, d.depth, isDir)
				}
				if isDir && d.depth < s.opts.MaxDepth && !strings.HasPrefix(name, ".") && name != "node_modules" && abs != "" {
					queue = append(queue, dir{abs: abs, label: d.label + name + "/", depth: d.depth + 1})
				}
			})
			if err != nil {
				return err
			}
			if s.read >= s.opts.MaxEntries {
				return nil
			}
		}
	}
	return nil
}

// rootLabel is the label prefix of the paths in root, the i-th root.
func rootLabel(root string, i int) string {
	if i == 0 {
		return ""
	}
	return filepath.ToSlash(root) + "/"
}

func (s *search) add(label string, depth int, isDir bool) {
	if isDir {
		label += "/"
	}
	s.found = append(s.found, found{label, depth})
}

// matches reports whether name is suggested for prefix: it starts with
// it, ignoring case, and dot names only for a prefix starting with ".".
func matches(name, prefix string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".") {
		return false
	}
	return len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix)
}

// entries calls fn for each entry of the directory real (a resolved path
// in the workspace) that completion may suggest: not excluded by the
// ignore files, not a name @path could not carry, and a directory or a
// regular file, itself or at the end of a symlink that stays inside the
// workspace. abs is the entry's path for a real directory the search may
// enter, "" for a symlink. It reads at most what is left of MaxEntries.
func (s *search) entries(real string, fn func(name, abs string, isDir bool)) error {
	root := s.rootOf(real)
	if root == "" {
		return nil
	}
	f, err := safefs.OpenIn(root, real, os.O_RDONLY, 0)
	if err != nil {
		return nil // gone, unreadable, or swapped for a way out: nothing to suggest
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil
	}
	ign := s.ignorer(root)
	for s.read < s.opts.MaxEntries {
		if err := s.ctx.Err(); err != nil {
			return context.Cause(s.ctx)
		}
		batch, err := f.ReadDir(min(readBatch, s.opts.MaxEntries-s.read))
		s.read += len(batch)
		for _, e := range batch {
			name := e.Name()
			if strings.ContainsAny(name, "\n\r") {
				continue
			}
			abs := filepath.Join(real, name)
			var isDir bool
			switch t := e.Type(); {
			case t.IsDir():
				isDir = true
			case t.IsRegular():
			case t&fs.ModeSymlink != 0:
				target, err := s.ws.Resolve(abs)
				if err != nil {
					continue // leads out of the workspace
				}
				fi, err := os.Stat(target)
				if err != nil || !fi.IsDir() && !fi.Mode().IsRegular() {
					continue
				}
				if ign.Ignored(abs, fi.IsDir()) || s.ignored(target, fi.IsDir()) {
					continue
				}
				fn(name, "", fi.IsDir())
				continue
			default:
				continue // a FIFO, a device, a socket
			}
			if ign.Ignored(abs, isDir) {
				continue
			}
			fn(name, abs, isDir)
		}
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			return nil
		}
		if err != nil {
			return nil // a directory that fails half way: what was read
		}
	}
	return nil
}

// ignored reports whether the ignore files of the root containing abs
// exclude it.
func (s *search) ignored(abs string, isDir bool) bool {
	root := s.rootOf(abs)
	return root != "" && s.ignorer(root).Ignored(abs, isDir)
}

func (s *search) ignorer(root string) *tools.Ignorer {
	ig, ok := s.ignorers[root]
	if !ok {
		ig = s.ws.Ignorer(root)
		s.ignorers[root] = ig
	}
	return ig
}

// rootOf returns the workspace root containing abs, or "".
func (s *search) rootOf(abs string) string {
	for _, r := range s.ws.Roots() {
		if rel, err := filepath.Rel(r, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return r
		}
	}
	return ""
}

// compareFound orders suggestions as gemini-cli does: by depth below
// their root, then directories first, then by name without its
// extension, then by label. gemini-cli compares names with localeCompare;
// case-folded byte order stands in for it.
func compareFound(x, y found) int {
	if x.depth != y.depth {
		return x.depth - y.depth
	}
	a, b := x.label, y.label
	ad, bd := strings.HasSuffix(a, "/"), strings.HasSuffix(b, "/")
	if ad != bd {
		if ad {
			return -1
		}
		return 1
	}
	stem := func(l string) string { return strings.TrimSuffix(l, path.Ext(l)) }
	return cmp.Or(
		strings.Compare(strings.ToLower(stem(a)), strings.ToLower(stem(b))),
		strings.Compare(a, b),
	)
}
