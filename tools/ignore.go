package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// Ignore files. .geminiignore is honoured so that a repository set up for
// gemini-cli behaves the same under agentry; .agentryignore is agentry's own
// and takes precedence over it.
const (
	gitIgnoreFile     = ".gitignore"
	geminiIgnoreFile  = ".geminiignore"
	agentryIgnoreFile = ".agentryignore"
)

// coreExcludedDirs are never searched by glob, grep and read_many_files,
// whatever the ignore files say (gemini-cli's COMMON_IGNORE_PATTERNS).
var coreExcludedDirs = map[string]bool{
	"node_modules":     true,
	".git":             true,
	"bower_components": true,
	".svn":             true,
	".hg":              true,
}

// ignoreRule is one line of a gitignore-style file, compiled to a doublestar
// pattern over slash-separated paths relative to the filter's base.
type ignoreRule struct {
	pattern string
	negate  bool
	dirOnly bool
}

// compileIgnoreFile compiles the lines of an ignore file that lives in dir
// (slash-separated, relative to the base; "" for the base itself), following
// gitignore(5): "#" starts a comment, "!" negates, a trailing "/" matches
// only directories, a pattern with a "/" before its end is anchored to dir,
// any other pattern matches at any depth below dir.
func compileIgnoreFile(content, dir string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(content, "\n") {
		if r, ok := compileIgnoreLine(line, dir); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func compileIgnoreLine(line, dir string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return ignoreRule{}, false
	}
	var r ignoreRule
	switch {
	case strings.HasPrefix(line, "!"):
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimLeft(line, "/")
	// gitignore has no brace alternatives, doublestar does: make braces
	// literal.
	line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
	if !anchored {
		line = "**/" + line
	}
	if dir != "" {
		line = escapeGlob(dir) + "/" + line
	}
	if !doublestar.ValidatePattern(line) {
		return ignoreRule{}, false
	}
	r.pattern = line
	return r, true
}

// escapeGlob escapes doublestar's metacharacters in a literal path.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// matchRules reports whether rules decide anything about rel and, if so,
// whether they exclude it: the last matching rule wins.
func matchRules(rules []ignoreRule, rel string, isDir bool) (decided, excluded bool) {
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if doublestar.MatchUnvalidated(r.pattern, rel) {
			return true, !r.negate
		}
	}
	return false, false
}

// fileFilter decides which paths under one workspace root the ignore files
// exclude. Inside a git repository it applies .git/info/exclude and every
// .gitignore from the repository's top down to the path (gemini-cli only
// reads them from the workspace root down; a workspace that is a
// subdirectory of a repository is better served by git's own rules), then
// .geminiignore and .agentryignore from the root, which win over the
// gitignore rules. A fileFilter is built per call, so edits to ignore files
// take effect at once, and is used by one goroutine.
type fileFilter struct {
	root    string
	base    string // the git top when gitignore applies, else root
	opts    filteringOptions
	warn    *warnings
	git     bool
	exclude []ignoreRule            // .git/info/exclude
	dirs    map[string][]ignoreRule // .gitignore rules by directory
	extra   []ignoreRule            // .geminiignore and .agentryignore
}

// maxIgnoreFileBytes bounds what is read of one ignore file. Real ones are
// a few kilobytes; a larger one is skipped (with a warning), as is one that
// is not a regular file or that a symlink leads to outside the directory
// it is read from.
const maxIgnoreFileBytes = 1 << 20

// newFileFilter returns the filter for root; warn (which may be nil)
// receives ignore files that had to be skipped.
func newFileFilter(root string, opts filteringOptions, warn *warnings) *fileFilter {
	f := &fileFilter{root: root, base: root, opts: opts, warn: warn, dirs: map[string][]ignoreRule{}}
	if opts.gitIgnore {
		if top, ok := gitTop(root); ok {
			f.git = true
			f.base = top
			if b, ok := f.readIgnoreFile(top, filepath.Join(".git", "info", "exclude")); ok {
				f.exclude = compileIgnoreFile(b, "")
			}
		}
	}
	if opts.agentryIgnore {
		rootRel, _ := filepath.Rel(f.base, root)
		rootRel = filepath.ToSlash(rootRel)
		if rootRel == "." {
			rootRel = ""
		}
		// Later rules win, so the file read last takes precedence.
		for _, name := range []string{geminiIgnoreFile, agentryIgnoreFile} {
			if b, ok := f.readIgnoreFile(root, name); ok {
				f.extra = append(f.extra, compileIgnoreFile(b, rootRel)...)
			}
		}
	}
	return f
}

// readIgnoreFile reads the ignore file name beneath dir, which it may not
// leave (the workspace root, or the git top above it). A file that is
// missing is silently absent; one that cannot be used safely — a FIFO, a
// device, a symlink leading out of dir, a file over maxIgnoreFileBytes —
// is skipped with a warning, and the tools go on without its rules.
func (f *fileFilter) readIgnoreFile(dir, name string) (string, bool) {
	b, err := safefs.ReadFileIn(dir, name, maxIgnoreFileBytes)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			f.warn.warn("ignore file skipped, its rules do not apply", filepath.Join(dir, name), err)
		}
		return "", false
	}
	return string(b), true
}

// gitTop returns the top of the git work tree containing dir: the nearest
// ancestor holding a .git directory or file. It only looks at the entries
// (lstat), so a .git that is a FIFO or a device cannot block it.
func gitTop(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// active reports whether the filter can exclude anything at all.
func (f *fileFilter) active() bool {
	return f.git || len(f.extra) > 0
}

// ignored reports whether the absolute path abs is excluded, either itself
// or because a directory above it is (git never looks inside an excluded
// directory, so nothing below one can be re-included).
func (f *fileFilter) ignored(abs string, isDir bool) bool {
	if !f.active() {
		return false
	}
	rel, err := filepath.Rel(f.base, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := 1; i <= len(parts); i++ {
		if f.ignoredSelf(strings.Join(parts[:i], "/"), i < len(parts) || isDir) {
			return true
		}
	}
	return false
}

// ignoredSelf decides rel (relative to the base) by the rules that apply to
// it, assuming no directory above it is excluded.
func (f *fileFilter) ignoredSelf(rel string, isDir bool) bool {
	if f.opts.agentryIgnore {
		if decided, excluded := matchRules(f.extra, rel, isDir); decided {
			return excluded
		}
	}
	if !f.git {
		return false
	}
	if path.Base(rel) == ".git" {
		return true
	}
	// Deeper .gitignore files override shallower ones.
	dir := path.Dir(rel)
	for {
		d := dir
		if d == "." {
			d = ""
		}
		if decided, excluded := matchRules(f.gitRules(d), rel, isDir); decided {
			return excluded
		}
		if d == "" {
			break
		}
		dir = path.Dir(dir)
	}
	decided, excluded := matchRules(f.exclude, rel, isDir)
	return decided && excluded
}

// gitRules returns the rules of the .gitignore in dir, read on first use.
func (f *fileFilter) gitRules(dir string) []ignoreRule {
	if r, ok := f.dirs[dir]; ok {
		return r
	}
	var rules []ignoreRule
	if b, ok := f.readIgnoreFile(f.base, filepath.Join(filepath.FromSlash(dir), gitIgnoreFile)); ok {
		rules = compileIgnoreFile(b, dir)
	}
	f.dirs[dir] = rules
	return rules
}

// relBase returns abs relative to the base, slash-separated.
func (f *fileFilter) relBase(abs string) string {
	rel, err := filepath.Rel(f.base, abs)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// filters hands out one fileFilter per workspace root for a call.
type filters struct {
	ws   *Workspace
	opts filteringOptions
	m    map[string]*fileFilter
}

func newFilters(ws *Workspace, opts filteringOptions) *filters {
	return &filters{ws: ws, opts: opts, m: map[string]*fileFilter{}}
}

// forPath returns the filter of the root containing abs, or nil.
func (fs *filters) forPath(abs string) *fileFilter {
	root := fs.ws.rootOf(abs)
	if root == "" {
		return nil
	}
	if f, ok := fs.m[root]; ok {
		return f
	}
	f := newFileFilter(root, fs.opts, fs.ws.warnings)
	fs.m[root] = f
	return f
}

// ignored reports whether abs is excluded by its root's ignore files.
func (fs *filters) ignored(abs string, isDir bool) bool {
	f := fs.forPath(abs)
	return f != nil && f.ignored(abs, isDir)
}

// walkEntry is one file or directory met by walk.
type walkEntry struct {
	abs     string
	rel     string // slash-separated, relative to the walk's start
	entry   fs.DirEntry
	ignored bool // excluded by the ignore files, itself or through a parent
}

// errSkipDir, returned by a walk callback for a directory, skips it.
var errSkipDir = fs.SkipDir

// walk visits everything below start in lexical order without following
// symlinks, never entering coreExcludedDirs. With prune set, directories the
// ignore files exclude are not entered and excluded entries are not
// reported; otherwise they are reported with ignored set, so callers can
// count what the ignore files hid, as gemini-cli's tools do. Directories
// are opened beneath f's root, so a directory swapped for a symlink during
// the walk cannot lead it outside.
func walk(ctx context.Context, f *fileFilter, start string, prune bool, fn func(walkEntry) error) error {
	start = filepath.Clean(start)
	startRel, err := filepath.Rel(f.root, start)
	if err != nil || startRel == ".." || strings.HasPrefix(startRel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("walk %s: not inside the workspace root %s", start, f.root)
	}
	startRel = filepath.ToSlash(startRel)
	startIgnored := f.ignored(start, true)
	if startIgnored && prune {
		return nil
	}
	// ignoredDirs remembers each directory's verdict, so that every entry
	// costs one rule evaluation however deep it lies.
	ignoredDirs := map[string]bool{start: startIgnored}
	n := 0
	return fs.WalkDir(confinedDirs{f.root}, startRel, func(rel string, d fs.DirEntry, err error) error {
		if n++; n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		if rel == startRel {
			if err != nil {
				return err
			}
			return nil
		}
		if err != nil {
			// An unreadable directory is skipped, not fatal: the rest of
			// the tree is still worth searching.
			if d != nil && d.IsDir() {
				return errSkipDir
			}
			return nil
		}
		p := filepath.Join(f.root, filepath.FromSlash(rel))
		isDir := d.IsDir()
		if isDir && coreExcludedDirs[d.Name()] {
			return errSkipDir
		}
		parentIgnored := ignoredDirs[filepath.Dir(p)]
		ign := parentIgnored
		if !ign && f.active() {
			ign = f.ignoredSelf(f.relBase(p), isDir)
		}
		if isDir {
			if ign && prune {
				return errSkipDir
			}
			ignoredDirs[p] = ign
		}
		if ign && prune {
			return nil
		}
		relStart, _ := filepath.Rel(start, p)
		err = fn(walkEntry{abs: p, rel: filepath.ToSlash(relStart), entry: d, ignored: ign})
		if errors.Is(err, errSkipDir) && !isDir {
			return nil
		}
		return err
	})
}

// Ignorer reports whether a path is excluded by a workspace root's ignore
// files — .gitignore (from the git top down), .geminiignore and
// .agentryignore — exactly as the file tools see them. It reads ignore files
// as it goes and is not safe for concurrent use.
type Ignorer struct{ f *fileFilter }

// NewIgnorer returns the Ignorer for one workspace root (an absolute,
// symlink-resolved directory).
func NewIgnorer(root string) *Ignorer {
	return &Ignorer{f: newFileFilter(root, filteringOptions{gitIgnore: true, agentryIgnore: true}, &warnings{})}
}

// Ignorer returns the Ignorer for root, one of w's roots, sharing w's
// warnings: an ignore file that had to be skipped is warned about once,
// however many tools and listings read it.
func (w *Workspace) Ignorer(root string) *Ignorer {
	return &Ignorer{f: newFileFilter(root, filteringOptions{gitIgnore: true, agentryIgnore: true}, w.warnings)}
}

// Ignored reports whether the absolute path abs is excluded.
func (i *Ignorer) Ignored(abs string, isDir bool) bool { return i.f.ignored(abs, isDir) }
