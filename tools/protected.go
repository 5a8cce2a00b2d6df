package tools

import (
	"path/filepath"
	"strings"
)

// FileWriter is implemented by tools that write files (write_file,
// replace). The approval policy asks it which files a call would write,
// so that writing a protected path (ProtectedPath) needs a human whatever
// the approval mode, yolo aside.
type FileWriter interface {
	// WritePaths returns the absolute, symlink-resolved paths a call with
	// these arguments would write. It fails when they cannot be resolved;
	// the call then fails the same way when it runs.
	WritePaths(args map[string]any) ([]string, error)
}

// protectedDirs are directories whose files configure commands that run
// without a further approval; a path with a component of one of these
// names, at any depth, is protected. Names are lower case.
var protectedDirs = map[string]string{
	".git":     "git runs its hooks and the commands its config names (core.fsmonitor, core.hooksPath, filters, aliases, credential helpers) on ordinary git commands",
	".agentry": "agentry's settings, hooks, MCP servers, agents and .env, which decide what runs and what is allowed",
	".gemini":  "gemini-cli's settings, hooks, MCP servers, agents, policies and .env, which agentry also reads",
	".husky":   "husky's git hooks run on git commit, push and checkout",
	".vscode":  "VS Code runs tasks and the programs its settings name, some when the folder opens",
	".ssh":     "ssh runs the ProxyCommand and LocalCommand of its config, used by git over ssh",
}

// protectedNestedDirs are protected directories below ~/.config (the XDG
// configuration directory).
var protectedNestedDirs = map[string]string{
	".config/git":    "git's user configuration and attributes, read by every git command",
	".config/direnv": "direnv's configuration and library, run on entering a directory",
}

// protectedFiles are files protected by name wherever they are. Names are
// lower case.
var protectedFiles = map[string]string{
	".gitattributes":          "git's attributes choose which filters, diff and merge drivers run on which files",
	".gitmodules":             "git's submodule settings decide what git fetches and runs on submodule commands",
	".gitconfig":              "git's user configuration is read by every git command",
	".envrc":                  "direnv runs it on entering the directory",
	".pre-commit-config.yaml": "pre-commit runs the commands it lists on git commit",
	"lefthook.yml":            "lefthook runs the commands it lists on git hooks",
	".lefthook.yml":           "lefthook runs the commands it lists on git hooks",
	".npmrc":                  "npm's configuration names the shell, node options and git that npm commands run",
	".yarnrc":                 "yarn's configuration names the yarn that every yarn command runs",
	".yarnrc.yml":             "yarn's configuration names the yarn that every yarn command runs (yarnPath)",
	".bashrc":                 "shells run their startup files",
	".bash_profile":           "shells run their startup files",
	".bash_login":             "shells run their startup files",
	".profile":                "shells run their startup files",
	".zshrc":                  "shells run their startup files",
	".zshenv":                 "shells run their startup files",
	".zprofile":               "shells run their startup files",
	".zlogin":                 "shells run their startup files",
}

// envFileReason is why .env and .env.* files are protected.
const envFileReason = "agentry, gemini-cli, direnv and many tools load .env files into the environment, where AGENTRY_* variables change agentry's own settings"

// ProtectedPath reports whether the file at abs, an absolute and
// symlink-resolved path, configures commands that run without a further
// approval — by git, by agentry or gemini-cli, by the user's shell or
// editor — and, if so, why. Writing such a file needs a human's
// confirmation in every approval mode but yolo. Names are compared without
// regard to case (as case-insensitive file systems resolve them) and
// without trailing dots and spaces (as Windows does), anywhere in the path:
// nested repositories, every workspace root and a home directory inside
// the workspace are covered alike.
func ProtectedPath(abs string) (why string, protected bool) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(abs)), "/")
	for i, p := range parts {
		if t := strings.TrimRight(p, ". "); t != "" {
			p = t
		}
		parts[i] = strings.ToLower(p)
	}
	for i, p := range parts {
		if why, ok := protectedDirs[p]; ok {
			return why, true
		}
		if i > 0 {
			if why, ok := protectedNestedDirs[parts[i-1]+"/"+p]; ok {
				return why, true
			}
		}
	}
	base := parts[len(parts)-1]
	if why, ok := protectedFiles[base]; ok {
		return why, true
	}
	if base == ".env" || strings.HasPrefix(base, ".env.") {
		return envFileReason, true
	}
	return "", false
}

// WritePaths returns the file a write_file call would write.
func (t *writeFileTool) WritePaths(callArgs map[string]any) ([]string, error) {
	return t.ws.writePath(callArgs)
}

// WritePaths returns the file a replace call would edit.
func (t *editTool) WritePaths(callArgs map[string]any) ([]string, error) {
	return t.ws.writePath(callArgs)
}

// writePath resolves the file_path argument of an edit tool, as the tool
// itself does when it runs.
func (w *Workspace) writePath(callArgs map[string]any) ([]string, error) {
	p, err := args(callArgs).requiredStr("file_path")
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, Errorf(ErrInvalidParams, `Missing or empty "file_path"`)
	}
	abs, err := w.resolveFileArg(p)
	if err != nil {
		return nil, err
	}
	return []string{abs}, nil
}

var (
	_ FileWriter = (*writeFileTool)(nil)
	_ FileWriter = (*editTool)(nil)
)
