package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	const source = "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"
	for _, tc := range []struct {
		name     string
		file     string // initial content; "" with noFile means absent
		noFile   bool
		args     map[string]any
		want     string // content afterwards
		wantErr  ErrorType
		errMsg   string
		occurred int
	}{
		{
			name:     "single occurrence",
			file:     source,
			args:     map[string]any{"old_string": "func A() int {\n\treturn 1", "new_string": "func A() int {\n\treturn 2"},
			want:     strings.Replace(source, "return 1", "return 2", 1),
			occurred: 1,
		},
		{
			name:    "two occurrences without allow_multiple",
			file:    source,
			args:    map[string]any{"old_string": "return 1", "new_string": "return 2"},
			want:    source,
			wantErr: ErrEditMultipleMatches,
			errMsg:  "Expected 1 occurrence but found 2",
		},
		{
			name:     "allow_multiple replaces all",
			file:     source,
			args:     map[string]any{"old_string": "return 1", "new_string": "return 2", "allow_multiple": true},
			want:     strings.ReplaceAll(source, "return 1", "return 2"),
			occurred: 2,
		},
		{
			name:     "allow_multiple with one occurrence",
			file:     source,
			args:     map[string]any{"old_string": "func B", "new_string": "func C", "allow_multiple": true},
			want:     strings.Replace(source, "func B", "func C", 1),
			occurred: 1,
		},
		{
			name:    "no occurrence",
			file:    source,
			args:    map[string]any{"old_string": "return 3", "new_string": "return 4"},
			want:    source,
			wantErr: ErrEditNoOccurrence,
			errMsg:  "0 occurrences found for old_string",
		},
		{
			name:    "no change",
			file:    source,
			args:    map[string]any{"old_string": "func A", "new_string": "func A"},
			want:    source,
			wantErr: ErrEditNoChange,
			errMsg:  "identical",
		},
		{
			name:     "indentation-insensitive match is re-indented",
			file:     "func A() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			args:     map[string]any{"old_string": "if x {\n    y()\n}", "new_string": "if x {\n    z()\n}"},
			want:     "func A() {\n\tif x {\n\t    z()\n\t}\n}\n",
			occurred: 1,
		},
		{
			name:     "CRLF file keeps CRLF",
			file:     "a\r\nb\r\nc\r\n",
			args:     map[string]any{"old_string": "b\nc", "new_string": "B\nC"},
			want:     "a\r\nB\r\nC\r\n",
			occurred: 1,
		},
		{
			name:     "dollar signs are literal",
			file:     "x = 1\n",
			args:     map[string]any{"old_string": "x = 1", "new_string": "x = $1 $& $$"},
			want:     "x = $1 $& $$\n",
			occurred: 1,
		},
		{
			name:     "empty old_string creates a missing file",
			noFile:   true,
			args:     map[string]any{"old_string": "", "new_string": "new content\n"},
			want:     "new content\n",
			occurred: 1,
		},
		{
			name:    "empty old_string on an existing file",
			file:    source,
			args:    map[string]any{"old_string": "", "new_string": "x"},
			want:    source,
			wantErr: ErrCreateExisting,
			errMsg:  "File already exists",
		},
		{
			name:    "missing file",
			noFile:  true,
			args:    map[string]any{"old_string": "a", "new_string": "b"},
			wantErr: ErrFileNotFound,
			errMsg:  "Use an empty old_string to create a new file",
		},
		{
			name:    "new placeholder",
			file:    source,
			args:    map[string]any{"old_string": "func B() int {", "new_string": "// rest of code ..."},
			want:    source,
			wantErr: ErrInvalidParams,
			errMsg:  "omission placeholder",
		},
		{
			name:    "missing new_string",
			file:    source,
			args:    map[string]any{"old_string": "func B"},
			want:    source,
			wantErr: ErrInvalidParams,
			errMsg:  "new_string",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := newTestSet(t, Config{})
			p := filepath.Join(root, "sub", "f.go")
			if !tc.noFile {
				writeFiles(t, root, map[string]string{"sub/f.go": tc.file})
			}
			a := map[string]any{"file_path": "sub/f.go", "instruction": "change it"}
			for k, v := range tc.args {
				a[k] = v
			}
			res, err := run(t, s, "replace", a)
			if tc.wantErr != "" {
				wantToolError(t, err, tc.wantErr, tc.errMsg)
			} else if err != nil {
				t.Fatalf("replace: %v", err)
			}
			b, rerr := os.ReadFile(p)
			if tc.noFile && tc.wantErr != "" {
				if rerr == nil {
					t.Errorf("file was created: %q", b)
				}
				return
			}
			if rerr != nil {
				t.Fatal(rerr)
			}
			if string(b) != tc.want {
				t.Errorf("file = %q, want %q", b, tc.want)
			}
			if tc.wantErr != "" {
				return
			}
			if res.Data["occurrences"] != tc.occurred {
				t.Errorf("occurrences = %v, want %d", res.Data["occurrences"], tc.occurred)
			}
			if res.Diff == nil || res.Diff.Path != p || res.Diff.After != tc.want {
				t.Errorf("Diff = %+v", res.Diff)
			}
			if !strings.Contains(res.LLMContent, "Here is the updated code:") {
				t.Errorf("LLMContent = %q", res.LLMContent)
			}
		})
	}
}

func TestReplaceMessages(t *testing.T) {
	s, root := newTestSet(t, Config{})
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString("line\n")
	}
	writeFiles(t, root, map[string]string{"f.txt": strings.Replace(b.String(), "line", "target", 1)})
	// Make line 20 unique and change it: the snippet shows 5 lines of
	// context around it and "..." for the rest.
	content := readBack(t, filepath.Join(root, "f.txt"))
	lines := strings.Split(content, "\n")
	lines[19] = "twenty"
	writeFiles(t, root, map[string]string{"f.txt": strings.Join(lines, "\n")})
	res := mustRun(t, s, "replace", map[string]any{"file_path": "f.txt", "instruction": "i", "old_string": "twenty", "new_string": "TWENTY"})
	want := "Successfully modified file: " + filepath.Join(root, "f.txt") + " (1 replacements). Here is the updated code:\n...\nline\nline\nline\nline\nline\nTWENTY\nline\nline\nline\nline\nline\n..."
	if res.LLMContent != want {
		t.Errorf("LLMContent =\n%q\nwant\n%q", res.LLMContent, want)
	}
	if res.Diff.LinesAdded != 1 || res.Diff.LinesRemoved != 1 {
		t.Errorf("Diff counts = +%d -%d", res.Diff.LinesAdded, res.Diff.LinesRemoved)
	}

	res = mustRun(t, s, "replace", map[string]any{"file_path": "new/made.txt", "instruction": "i", "old_string": "", "new_string": "hi"})
	if want := "Created new file: " + filepath.Join(root, "new", "made.txt") + " with provided content. Here is the updated code:\nhi"; res.LLMContent != want {
		t.Errorf("LLMContent = %q", res.LLMContent)
	}
}

func TestReplaceEscapes(t *testing.T) {
	s, root := newTestSet(t, Config{})
	outside := realDir(t)
	writeFiles(t, outside, map[string]string{"t.txt": "secret"})
	mustSymlink(t, filepath.Join(outside, "t.txt"), filepath.Join(root, "link.txt"))
	mustSymlink(t, outside, filepath.Join(root, "outdir"))
	for _, p := range []string{"link.txt", "outdir/t.txt", "outdir/new.txt", "../x.txt", filepath.Join(outside, "t.txt")} {
		_, err := run(t, s, "replace", map[string]any{"file_path": p, "instruction": "i", "old_string": "", "new_string": "pwned"})
		wantToolError(t, err, ErrPathNotInWorkspace)
	}
	if got := readBack(t, filepath.Join(outside, "t.txt")); got != "secret" {
		t.Errorf("outside file changed: %q", got)
	}
}
