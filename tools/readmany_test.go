package tools

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestReadManyFiles(t *testing.T) {
	s, root := newTestSet(t, Config{})
	initGit(t, root)
	outside := realDir(t)
	writeFiles(t, outside, map[string]string{"secret.md": "secret"})
	writeFiles(t, root, map[string]string{
		".gitignore":          "private/\n",
		"src/a.ts":            "A",
		"src/b.ts":            "B",
		"src/sub/c.ts":        "C",
		"src/x.log":           "log",
		"docs/guide.md":       "guide",
		"docs/img.png":        "\x89PNG\r\n\x1a\n\x00",
		"node_modules/m/i.ts": "M",
		"dist/out.ts":         "D",
		".env":                "KEY=1",
		"private/p.ts":        "P",
		"AGENTRY.md":          "context",
		"bin.dat":             "\x00\x01",
	})
	mustSymlink(t, filepath.Join(outside, "secret.md"), filepath.Join(root, "docs", "link.md"))
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	t.Run("concatenation format", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"src/**/*.ts"}})
		want := "--- " + abs("src/a.ts") + " ---\n\nA\n\n" +
			"--- " + abs("src/b.ts") + " ---\n\nB\n\n" +
			"--- " + abs("src/sub/c.ts") + " ---\n\nC\n\n" +
			"\n--- End of content ---"
		if res.LLMContent != want {
			t.Errorf("LLMContent =\n%q\nwant\n%q", res.LLMContent, want)
		}
		if files := res.Data["files"].([]string); len(files) != 3 || files[0] != "src/a.ts" {
			t.Errorf("files = %v", files)
		}
	})
	t.Run("default excludes and ignore files", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"**/*.ts", ".env", "AGENTRY.md"}})
		for _, absent := range []string{"node_modules", "dist/out.ts", ".env", "private/p.ts", "AGENTRY.md"} {
			if strings.Contains(res.LLMContent, absent) {
				t.Errorf("%s was read:\n%s", absent, res.LLMContent)
			}
		}
		skipped := res.Data["skipped"].([]skippedFile)
		if len(skipped) != 1 || skipped[0].Reason != "ignored by project ignore files" || skipped[0].Path != "1 file(s)" {
			t.Errorf("skipped = %+v", skipped)
		}
	})
	t.Run("without default excludes", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"dist/*.ts", ".env"}, "useDefaultExcludes": false})
		if !strings.Contains(res.LLMContent, "--- "+abs("dist/out.ts")+" ---") || !strings.Contains(res.LLMContent, "KEY=1") {
			t.Errorf("LLMContent = %s", res.LLMContent)
		}
	})
	t.Run("user excludes", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"src/**"}, "exclude": []any{"**/*.log", "src/sub/"}})
		if files := res.Data["files"].([]string); strings.Join(files, ",") != "src/a.ts,src/b.ts" {
			t.Errorf("files = %v", files)
		}
	})
	t.Run("directories and literal paths", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"docs/", "src/a.ts"}})
		files := res.Data["files"].([]string)
		if strings.Join(files, ",") != "docs/guide.md,src/a.ts" {
			t.Errorf("files = %v", files)
		}
		var reasons []string
		for _, sk := range res.Data["skipped"].([]skippedFile) {
			reasons = append(reasons, sk.Path+": "+sk.Reason)
		}
		joined := strings.Join(reasons, "\n")
		if !strings.Contains(joined, "docs/img.png: asset file (image/pdf/audio) was not explicitly requested") ||
			!strings.Contains(joined, "Security: Path not in workspace") {
			t.Errorf("skipped = %s", joined)
		}
		if strings.Contains(res.LLMContent, "secret") {
			t.Errorf("read through a symlink out of the workspace")
		}
	})
	t.Run("explicitly requested image and binary", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"docs/*.png", "bin.dat"}, "useDefaultExcludes": false})
		if !strings.Contains(res.LLMContent, "Cannot display content of binary file: bin.dat") ||
			!strings.Contains(res.LLMContent, "Cannot display content of image file as text: docs/img.png") {
			t.Errorf("LLMContent = %s", res.LLMContent)
		}
	})
	t.Run("nothing found", func(t *testing.T) {
		res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"*.nothing"}})
		if res.LLMContent != "No files matching the criteria were found or all were skipped." {
			t.Errorf("LLMContent = %q", res.LLMContent)
		}
	})
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"no include", map[string]any{}},
		{"empty include", map[string]any{"include": []any{}}},
		{"empty pattern", map[string]any{"include": []any{""}}},
		{"wrong type", map[string]any{"include": 3.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "read_many_files", tc.args)
			wantToolError(t, err, ErrInvalidParams, "include")
		})
	}
}
