package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	s, root := newTestSet(t, Config{})
	outside := realDir(t)
	writeFiles(t, outside, map[string]string{"secret.txt": "secret"})
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	writeFiles(t, root, map[string]string{
		"hello.txt": "one\ntwo\r\nthree",
		"many.txt":  strings.TrimSuffix(many.String(), "\n"),
		"long.txt":  strings.Repeat("x", 2500) + "\nshort",
		"bin.dat":   "\x00\x01\x02",
		"nul.txt":   "abc\x00def",
		"pic.png":   "\x89PNG\r\n\x1a\n\x00\x00",
		"bom.txt":   "\xEF\xBB\xBFbom text",
		"utf16.txt": "\xFF\xFEh\x00i\x00",
		"dir/x.txt": "x",
	})
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt"))
	mustSymlink(t, outside, filepath.Join(root, "outdir"))

	t.Run("whole file", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": "hello.txt"})
		if res.LLMContent != "one\ntwo\nthree" {
			t.Errorf("LLMContent = %q", res.LLMContent)
		}
		if res.Data["totalLines"] != 3 || res.Data["truncated"] != false {
			t.Errorf("Data = %v", res.Data)
		}
	})
	t.Run("display", func(t *testing.T) {
		// gemini-cli 0.61.0 shows nothing for a whole file and "Read lines
		// 2-3 of 4" for a range of a three-line file that ends with a
		// newline (../testdata/gemini-cli/tools.stream-json.stdout); agentry
		// counts that file's lines as three.
		writeFiles(t, root, map[string]string{"three.txt": "a\nb\nc\n", "empty.txt": ""})
		for _, tc := range []struct {
			args             map[string]any
			display, summary string
			llm              string
		}{
			{map[string]any{"file_path": "three.txt"}, "", "3 lines", "a\nb\nc\n"},
			{map[string]any{"file_path": "three.txt", "start_line": 2.0, "end_line": 3.0}, "Read lines 2-3 of 3 from three.txt", "2-3 of 3", "Showing lines 2-3 of 3 total lines"},
			{map[string]any{"file_path": "three.txt", "start_line": 2.0}, "Read lines 2-3 of 3 from three.txt", "2-3 of 3", "--- FILE CONTENT (truncated) ---\nb\nc\n"},
			{map[string]any{"file_path": "hello.txt"}, "", "3 lines", "one\ntwo\nthree"},
			{map[string]any{"file_path": "empty.txt"}, "", "0 lines", ""},
		} {
			res := mustRun(t, s, "read_file", tc.args)
			if res.Display != tc.display || res.Summary != tc.summary || !strings.Contains(res.LLMContent, tc.llm) {
				t.Errorf("read_file %v: display %q, summary %q, content %q; want %q, %q, containing %q", tc.args, res.Display, res.Summary, res.LLMContent, tc.display, tc.summary, tc.llm)
			}
		}
		_, err := run(t, s, "read_file", map[string]any{"file_path": "missing.txt"})
		if DisplayOf(err) != "File not found." || TypeOf(err) != ErrFileNotFound {
			t.Errorf("missing file: %v (display %q)", err, DisplayOf(err))
		}
		_, err = run(t, s, "read_file", map[string]any{"file_path": "dir"})
		if DisplayOf(err) != "Path is a directory." {
			t.Errorf("directory: %v (display %q)", err, DisplayOf(err))
		}
		_, err = run(t, s, "read_file", map[string]any{"file_path": filepath.Join(outside, "secret.txt")})
		if DisplayOf(err) != "Path not in workspace." {
			t.Errorf("outside: %v (display %q)", err, DisplayOf(err))
		}
	})
	t.Run("absolute path", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": filepath.Join(root, "hello.txt")})
		if !strings.HasPrefix(res.LLMContent, "one") {
			t.Errorf("LLMContent = %q", res.LLMContent)
		}
	})
	t.Run("line range", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": "many.txt", "start_line": float64(10), "end_line": float64(12)})
		for _, want := range []string{
			"IMPORTANT: The file content has been truncated.",
			"Status: Showing lines 10-12 of 2500 total lines.",
			"use start_line: 13.",
			"--- FILE CONTENT (truncated) ---\nline 10\nline 11\nline 12",
		} {
			if !strings.Contains(res.LLMContent, want) {
				t.Errorf("LLMContent lacks %q:\n%s", want, res.LLMContent)
			}
		}
		if res.Display != "Read lines 10-12 of 2500 from many.txt" {
			t.Errorf("Display = %q", res.Display)
		}
	})
	t.Run("default limit of 2000 lines", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": "many.txt"})
		if !strings.Contains(res.LLMContent, "Showing lines 1-2000 of 2500") || !strings.HasSuffix(res.LLMContent, "line 2000") {
			t.Errorf("LLMContent ends %q", res.LLMContent[len(res.LLMContent)-100:])
		}
	})
	t.Run("start line only", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": "many.txt", "start_line": float64(2400)})
		if !strings.Contains(res.LLMContent, "Showing lines 2400-2500 of 2500") {
			t.Errorf("LLMContent = %q", res.LLMContent[:200])
		}
	})
	t.Run("long lines are cut", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": "long.txt"})
		if !strings.Contains(res.LLMContent, strings.Repeat("x", 2000)+"... [truncated]\nshort") {
			t.Errorf("long line not cut as expected")
		}
		if !strings.Contains(res.Display, "some lines were shortened") {
			t.Errorf("Display = %q", res.Display)
		}
	})
	t.Run("BOMs are honoured", func(t *testing.T) {
		if res := mustRun(t, s, "read_file", map[string]any{"file_path": "bom.txt"}); res.LLMContent != "bom text" {
			t.Errorf("UTF-8 BOM: %q", res.LLMContent)
		}
		if res := mustRun(t, s, "read_file", map[string]any{"file_path": "utf16.txt"}); res.LLMContent != "hi" {
			t.Errorf("UTF-16 BOM: %q", res.LLMContent)
		}
	})
	t.Run("binary files are reported", func(t *testing.T) {
		for _, f := range []string{"bin.dat", "nul.txt"} {
			res := mustRun(t, s, "read_file", map[string]any{"file_path": f})
			if res.LLMContent != "Cannot display content of binary file: "+f {
				t.Errorf("%s: LLMContent = %q", f, res.LLMContent)
			}
		}
	})
	t.Run("images are described", func(t *testing.T) {
		res := mustRun(t, s, "read_file", map[string]any{"file_path": "pic.png"})
		if res.LLMContent != "Cannot display content of image file as text: pic.png (image/png, 10 bytes)." ||
			res.Data["mimeType"] != "image/png" || res.Data["size"] != int64(10) {
			t.Errorf("res = %+v", res)
		}
	})
	t.Run("too large", func(t *testing.T) {
		big := filepath.Join(root, "big.log")
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(maxFileSizeBytes + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = run(t, s, "read_file", map[string]any{"file_path": "big.log"})
		wantToolError(t, err, ErrFileTooLarge, "20MB")
	})

	for _, tc := range []struct {
		name string
		args map[string]any
		want ErrorType
		msg  string
	}{
		{"missing file", map[string]any{"file_path": "nope.txt"}, ErrFileNotFound, "File not found"},
		{"directory", map[string]any{"file_path": "dir"}, ErrTargetIsDirectory, "directory"},
		{"no file_path", map[string]any{}, ErrInvalidParams, "file_path"},
		{"blank file_path", map[string]any{"file_path": "  "}, ErrInvalidParams, "non-empty"},
		{"wrong type", map[string]any{"file_path": 3.0}, ErrInvalidParams, "file_path must be string"},
		{"start after end", map[string]any{"file_path": "many.txt", "start_line": 5.0, "end_line": 4.0}, ErrInvalidParams, "start_line cannot be greater than end_line"},
		{"start below 1", map[string]any{"file_path": "many.txt", "start_line": 0.0}, ErrInvalidParams, "start_line must be >= 1"},
		{"fractional line", map[string]any{"file_path": "many.txt", "start_line": 1.5}, ErrInvalidParams, "integer"},
		{"dotdot escape", map[string]any{"file_path": "../" + filepath.Base(outside) + "/secret.txt"}, ErrPathNotInWorkspace, "Path not in workspace"},
		{"absolute outside", map[string]any{"file_path": filepath.Join(outside, "secret.txt")}, ErrPathNotInWorkspace, root},
		{"symlinked file", map[string]any{"file_path": "link.txt"}, ErrPathNotInWorkspace, "secret.txt"},
		{"symlinked dir", map[string]any{"file_path": "outdir/secret.txt"}, ErrPathNotInWorkspace, "outdir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "read_file", tc.args)
			wantToolError(t, err, tc.want, tc.msg)
		})
	}
}

func TestReadFileRespectsIgnoreFiles(t *testing.T) {
	s, root := newTestSet(t, Config{})
	initGit(t, root)
	writeFiles(t, root, map[string]string{
		".gitignore":      "build/\n*.secret\n",
		".geminiignore":   "private.md\n",
		".agentryignore":  "notes/\n",
		"build/out.js":    "x",
		"key.secret":      "x",
		"private.md":      "x",
		"notes/todo.md":   "x",
		"src/visible.txt": "visible",
	})
	for _, f := range []string{"build/out.js", "key.secret", "private.md", "notes/todo.md"} {
		_, err := run(t, s, "read_file", map[string]any{"file_path": f})
		wantToolError(t, err, ErrInvalidParams, "is ignored by configured ignore patterns")
	}
	if res := mustRun(t, s, "read_file", map[string]any{"file_path": "src/visible.txt"}); res.LLMContent != "visible" {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}
}

func TestFileArgs(t *testing.T) {
	s, root := newTestSet(t, Config{})
	writeFiles(t, root, map[string]string{"src/a.txt": "A", "@types/x.txt": "types"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"@src/a.txt", "A"},
		{"@/src/a.txt", "A"},
		{"@types/x.txt", "types"}, // a real directory named with "@" is kept
	} {
		res, err := run(t, s, "read_file", map[string]any{"file_path": tc.path})
		if err != nil || res.LLMContent != tc.want {
			t.Errorf("read_file(%q) = %q, %v; want %q", tc.path, res.LLMContent, err, tc.want)
		}
	}
	_, err := run(t, s, "read_file", map[string]any{"file_path": "fifo"})
	wantToolError(t, err, ErrReadContentFailure, "not a regular file")
	_, err = run(t, s, "write_file", map[string]any{"file_path": "fifo", "content": "x"})
	wantToolError(t, err, ErrFileWriteFailure, "not a regular file")
	_, err = run(t, s, "replace", map[string]any{"file_path": "src", "instruction": "i", "old_string": "a", "new_string": "b"})
	wantToolError(t, err, ErrTargetIsDirectory)
}
