package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	s, root := newTestSet(t, Config{})
	initGit(t, root)
	var big strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&big, "needle %d\n", i)
	}
	writeFiles(t, root, map[string]string{
		".gitignore":          "ignored/\n",
		"src/a.go":            "package a\n\nfunc Alpha() {}\n// TODO: alpha\n",
		"src/b.ts":            "const beta = 1;\n// todo beta\n",
		"docs/readme.md":      "TODO in docs\n",
		"ignored/x.go":        "TODO ignored\n",
		"node_modules/m.js":   "TODO module\n",
		"bin.dat":             "TODO\x00binary",
		"big/many.txt":        big.String(),
		"other/context.txt":   "l1\nl2\nl3\nfind me\nl5\n",
		"other/nomatch.txt":   "nothing\n",
		"deep/x/y/target.tsx": "TODO tsx\n",
	})

	t.Run("few matches get context", func(t *testing.T) {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": "find me"})
		want := "Found 1 match for pattern \"find me\" in the workspace directory:\n---\nFile: other/context.txt\nL1- l1\nL2- l2\nL3- l3\nL4: find me\nL5- l5\nL6- \n---"
		if res.LLMContent != want {
			t.Errorf("LLMContent =\n%q\nwant\n%q", res.LLMContent, want)
		}
	})
	t.Run("case-insensitive, ignores respected", func(t *testing.T) {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": `todo`, "names_only": true})
		want := "Found 4 files with matches for pattern \"todo\" in the workspace directory:\ndeep/x/y/target.tsx\ndocs/readme.md\nsrc/a.go\nsrc/b.ts"
		if res.LLMContent != want {
			t.Errorf("LLMContent =\n%s\nwant\n%s", res.LLMContent, want)
		}
	})
	t.Run("format of many matches", func(t *testing.T) {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": `TODO`, "dir_path": "src"})
		want := "Found 2 matches for pattern \"TODO\" in path \"src\":\n---\nFile: a.go\n"
		if !strings.HasPrefix(res.LLMContent, want) || !strings.Contains(res.LLMContent, "L4: // TODO: alpha\n") ||
			!strings.Contains(res.LLMContent, "File: b.ts\nL1- const beta = 1;\nL2: // todo beta\nL3- \n---") {
			t.Errorf("LLMContent =\n%s", res.LLMContent)
		}
		if res.Data["matchCount"] != 2 {
			t.Errorf("Data = %v", res.Data)
		}
	})
	t.Run("include pattern", func(t *testing.T) {
		for _, inc := range []string{"*.{ts,tsx}", "**/*.tsx", "deep/**"} {
			res := mustRun(t, s, "grep_search", map[string]any{"pattern": "todo", "include_pattern": inc, "names_only": true})
			if !strings.Contains(res.LLMContent, "deep/x/y/target.tsx") || strings.Contains(res.LLMContent, "a.go") {
				t.Errorf("include %q: %s", inc, res.LLMContent)
			}
			if !strings.Contains(res.LLMContent, fmt.Sprintf("(filter: %q)", inc)) {
				t.Errorf("include %q: filter not reported: %s", inc, res.LLMContent)
			}
		}
	})
	t.Run("exclude pattern", func(t *testing.T) {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": "todo", "exclude_pattern": "beta|docs|tsx", "names_only": true})
		if res.LLMContent != "Found 1 files with matches for pattern \"todo\" in the workspace directory:\nsrc/a.go" {
			t.Errorf("LLMContent = %s", res.LLMContent)
		}
	})
	t.Run("limits", func(t *testing.T) {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": "needle"})
		if res.Data["matchCount"] != 100 || !strings.Contains(res.LLMContent, "Found 100 matches for pattern \"needle\" in the workspace directory (results limited to 100 matches for performance):") {
			t.Errorf("default limit: %v %s", res.Data, res.LLMContent[:200])
		}
		res = mustRun(t, s, "grep_search", map[string]any{"pattern": "needle", "total_max_matches": 7.0})
		if res.Data["matchCount"] != 7 || res.Display != "Found 7 matches (limited)" {
			t.Errorf("total_max_matches: %v %q", res.Data, res.Display)
		}
		res = mustRun(t, s, "grep_search", map[string]any{"pattern": "needle|todo", "max_matches_per_file": 1.0, "names_only": true})
		if res.Data["matchCount"] != 5 {
			t.Errorf("max_matches_per_file: %v", res.Data)
		}
	})
	t.Run("no match", func(t *testing.T) {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": "zzz", "include_pattern": "*.go"})
		if res.LLMContent != `No matches found for pattern "zzz" in the workspace directory (filter: "*.go").` {
			t.Errorf("LLMContent = %q", res.LLMContent)
		}
	})
	t.Run("alias", func(t *testing.T) {
		mustRun(t, s, "search_file_content", map[string]any{"pattern": "zzz"})
	})

	for _, tc := range []struct {
		name string
		args map[string]any
		want ErrorType
		msg  string
	}{
		{"bad regexp", map[string]any{"pattern": "a("}, ErrInvalidParams, "Invalid regular expression pattern provided: a("},
		{"bad exclude", map[string]any{"pattern": "a", "exclude_pattern": "[z"}, ErrInvalidParams, "Invalid exclude regular expression"},
		{"zero total", map[string]any{"pattern": "a", "total_max_matches": 0.0}, ErrInvalidParams, "total_max_matches must be >= 1"},
		{"missing dir", map[string]any{"pattern": "a", "dir_path": "nope"}, ErrFileNotFound, "Path does not exist"},
		{"file as dir", map[string]any{"pattern": "a", "dir_path": "src/a.go"}, ErrPathIsNotDirectory, "Path is not a directory"},
		{"outside", map[string]any{"pattern": "a", "dir_path": "../"}, ErrPathNotInWorkspace, "Path not in workspace"},
		{"no pattern", map[string]any{}, ErrInvalidParams, "pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, s, "grep_search", tc.args)
			wantToolError(t, err, tc.want, tc.msg)
		})
	}
}

func TestGrepSkipsSymlinksOutside(t *testing.T) {
	s, root := newTestSet(t, Config{})
	outside := realDir(t)
	writeFiles(t, outside, map[string]string{"secret.txt": "password=hunter2\n"})
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt"))
	res := mustRun(t, s, "grep_search", map[string]any{"pattern": "password"})
	if strings.Contains(res.LLMContent, "hunter2") {
		t.Errorf("grep followed a symlink out of the workspace: %s", res.LLMContent)
	}
}

func TestRequiredLiteral(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"func NewSchema", "func NewSchema"},
		{`func\s+(\w+)Handler`, "Handler"},
		{`\bTODO\b`, "TODO"},
		{"(abc)+x", "abc"},
		{"foo|bar", ""},
		{"a?", ""},
		{"héllo", ""}, // not ASCII
		{"x{2,}", "x"},
	} {
		if got := requiredLiteral(tc.pattern); got != tc.want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

func TestGrepFoldsLikeRegexp(t *testing.T) {
	s, root := newTestSet(t, Config{})
	// The Kelvin sign and the long s fold to ASCII letters: the literal
	// prefilter must not hide these matches.
	writeFiles(t, root, map[string]string{"k.txt": "\u212aelvin\n", "s.txt": "\u017ftop\n", "u.txt": "naïve MIXED case\n"})
	for pattern, file := range map[string]string{"kelvin": "k.txt", "STOP": "s.txt", "mixed CASE": "u.txt"} {
		res := mustRun(t, s, "grep_search", map[string]any{"pattern": pattern, "names_only": true})
		if !strings.HasSuffix(res.LLMContent, "\n"+file) {
			t.Errorf("%q: %s", pattern, res.LLMContent)
		}
	}
}
