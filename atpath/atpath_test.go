package atpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentry-dev/agentry/atpath"
	"github.com/agentry-dev/agentry/tools"
)

// workspace builds the workspace the expectations below were observed in:
// a git repository with a .gitignore and a .geminiignore.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".git/HEAD":       "ref: refs/heads/main\n",
		".gitignore":      "*.log\n",
		".geminiignore":   "sec.txt\n",
		"a.txt":           "line1\nline2\n",
		"sub/b.go":        "inner\n",
		"sub/ignored.log": "ign\n",
		"sec.txt":         "secret\n",
		"dir x/f y.txt":   "spaced\n",
		"bin.dat":         "\x00\x01\x02binary",
		"only/z.log":      "z\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExpand checks the parts sent to the model. Each expectation is the
// parts gemini-cli 0.61.0 sent after its session context for the same
// prompt in the same workspace (gemini -p, captured at a local HTTP
// server standing in for the Gemini API).
func TestExpand(t *testing.T) {
	t.Parallel()
	const start, end = "\n--- Content from referenced files ---", "\n--- End of content ---"
	tests := []struct {
		name    string
		prompt  string
		parts   []string
		ignored []string
	}{
		{
			name:   "file, directory and ignored references",
			prompt: "look at @a.txt and @sub and @sec.txt and @sub/ignored.log done",
			parts: []string{"look at @a.txt and @sub/** and @sec.txt and @sub/ignored.log done", start,
				"\nContent from @a.txt:\n", "line1\nline2", "\nContent from @sub/b.go:\n", "inner", end},
			ignored: []string{"@sec.txt", "@sub/ignored.log"},
		},
		{
			name:   "escapes, binary file, full stop, search by name",
			prompt: `A @dir\ x/f\ y.txt C \@a.txt D @bin.dat F @sub. G @b.go, end`,
			parts: []string{`A @dir x/f y.txt C \@a.txt D @bin.dat F @sub/**. G @sub/b.go, end`, start,
				"\nContent from @bin.dat:\n", "Cannot display content of binary file: bin.dat",
				"\nContent from @dir x/f y.txt:\n", "spaced", "\nContent from @b.go:\n", "inner", end},
		},
		{
			name:   "directory with nothing to read",
			prompt: "see @only please",
			parts:  []string{"see @only/** please", start, "No files matching the criteria were found or all were skipped."},
		},
		{
			name:   "no reference",
			prompt: `plain \@x text`,
			parts:  []string{`plain \@x text`},
		},
		{
			name:   "white space between references",
			prompt: "@a.txt\n@sub/b.go",
			parts:  []string{"@a.txt @sub/b.go", start, "\nContent from @a.txt:\n", "line1\nline2", "\nContent from @sub/b.go:\n", "inner", end},
		},
		{
			// Not observed in gemini-cli, which keeps the quotes and then
			// finds nothing: a quoted reference may hold spaces.
			name:   "quoted path",
			prompt: `read @"dir x/f y.txt" now`,
			parts:  []string{"read @dir x/f y.txt now", start, "\nContent from @dir x/f y.txt:\n", "spaced", end},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, err := tools.NewWorkspace(workspace(t))
			if err != nil {
				t.Fatal(err)
			}
			res, err := atpath.Expand(t.Context(), ws, tt.prompt)
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			if !slices.Equal(res.Parts, tt.parts) {
				t.Errorf("parts =\n%q\nwant\n%q", res.Parts, tt.parts)
			}
			if !slices.Equal(res.Ignored, tt.ignored) {
				t.Errorf("ignored = %q, want %q", res.Ignored, tt.ignored)
			}
		})
	}
}

// TestExpandAbsoluteAndIncluded checks absolute references and references
// into an include directory, named relative to their root.
func TestExpandAbsoluteAndIncluded(t *testing.T) {
	t.Parallel()
	root := workspace(t)
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "lib.txt"), []byte("library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(root, other)
	if err != nil {
		t.Fatal(err)
	}
	realRoot, realOther := ws.Roots()[0], ws.Roots()[1]
	res, err := atpath.Expand(t.Context(), ws, "compare @"+filepath.Join(realRoot, "a.txt")+" with @lib.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"compare @a.txt with @lib.txt", "\n--- Content from referenced files ---",
		"\nContent from @lib.txt:\n", "library", "\nContent from @a.txt:\n", "line1\nline2", "\n--- End of content ---"}
	if realOther > realRoot {
		want[2], want[3], want[4], want[5] = want[4], want[5], want[2], want[3]
	}
	if !slices.Equal(res.Parts, want) {
		t.Errorf("parts =\n%q\nwant\n%q", res.Parts, want)
	}
}

// TestExpandErrors checks the references agentry refuses: nothing by that
// name in the workspace, or a path outside it.
func TestExpandErrors(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prompt string
		is     error
		msg    string
	}{
		{"read @missing.txt", atpath.ErrNotFound, "@missing.txt: no such file or directory in the workspace (write \\@ for a literal @)"},
		{"read @" + outside, atpath.ErrOutside, ""},
		{"read @../escape.txt", atpath.ErrOutside, ""},
		{"read @/nonexistent/file", atpath.ErrOutside, ""},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			t.Parallel()
			ws, err := tools.NewWorkspace(workspace(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = atpath.Expand(t.Context(), ws, tt.prompt)
			var re *atpath.RefError
			if !errors.Is(err, tt.is) || !errors.As(err, &re) {
				t.Fatalf("Expand error = %v, want %v", err, tt.is)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("message = %q, want %q", err.Error(), tt.msg)
			}
		})
	}
}
