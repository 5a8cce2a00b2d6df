package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewWorkspace(t *testing.T) {
	root := realDir(t)
	extra := realDir(t)
	writeFiles(t, root, map[string]string{"file.txt": "x"})
	link := filepath.Join(realDir(t), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}

	ws, err := NewWorkspace(link, extra, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.Root(); got != root {
		t.Errorf("Root() = %q, want the symlink-resolved %q", got, root)
	}
	if got := ws.Roots(); len(got) != 2 || got[0] != root || got[1] != extra {
		t.Errorf("Roots() = %q, want [%q %q] (duplicates dropped)", got, root, extra)
	}

	for _, tc := range []struct {
		name, root, want string
	}{
		{"missing", filepath.Join(root, "nope"), "no such file"},
		{"file", filepath.Join(root, "file.txt"), "not a directory"},
		{"empty", "", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewWorkspace(tc.root)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewWorkspace(%q) error = %v, want one containing %q", tc.root, err, tc.want)
			}
		})
	}
}

func TestWorkspaceResolve(t *testing.T) {
	root := realDir(t)
	extra := realDir(t)
	outside := realDir(t)
	writeFiles(t, root, map[string]string{"src/a.go": "package a", "~/x": "tilde"})
	writeFiles(t, outside, map[string]string{"secret.txt": "secret"})
	writeFiles(t, extra, map[string]string{"e.txt": "e"})
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "secret-link"))
	mustSymlink(t, outside, filepath.Join(root, "outdir"))
	mustSymlink(t, filepath.Join(outside, "not-yet"), filepath.Join(root, "dangling"))
	mustSymlink(t, "src", filepath.Join(root, "srclink"))
	mustSymlink(t, filepath.Join(outside), filepath.Join(root, "src", "up"))

	ws, err := NewWorkspace(root, extra)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string // want "" means outside the workspace
	}{
		{"relative", "src/a.go", filepath.Join(root, "src", "a.go")},
		{"dot", ".", root},
		{"empty", "", root},
		{"absolute inside", filepath.Join(root, "src"), filepath.Join(root, "src")},
		{"not yet existing", "src/new/b.go", filepath.Join(root, "src", "new", "b.go")},
		{"symlink inside to inside", "srclink/a.go", filepath.Join(root, "src", "a.go")},
		{"extra root", filepath.Join(extra, "e.txt"), filepath.Join(extra, "e.txt")},
		{"tilde is literal", "~/x", filepath.Join(root, "~", "x")},
		{"inner dotdot stays inside", "src/../src/a.go", filepath.Join(root, "src", "a.go")},
		{"dotdot escape", "../x", ""},
		{"deep dotdot escape", "src/../../x", ""},
		{"absolute outside", filepath.Join(outside, "secret.txt"), ""},
		{"root of filesystem", "/", ""},
		{"symlinked file", "secret-link", ""},
		{"symlinked dir, existing file", "outdir/secret.txt", ""},
		{"symlinked dir, new file", "outdir/new/file.txt", ""},
		{"dangling symlink", "dangling", ""},
		{"dotdot after symlink follows the target", "src/up/../" + filepath.Base(outside) + "/secret.txt", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ws.Resolve(tc.path)
			if tc.want == "" {
				wantToolError(t, err, ErrPathNotInWorkspace, "Path not in workspace", root, extra)
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.path, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.path, got, tc.want)
			}
			if !ws.Contains(got) {
				t.Errorf("Contains(%q) = false", got)
			}
		})
	}

	if ws.Contains(root + "sibling") {
		t.Errorf("Contains accepted a sibling sharing the root's prefix")
	}
	if _, err := ws.Resolve("a\x00b"); TypeOf(err) != ErrInvalidParams {
		t.Errorf("Resolve with NUL: got %v, want %s", err, ErrInvalidParams)
	}
}

func TestWorkspaceResolveSymlinkLoop(t *testing.T) {
	root := realDir(t)
	mustSymlink(t, "b", filepath.Join(root, "a"))
	mustSymlink(t, "a", filepath.Join(root, "b"))
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.Resolve("a/x")
	wantToolError(t, err, ErrInvalidParams, "too many levels of symbolic links")
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestIgnorer(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{".gitignore": "build/\n*.log\n", ".agentryignore": "secret.txt\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ig := NewIgnorer(root)
	for path, want := range map[string]bool{
		"build": true, "build/out.bin": true, "app.log": true, "secret.txt": true, "main.go": false, "src": false,
	} {
		isDir := path == "build" || path == "src"
		if got := ig.Ignored(filepath.Join(root, path), isDir); got != want {
			t.Errorf("Ignored(%s) = %v, want %v", path, got, want)
		}
	}
}
