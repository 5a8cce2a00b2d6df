package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readBack(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFile(t *testing.T) {
	s, root := newTestSet(t, Config{})
	outside := realDir(t)
	writeFiles(t, root, map[string]string{
		"old.txt":  "a\nb\nc\n",
		"crlf.txt": "a\r\nb\r\n",
		"dir/x":    "x",
	})
	mustSymlink(t, outside, filepath.Join(root, "outdir"))
	mustSymlink(t, filepath.Join(outside, "target.txt"), filepath.Join(root, "dangling.txt"))

	t.Run("new file in new directories", func(t *testing.T) {
		res := mustRun(t, s, "write_file", map[string]any{"file_path": "deep/er/new.txt", "content": "hello\nworld\n"})
		abs := filepath.Join(root, "deep", "er", "new.txt")
		if got := readBack(t, abs); got != "hello\nworld\n" {
			t.Errorf("file = %q", got)
		}
		if !strings.HasPrefix(res.LLMContent, "Successfully created and wrote to new file: "+abs+". Here is the updated code:\nhello\nworld") {
			t.Errorf("LLMContent = %q", res.LLMContent)
		}
		d := res.Diff
		if d == nil || d.Path != abs || d.Before != "" || d.After != "hello\nworld\n" || d.LinesAdded != 2 || d.LinesRemoved != 0 {
			t.Errorf("Diff = %+v", d)
		}
		if res.Data["isNewFile"] != true {
			t.Errorf("Data = %v", res.Data)
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		res := mustRun(t, s, "write_file", map[string]any{"file_path": "old.txt", "content": "a\nB\nc\nd\n"})
		if got := readBack(t, filepath.Join(root, "old.txt")); got != "a\nB\nc\nd\n" {
			t.Errorf("file = %q", got)
		}
		if !strings.HasPrefix(res.LLMContent, "Successfully overwrote file: ") {
			t.Errorf("LLMContent = %q", res.LLMContent)
		}
		if d := res.Diff; d.Before != "a\nb\nc\n" || d.LinesAdded != 2 || d.LinesRemoved != 1 {
			t.Errorf("Diff = %+v", d)
		}
	})
	t.Run("keeps CRLF", func(t *testing.T) {
		mustRun(t, s, "write_file", map[string]any{"file_path": "crlf.txt", "content": "x\ny\n"})
		if got := readBack(t, filepath.Join(root, "crlf.txt")); got != "x\r\ny\r\n" {
			t.Errorf("file = %q", got)
		}
	})
	t.Run("empty content", func(t *testing.T) {
		mustRun(t, s, "write_file", map[string]any{"file_path": "empty.txt", "content": ""})
		if got := readBack(t, filepath.Join(root, "empty.txt")); got != "" {
			t.Errorf("file = %q", got)
		}
	})

	for _, tc := range []struct {
		name string
		args map[string]any
		want ErrorType
		msg  string
	}{
		{"directory", map[string]any{"file_path": "dir", "content": "x"}, ErrTargetIsDirectory, "directory"},
		{"no content", map[string]any{"file_path": "a.txt"}, ErrInvalidParams, "content"},
		{"empty path", map[string]any{"file_path": "", "content": "x"}, ErrInvalidParams, "file_path"},
		{"placeholder", map[string]any{"file_path": "a.go", "content": "func a() {}\n// rest of methods ...\n"}, ErrInvalidParams, "omission placeholder"},
		{"dotdot", map[string]any{"file_path": "../escape.txt", "content": "x"}, ErrPathNotInWorkspace, "escape.txt"},
		{"absolute outside", map[string]any{"file_path": filepath.Join(outside, "abs.txt"), "content": "x"}, ErrPathNotInWorkspace, outside},
		{"through symlinked parent", map[string]any{"file_path": "outdir/evil.txt", "content": "x"}, ErrPathNotInWorkspace, "outdir"},
		{"new dirs under symlinked parent", map[string]any{"file_path": "outdir/a/b/evil.txt", "content": "x"}, ErrPathNotInWorkspace, "outdir"},
		{"dangling symlink", map[string]any{"file_path": "dangling.txt", "content": "x"}, ErrPathNotInWorkspace, "target.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "write_file", tc.args)
			wantToolError(t, err, tc.want, tc.msg)
		})
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files were written outside the workspace: %v", entries)
	}
}

func TestOmissionPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"(rest of methods ...)", 1},
		{"  // rest of code ...", 1},
		{"// Unchanged   Code ....", 1},
		{"rest of ... more", 0},
		{"x := a...", 0},
		{"fmt.Println(\"...\")", 0},
		{"// rest of the story ...", 0},
	} {
		if got := len(omissionPlaceholders(tc.text)); got != tc.want {
			t.Errorf("omissionPlaceholders(%q) found %d, want %d", tc.text, got, tc.want)
		}
	}
}
