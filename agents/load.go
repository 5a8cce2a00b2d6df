package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// maxFileSize bounds a definition file: a system prompt, not a corpus.
const maxFileSize = 1 << 20

// LoadConfig says where definitions are looked for.
type LoadConfig struct {
	// Workspace is the workspace root; its .agentry/agents and
	// .gemini/agents are read only when Trusted.
	Workspace string
	// Home is the user's home directory; its .agentry/agents and
	// .gemini/agents are always read.
	Home string
	// Trusted says the user trusts the workspace.
	Trusted bool
}

// Dirs returns the directories Load reads, in order, with their scope.
func (c LoadConfig) Dirs() []ScopedDir {
	var out []ScopedDir
	if c.Workspace != "" && c.Trusted {
		out = append(out,
			ScopedDir{filepath.Join(c.Workspace, ".agentry", "agents"), ScopeProject, c.Workspace},
			ScopedDir{filepath.Join(c.Workspace, ".gemini", "agents"), ScopeProject, c.Workspace})
	}
	if c.Home != "" {
		out = append(out,
			ScopedDir{filepath.Join(c.Home, ".agentry", "agents"), ScopeUser, ""},
			ScopedDir{filepath.Join(c.Home, ".gemini", "agents"), ScopeUser, ""})
	}
	return out
}

// ScopedDir is a directory of definitions and its scope.
type ScopedDir struct {
	Dir   string
	Scope Scope
	// Root confines the reads: a workspace's definitions are read only
	// from files beneath the workspace, never through a symlink leading
	// out of it. "" for the user's own, which may be symlinks anywhere.
	Root string
}

// Load reads every definition: a trusted workspace's first, then the
// user's; in each, .agentry/agents before .gemini/agents, files in name
// order. A name already loaded hides later ones (an ErrDuplicate error
// says so). Files that do not load are returned as errors, each naming its
// file (and field); the others still load. An untrusted workspace's
// definitions are not read, and an error says so when it has some.
func Load(cfg LoadConfig) ([]Definition, []error) {
	var defs []Definition
	var errs []error
	seen := map[string]string{}
	if cfg.Workspace != "" && !cfg.Trusted {
		for _, d := range (LoadConfig{Workspace: cfg.Workspace, Trusted: true}).Dirs() {
			if names, _ := mdFiles(d.Root, d.Dir); len(names) > 0 {
				errs = append(errs, fmt.Errorf("%w: the agent definitions in %s are not loaded; trust the workspace (--trust-workspace) to use them", ErrUntrusted, d.Dir))
			}
		}
	}
	for _, d := range cfg.Dirs() {
		names, err := mdFiles(d.Root, d.Dir)
		if err != nil {
			why := safefs.Refusal(err, 0, "the workspace")
			if why == "" {
				why = err.Error()
			}
			errs = append(errs, &LoadError{File: d.Dir, Msg: "cannot list the directory: " + why})
			continue
		}
		for _, name := range names {
			file := filepath.Join(d.Dir, name)
			found, err := readIn(d.Root, file)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, def := range found {
				def.Scope = d.Scope
				if first, dup := seen[def.Name]; dup {
					errs = append(errs, fmt.Errorf("%w: agent definition %s: %q is already defined in %s, which wins", ErrDuplicate, file, def.Name, first))
					continue
				}
				seen[def.Name] = file
				defs = append(defs, def)
			}
		}
	}
	return defs, errs
}

// ReadFile reads the definitions of one file: a regular file (a symlink
// to one is followed) of at most 1 MiB. A FIFO or a device is refused
// without blocking.
func ReadFile(file string) ([]Definition, error) {
	return readIn("", file)
}

// readIn reads the definitions of file, confined to root unless root is "".
func readIn(root, file string) ([]Definition, error) {
	var data []byte
	var err error
	if root == "" {
		data, err = safefs.ReadFile(file, maxFileSize)
	} else {
		data, err = safefs.ReadFileIn(root, file, maxFileSize)
	}
	if why := safefs.Refusal(err, maxFileSize, "the workspace"); why != "" {
		return nil, &LoadError{File: file, Msg: why}
	}
	if err != nil {
		return nil, &LoadError{File: file, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	return Parse(file, data)
}

// mdFiles lists a directory's definition files: *.md entries other than
// directories whose names do not start with "_", sorted. A FIFO, a device
// or a symlink is listed too, so that reading it says why it is refused
// (or follows the symlink, for the user's own files). A missing directory
// has none.
func mdFiles(root, dir string) ([]string, error) {
	entries, err := safefs.ReadDirIn(root, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), "_") || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}
