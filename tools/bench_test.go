package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTool returns the named built-in tool over a fresh workspace holding
// a 200-line source file, src/main.go.
func benchTool(b *testing.B, name string) (Tool, string) {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var src strings.Builder
	for i := range 200 {
		fmt.Fprintf(&src, "\tline %d of the file = %d\n", i, i*i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSet(Config{Workspace: ws, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	t, ok := s.Lookup(name)
	if !ok {
		b.Fatalf("no tool %s", name)
	}
	return t, dir
}

// BenchmarkFileTools measures one call of each file tool on a 200-line
// file: what confinement, bounded reads and atomic writes cost per call.
func BenchmarkFileTools(b *testing.B) {
	for _, bc := range []struct {
		tool string
		args func(i int) map[string]any
	}{
		{"read_file", func(int) map[string]any { return map[string]any{"file_path": "src/main.go"} }},
		{"write_file", func(i int) map[string]any {
			return map[string]any{"file_path": "src/out.go", "content": fmt.Sprintf("package out // %d\n", i)}
		}},
		{"replace", func(i int) map[string]any {
			old, new := "line 100 of", "line one hundred of"
			if i%2 == 1 {
				old, new = new, old
			}
			return map[string]any{"file_path": "src/main.go", "old_string": old, "new_string": new}
		}},
	} {
		b.Run(bc.tool, func(b *testing.B) {
			t, _ := benchTool(b, bc.tool)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := t.Execute(ctx, Call{ID: "c", Args: bc.args(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
