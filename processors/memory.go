package processors

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// maxContextFileBytes bounds one context file, so a huge file in the
// workspace cannot swamp every request (or exhaust memory); a larger file
// is skipped with a warning.
const maxContextFileBytes = 1 << 20

// Memory is the text of the hierarchical context files.
type Memory struct {
	// Global is the concatenated user-level files (~/.agentry, ~/.gemini);
	// it goes into the system instruction.
	Global string
	// Project is the concatenated files from the workspace's git root (or
	// the workspace itself) down to the workspace; it goes into the session
	// context.
	Project string
	// Files lists every file read, global first.
	Files []string
}

// MemoryConfig says where to look for context files.
type MemoryConfig struct {
	// GlobalDirs are the user-level directories, e.g. ~/.agentry and ~/.gemini.
	GlobalDirs []string
	// Roots are the workspace directories.
	Roots []string
	// FileNames are the context file names, in priority order.
	FileNames []string
	// Trusted allows project files. Like gemini-cli, agentry reads project
	// context only from trusted workspaces: an untrusted repository must
	// not get to write the agent's instructions.
	Trusted bool
	// Logger gets a warning for each context file skipped (a FIFO, a
	// device, a symlink leading outside the repository, a file larger than
	// 1 MiB); default slog.Default().
	Logger *slog.Logger
}

// LoadMemory reads the context files, as gemini-cli's memory discovery does:
// global files, then for each root the files of every directory from its
// git root (or the root itself when there is none) down to the root, each
// wrapped in "--- Context from: path ---" markers.
func LoadMemory(cfg MemoryConfig) (Memory, error) {
	var m Memory
	r := contextReader{names: cfg.FileNames, seen: map[string]bool{}, log: cfg.Logger}
	if r.log == nil {
		r.log = slog.Default()
	}
	var global, project []contextFile
	for _, dir := range cfg.GlobalDirs {
		files, err := r.read("", dir)
		if err != nil {
			return Memory{}, err
		}
		global = append(global, files...)
	}
	if cfg.Trusted {
		for _, root := range cfg.Roots {
			chain := dirsFromCeiling(root)
			// Project files are confined to the outermost directory read:
			// the git root, or the root itself.
			ceiling := chain[0]
			if real, err := filepath.EvalSymlinks(ceiling); err == nil {
				ceiling = real
			}
			for _, dir := range chain {
				files, err := r.read(ceiling, dir)
				if err != nil {
					return Memory{}, err
				}
				project = append(project, files...)
			}
		}
	}
	m.Global = concatenate(global)
	m.Project = concatenate(project)
	for _, f := range append(global, project...) {
		m.Files = append(m.Files, f.path)
	}
	return m, nil
}

type contextFile struct {
	path, content string
}

// contextReader reads the context files of directories, each once.
type contextReader struct {
	names []string
	seen  map[string]bool // resolved paths read
	log   *slog.Logger
}

// read returns the context files of dir. With a ceiling (project files),
// a file must resolve beneath it; without (the user's own files), symlinks
// lead anywhere. Either way a file must be regular and at most
// maxContextFileBytes, and it is opened without blocking.
func (r *contextReader) read(ceiling, dir string) ([]contextFile, error) {
	var out []contextFile
	for _, name := range r.names {
		p := filepath.Join(dir, name)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // absent or dangling: nothing to read
		}
		if r.seen[real] {
			continue
		}
		var b []byte
		if ceiling == "" {
			b, err = safefs.ReadFile(real, maxContextFileBytes)
		} else {
			// real has no symlinks left, but one may be swapped in: the
			// read itself stays beneath the ceiling.
			b, err = safefs.ReadFileIn(ceiling, real, maxContextFileBytes)
		}
		if why := safefs.Refusal(err, maxContextFileBytes, ceiling); why != "" {
			r.log.Warn("context file skipped", "file", p, "reason", why)
			continue
		}
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read context file %s: %w", p, err)
		}
		r.seen[real] = true
		out = append(out, contextFile{path: p, content: string(b)})
	}
	return out, nil
}

// dirsFromCeiling returns the directories from root's git root (or root)
// down to root, outermost first.
func dirsFromCeiling(root string) []string {
	var chain []string
	for dir := root; ; {
		chain = append(chain, dir)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			// No git root above: only the root itself counts.
			return []string{root}
		}
		dir = parent
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

func concatenate(files []contextFile) string {
	var blocks []string
	for _, f := range files {
		c := strings.TrimSpace(f.content)
		if c == "" {
			continue
		}
		blocks = append(blocks, fmt.Sprintf("--- Context from: %s ---\n%s\n--- End of Context from: %s ---", f.path, c, f.path))
	}
	return strings.Join(blocks, "\n\n")
}
