package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProtectedPath: the names that configure commands run without a
// further approval, in any case, at any depth, and what is not among them.
func TestProtectedPath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/w/.git/config", true},
		{"/w/.git/hooks/pre-commit", true},
		{"/w/.git/info/attributes", true},
		{"/w/.git/modules/sub/config", true},
		{"/w/.git", true}, // a gitdir file
		{"/w/.GIT/config", true},
		{"/w/.Git/Hooks/post-checkout", true},
		{"/w/.git./config", true}, // Windows drops trailing dots
		{"/w/vendor/lib/.git/config", true},
		{"/w/.agentry/settings.json", true},
		{"/w/.agentry/.env", true},
		{"/w/.agentry/agents/helper.md", true},
		{"/w/.gemini/settings.json", true},
		{"/w/.gemini/policies/mine.toml", true},
		{"/w/.gemini/hooks/x.sh", true},
		{"/home/u/.agentry/settings.json", true},
		{"/home/u/.gemini/extensions/x/gemini-extension.json", true},
		{"/home/u/.gitconfig", true},
		{"/home/u/.config/git/config", true},
		{"/home/u/.config/direnv/direnvrc", true},
		{"/home/u/.bashrc", true},
		{"/home/u/.zshenv", true},
		{"/home/u/.profile", true},
		{"/home/u/.ssh/config", true},
		{"/w/.env", true},
		{"/w/.ENV", true},
		{"/w/.env.local", true},
		{"/w/services/api/.env.production", true},
		{"/w/.envrc", true},
		{"/w/.gitattributes", true},
		{"/w/sub/.gitattributes", true},
		{"/w/.gitmodules", true},
		{"/w/.vscode/tasks.json", true},
		{"/w/.vscode/settings.json", true},
		{"/w/.husky/pre-commit", true},
		{"/w/.pre-commit-config.yaml", true},
		{"/w/lefthook.yml", true},
		{"/w/.npmrc", true},
		{"/w/.yarnrc", true},
		{"/w/.yarnrc.yml", true},

		{"/w/main.go", false},
		{"/w/Makefile", false},
		{"/w/package.json", false},
		{"/w/.gitignore", false},
		{"/w/.agentryignore", false},
		{"/w/.github/workflows/ci.yml", false},
		{"/w/git/config", false},
		{"/w/docs/.gitx/config", false},
		{"/w/environment.go", false},
		{"/w/.envelope", false},
		{"/w/env", false},
		{"/w/config/git", false},
		{"/w/AGENTRY.md", false},
	}
	for _, tc := range tests {
		why, got := ProtectedPath(filepath.FromSlash(tc.path))
		if got != tc.want {
			t.Errorf("ProtectedPath(%s) = %v, want %v", tc.path, got, tc.want)
		}
		if got && why == "" {
			t.Errorf("ProtectedPath(%s) gives no reason", tc.path)
		}
	}
}

// TestWritePathsProtected: write_file and replace name the real file a
// call would write, so a symlink, another root, a case variant on disk
// or a home directory inside the workspace cannot hide a protected path.
func TestWritePathsProtected(t *testing.T) {
	root := realDir(t)
	other := realDir(t)
	home := realDir(t)
	writeFiles(t, root, map[string]string{
		".git/config":      "[core]\n",
		".git/hooks/.keep": "",
		".GIT/config":      "",
		"src/main.go":      "package main\n",
	})
	writeFiles(t, other, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	writeFiles(t, home, map[string]string{".agentry/settings.json": "{}", ".gemini/.keep": ""})
	for link, target := range map[string]string{
		"notgit":     ".git",                                           // a directory symlink
		"hooks":      filepath.Join(root, ".git", "hooks"),             // an absolute one
		"cfg":        ".git/config",                                    // a file symlink
		"dangling":   ".git/hooks/post-checkout",                       // to a file not yet there
		"homelink":   home,                                             // into another root
		"src/up/git": filepath.Join("..", "..", ".git"),                // climbing out of a subdirectory
		"plain":      filepath.Join(root, "src"),                       // a harmless one
		"settings":   filepath.Join(home, ".agentry", "settings.json"), // home's settings
	} {
		p := filepath.Join(root, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := NewWorkspace(root, other, home)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	tests := []struct {
		path string
		want bool
	}{
		{".git/config", true},
		{".GIT/config", true},
		{".git/hooks/pre-commit", true},
		{"notgit/config", true},
		{"notgit/hooks/post-checkout", true},
		{"hooks/pre-push", true},
		{"cfg", true},
		{"dangling", true},
		{"src/up/git/config", true},
		{"src/../.git/config", true},
		{"@.git/config", true},
		{filepath.Join(other, ".git", "config"), true},
		{filepath.Join(home, ".agentry", "settings.json"), true},
		{filepath.Join(home, ".gemini", "settings.json"), true},
		{filepath.Join(home, ".bashrc"), true},
		{"homelink/.agentry/settings.json", true},
		{"settings", true},

		{"src/main.go", false},
		{"plain/main.go", false},
		{"new/file.txt", false},
		{filepath.Join(other, "README.md"), false},
		{filepath.Join(home, "notes.txt"), false},
	}
	for _, name := range []string{"write_file", "replace"} {
		tool, ok := set.Lookup(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		fw, ok := tool.(FileWriter)
		if !ok {
			t.Fatalf("%s is not a FileWriter", name)
		}
		for _, tc := range tests {
			paths, err := fw.WritePaths(map[string]any{"file_path": tc.path})
			if err != nil || len(paths) != 1 {
				t.Errorf("%s %s: WritePaths = %q, %v", name, tc.path, paths, err)
				continue
			}
			if _, got := ProtectedPath(paths[0]); got != tc.want {
				t.Errorf("%s %s (real path %s): protected %v, want %v", name, tc.path, paths[0], got, tc.want)
			}
		}
	}
	// A path outside the workspace is not written at all: WritePaths
	// fails as the call will.
	tool, _ := set.Lookup("write_file")
	if _, err := tool.(FileWriter).WritePaths(map[string]any{"file_path": "/etc/passwd"}); TypeOf(err) != ErrPathNotInWorkspace {
		t.Errorf("outside the workspace: %v, want %s", err, ErrPathNotInWorkspace)
	}
}
