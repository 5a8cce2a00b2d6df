package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// allocatedBy returns how many bytes fn allocated on the heap.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// editCalls are a write_file and a replace call on path, each run through
// Execute and through Preview.
func editCalls(t *testing.T, s *Set, path string) map[string]func() error {
	t.Helper()
	writeArgs := map[string]any{"file_path": path, "content": "small\n"}
	replaceArgs := map[string]any{"file_path": path, "instruction": "change", "old_string": "a", "new_string": "b"}
	exec := func(name string, a map[string]any) func() error {
		return func() error { _, err := run(t, s, name, a); return err }
	}
	preview := func(name string, a map[string]any) func() error {
		tool, _ := s.Lookup(name)
		return func() error { _, err := tool.(Previewer).Preview(a); return err }
	}
	return map[string]func() error{
		"write_file Execute": exec("write_file", writeArgs),
		"write_file Preview": preview("write_file", writeArgs),
		"replace Execute":    exec("replace", replaceArgs),
		"replace Preview":    preview("replace", replaceArgs),
	}
}

// TestEditToolsRefuseHugeFile points write_file and replace, and their
// approval previews, at an 8 GB (sparse) file: each fails at once with an
// error naming the file, its size, the limit and what to do instead, and
// reads none of it.
func TestEditToolsRefuseHugeFile(t *testing.T) {
	s, root := newTestSet(t, Config{})
	p := filepath.Join(root, "huge.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, call := range editCalls(t, s, "huge.log") {
		t.Run(name, func(t *testing.T) {
			var err error
			alloc := allocatedBy(func() { err = call() })
			wantToolError(t, err, ErrFileTooLarge, p, "8192.00 MB", "20 MB", "run_shell_command")
			if alloc > 4<<20 {
				t.Errorf("allocated %d MB refusing the file, want under 4 MB", alloc>>20)
			}
		})
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != 8<<30 {
		t.Errorf("huge file after the calls: %v, %v", fi, err)
	}
}

// TestEditToolsBoundDiff rewrites a 4 MB file with entirely different
// content: the change is made and described, but its line diff, whose cost
// grows with the size of the change, is not computed; a summary stands in.
func TestEditToolsBoundDiff(t *testing.T) {
	s, root := newTestSet(t, Config{})
	var before, after strings.Builder
	for i := range 300_000 {
		fmt.Fprintf(&before, "line %d\n", i)
		fmt.Fprintf(&after, "other %d\n", i)
	}
	writeFiles(t, root, map[string]string{"big.txt": before.String()})
	tool, _ := s.Lookup("write_file")
	a := map[string]any{"file_path": "big.txt", "content": after.String()}

	var d *FileDiff
	var err error
	alloc := allocatedBy(func() { d, err = tool.(Previewer).Preview(a) })
	if err != nil {
		t.Fatal(err)
	}
	if d.LinesAdded != 300_000 || d.LinesRemoved != 300_000 || d.Before != before.String() || d.After != after.String() {
		t.Errorf("Preview diff: +%d -%d, before %d bytes, after %d bytes", d.LinesAdded, d.LinesRemoved, len(d.Before), len(d.After))
	}
	// The file (4 MB) and the new content (4 MB) are held, a copy or two
	// of each; the line diff of them would take about 300 MB.
	if alloc > 40<<20 {
		t.Errorf("Preview allocated %d MB, want under 40 MB", alloc>>20)
	}

	var res Result
	alloc = allocatedBy(func() { res = mustRun(t, s, "write_file", a) })
	if alloc > 40<<20 {
		t.Errorf("Execute allocated %d MB, want under 40 MB", alloc>>20)
	}
	if !strings.Contains(res.LLMContent, "too large to show a diff") {
		t.Errorf("LLMContent = %.200q…, want a note that the diff is too large to show", res.LLMContent)
	}
	if got := readBack(t, filepath.Join(root, "big.txt")); got != after.String() {
		t.Errorf("file after write_file: %d bytes, want %d", len(got), after.Len())
	}
}

// TestEditToolsRefuseFIFO points write_file and replace, and their
// previews, at a FIFO: each is refused without waiting for a writer.
func TestEditToolsRefuseFIFO(t *testing.T) {
	s, root := newTestSet(t, Config{})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, call := range editCalls(t, s, "pipe") {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- call() }()
			select {
			case err := <-done:
				wantToolError(t, err, ErrFileWriteFailure, "not a regular file")
			case <-time.After(hangGuard):
				t.Fatalf("%s on a FIFO did not return within %v", name, hangGuard)
			}
		})
	}
}
