package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestListDirectory(t *testing.T) {
	s, root := newTestSet(t, Config{})
	initGit(t, root)
	outside := realDir(t)
	writeFiles(t, root, map[string]string{
		".gitignore":    "*.log\n",
		"b.txt":         "12345",
		"A.md":          "1",
		"c.go":          "",
		"debug.log":     "x",
		"zdir/x":        "x",
		"Adir/y":        "y",
		"skip.tmp":      "x",
		"sub/inner.txt": "x",
	})
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	// .git and debug.log are ignored, skip.tmp is filtered by the pattern.
	res := mustRun(t, s, "list_directory", map[string]any{"dir_path": ".", "ignore": []any{"*.tmp"}})
	want := "Directory listing for " + root + ":\n" +
		"[DIR] Adir\n[DIR] empty\n[DIR] sub\n[DIR] zdir\n" +
		".gitignore (6 bytes)\nA.md (1 bytes)\nb.txt (5 bytes)\nc.go (0 bytes)\n\n(2 ignored)"
	if res.LLMContent != want {
		t.Errorf("LLMContent =\n%s\nwant\n%s", res.LLMContent, want)
	}
	if res.Display != "Found 8 item(s). (2 ignored)" {
		t.Errorf("Display = %q", res.Display)
	}

	res = mustRun(t, s, "list_directory", map[string]any{
		"dir_path":               root,
		"file_filtering_options": map[string]any{"respect_git_ignore": false},
	})
	if !contains(res.Data["entries"], "debug.log") || !contains(res.Data["entries"], ".git/") {
		t.Errorf("with respect_git_ignore false, entries = %v", res.Data["entries"])
	}

	res = mustRun(t, s, "list_directory", map[string]any{"dir_path": "empty"})
	if res.LLMContent != "Directory "+filepath.Join(root, "empty")+" is empty." {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want ErrorType
	}{
		{"not a directory", map[string]any{"dir_path": "b.txt"}, ErrPathIsNotDirectory},
		{"missing", map[string]any{"dir_path": "nope"}, ErrFileNotFound},
		{"no dir_path", map[string]any{}, ErrInvalidParams},
		{"bad ignore", map[string]any{"dir_path": ".", "ignore": "x"}, ""},
		{"outside", map[string]any{"dir_path": outside}, ErrPathNotInWorkspace},
		{"dotdot", map[string]any{"dir_path": ".."}, ErrPathNotInWorkspace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "list_directory", tc.args)
			if tc.want == "" {
				if err != nil {
					t.Errorf("a lone string for an array should be accepted: %v", err)
				}
				return
			}
			wantToolError(t, err, tc.want)
		})
	}
}

func contains(list any, s string) bool {
	l, _ := list.([]string)
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}
