package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	s, root := newTestSet(t, Config{})
	initGit(t, root)
	outside := realDir(t)
	writeFiles(t, outside, map[string]string{"o.ts": "x"})
	writeFiles(t, root, map[string]string{
		".gitignore":              "gen/\n",
		"src/a.ts":                "a",
		"src/deep/b.TS":           "b",
		"src/c.go":                "c",
		"old.ts":                  "old",
		"gen/g.ts":                "g",
		"node_modules/m/index.ts": "m",
		"pages/[id].tsx":          "page",
		".hidden/h.ts":            "h",
	})
	mustSymlink(t, filepath.Join(outside, "o.ts"), filepath.Join(root, "src", "outlink.ts"))
	mustSymlink(t, filepath.Join(root, "src", "a.ts"), filepath.Join(root, "src", "inlink.ts"))
	now := time.Now()
	setMtime(t, filepath.Join(root, "old.ts"), now.Add(-72*time.Hour))
	setMtime(t, filepath.Join(root, "src", "a.ts"), now.Add(-2*time.Hour))
	setMtime(t, filepath.Join(root, "src", "deep", "b.TS"), now.Add(-1*time.Hour))
	setMtime(t, filepath.Join(root, ".hidden", "h.ts"), now.Add(-48*time.Hour))

	res := mustRun(t, s, "glob", map[string]any{"pattern": "**/*.ts"})
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	// Recent files newest first, then older ones by path; gitignored
	// gen/, node_modules and the symlink leading outside are left out.
	wantFiles := []string{abs("src/deep/b.TS"), abs("src/a.ts"), abs("src/inlink.ts"), abs(".hidden/h.ts"), abs("old.ts")}
	want := `Found 5 file(s) matching "**/*.ts" within ` + root + " (1 additional files were ignored), sorted by modification time (newest first):\n" + strings.Join(wantFiles, "\n")
	if res.LLMContent != want {
		t.Errorf("LLMContent =\n%s\nwant\n%s", res.LLMContent, want)
	}

	res = mustRun(t, s, "glob", map[string]any{"pattern": "**/*.ts", "case_sensitive": true, "respect_git_ignore": false})
	files, _ := res.Data["files"].([]string)
	if len(files) != 5 || contains(files, abs("src/deep/b.TS")) || !contains(files, abs("gen/g.ts")) {
		t.Errorf("case-sensitive, gitignore off: files = %v", files)
	}

	res = mustRun(t, s, "glob", map[string]any{"pattern": "*.go", "dir_path": "src"})
	if files, _ := res.Data["files"].([]string); len(files) != 1 || files[0] != abs("src/c.go") {
		t.Errorf("dir_path src: files = %v", files)
	}

	res = mustRun(t, s, "glob", map[string]any{"pattern": "pages/[id].tsx"})
	if files, _ := res.Data["files"].([]string); len(files) != 1 {
		t.Errorf("literal name with brackets: files = %v", files)
	}

	res = mustRun(t, s, "glob", map[string]any{"pattern": abs("src") + "/*.go"})
	if files, _ := res.Data["files"].([]string); len(files) != 1 {
		t.Errorf("absolute pattern: files = %v", files)
	}

	res = mustRun(t, s, "glob", map[string]any{"pattern": "gen/*.ts"})
	if res.LLMContent != `No files found matching pattern "gen/*.ts" within `+root+" (1 files were ignored)" {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want ErrorType
	}{
		{"empty pattern", map[string]any{"pattern": " "}, ErrInvalidParams},
		{"missing dir", map[string]any{"pattern": "*", "dir_path": "nope"}, ErrSearchPathNotFound},
		{"file as dir", map[string]any{"pattern": "*", "dir_path": "old.ts"}, ErrSearchPathNotDir},
		{"outside dir", map[string]any{"pattern": "*", "dir_path": outside}, ErrPathNotInWorkspace},
		{"outside absolute pattern", map[string]any{"pattern": filepath.Join(outside, "*.ts")}, ErrPathNotInWorkspace},
		{"bad pattern", map[string]any{"pattern": "src/[a"}, ErrInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "glob", tc.args)
			wantToolError(t, err, tc.want)
		})
	}
}

func TestGlobMultipleRoots(t *testing.T) {
	a, b := realDir(t), realDir(t)
	writeFiles(t, a, map[string]string{"x.md": "a"})
	writeFiles(t, b, map[string]string{"y.md": "b"})
	ws, err := NewWorkspace(a, b)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSet(Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := mustRun(t, s, "glob", map[string]any{"pattern": "*.md"})
	if !strings.HasPrefix(res.LLMContent, `Found 2 file(s) matching "*.md" across 2 workspace directories`) {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}
}

func TestGlobMatcherPruning(t *testing.T) {
	for _, tc := range []struct {
		pattern, dir string
		want         bool
	}{
		{"src/**/*.go", "src", true},
		{"src/**/*.go", "src/a/b", true},
		{"src/**/*.go", "lib", false},
		{"src/*.go", "src", true},
		{"src/*.go", "src/a", false},
		{"*.go", "src", false},
		{"**/*.go", "any/where", true},
		{"src/**", "src/a", true},
		{"{src,lib}/*.go", "lib", true},
		{"SRC/*.go", "src", true},
	} {
		m, err := newGlobMatcher(tc.pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.mayContain(tc.dir); got != tc.want {
			t.Errorf("%q mayContain(%q) = %v, want %v", tc.pattern, tc.dir, got, tc.want)
		}
	}
}

func setMtime(t *testing.T, p string, mt time.Time) {
	t.Helper()
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}
