package tools

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ignoreFileNames are the ignore files the file tools read, relative to the
// git top (which here is the workspace root).
var ignoreFileNames = []string{
	".gitignore",
	"sub/.gitignore",
	".geminiignore",
	".agentryignore",
	".git/info/exclude",
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hostileIgnoreSet returns a tool set over a git work tree whose ignore
// file name is made by mk, and the log its warnings go to.
func hostileIgnoreSet(t *testing.T, name string, mk func(t *testing.T, p string)) (*Set, string, *syncBuffer) {
	t.Helper()
	root := realDir(t)
	initGit(t, root)
	writeFiles(t, root, map[string]string{"sub/a.txt": "needle\n"})
	mk(t, filepath.Join(root, filepath.FromSlash(name)))
	s, logs := setWithLog(t, root)
	return s, root, logs
}

// setWithLog returns a tool set over a workspace at root whose warnings
// go to the returned buffer.
func setWithLog(t *testing.T, root string) (*Set, *syncBuffer) {
	t.Helper()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ws.warnings.log = slog.New(slog.NewTextHandler(logs, nil))
	s, err := NewSet(Config{Workspace: ws, TempDir: realDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, logs
}

// callsReturn runs read_file and grep_search, which consult every ignore
// file, and fails the test if they do not return: an ignore file that
// blocks the open or the read would hang them.
func callsReturn(t *testing.T, s *Set) (readErr error, grep Result) {
	t.Helper()
	type out struct {
		err  error
		grep Result
	}
	done := make(chan out, 1)
	go func() {
		tool, _ := s.Lookup("read_file")
		_, err := tool.Execute(t.Context(), Call{ID: "r", Args: map[string]any{"file_path": "sub/a.txt"}})
		tool, _ = s.Lookup("grep_search")
		g, _ := tool.Execute(t.Context(), Call{ID: "g", Args: map[string]any{"pattern": "needle"}})
		done <- out{err, g}
	}()
	select {
	case o := <-done:
		return o.err, o.grep
	case <-time.After(hangGuard):
		t.Fatalf("read_file and grep_search did not return within %v", hangGuard)
	}
	return nil, Result{}
}

// TestIgnoreFileFIFO makes each ignore file a FIFO: the tools neither
// block on it nor fail; they warn once and go on without its rules.
func TestIgnoreFileFIFO(t *testing.T) {
	for _, name := range append(ignoreFileNames, ".git") {
		t.Run(name, func(t *testing.T) {
			s, _, logs := hostileIgnoreSet(t, name, func(t *testing.T, p string) {
				if name == ".git" {
					os.RemoveAll(p)
				}
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			})
			for range 2 {
				err, g := callsReturn(t, s)
				if err != nil {
					t.Fatalf("read_file: %v", err)
				}
				if g.Data["matchCount"] != 1 {
					t.Fatalf("grep_search: %s", g.LLMContent)
				}
			}
			if name == ".git" {
				return // a .git that is not a directory holds no exclude file
			}
			if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
				t.Errorf("%d warnings over two calls, want 1:\n%s", n, logs)
			}
			if !strings.Contains(logs.String(), "not a regular file") {
				t.Errorf("warning does not say why the file was skipped:\n%s", logs)
			}
		})
	}
}

// TestIgnoreFileDevZero makes each ignore file a symlink to /dev/zero,
// which has no end: it is not read.
func TestIgnoreFileDevZero(t *testing.T) {
	for _, name := range ignoreFileNames {
		t.Run(name, func(t *testing.T) {
			s, _, logs := hostileIgnoreSet(t, name, func(t *testing.T, p string) {
				mustSymlink(t, "/dev/zero", p)
			})
			var err error
			alloc := allocatedBy(func() { err, _ = callsReturn(t, s) })
			if err != nil {
				t.Fatalf("read_file: %v", err)
			}
			if alloc > 16<<20 {
				t.Errorf("the calls allocated %d MB, want under 16 MB", alloc>>20)
			}
			if !strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("no warning about the skipped ignore file")
			}
		})
	}
}

// TestIgnoreFileOutsideWorkspace makes each ignore file a symlink to a
// file outside the workspace that ignores everything: its rules do not
// apply, so the file stays readable.
func TestIgnoreFileOutsideWorkspace(t *testing.T) {
	outside := realDir(t)
	writeFiles(t, outside, map[string]string{"ignore-all": "*\n"})
	for _, name := range ignoreFileNames {
		for _, target := range []string{"absolute", "relative"} {
			t.Run(name+"/"+target, func(t *testing.T) {
				s, _, _ := hostileIgnoreSet(t, name, func(t *testing.T, p string) {
					tgt := filepath.Join(outside, "ignore-all")
					if target == "relative" {
						var err error
						if tgt, err = filepath.Rel(filepath.Dir(p), tgt); err != nil {
							t.Fatal(err)
						}
					}
					mustSymlink(t, tgt, p)
				})
				err, g := callsReturn(t, s)
				if err != nil {
					t.Fatalf("read_file: %v", err)
				}
				if g.Data["matchCount"] != 1 {
					t.Fatalf("grep_search: %s", g.LLMContent)
				}
			})
		}
	}
}

// TestIgnoreFileAboveWorkspace puts the hostile files at a git top above
// the workspace: they are read confined to that top, and bounded.
func TestIgnoreFileAboveWorkspace(t *testing.T) {
	top := realDir(t)
	initGit(t, top)
	root := filepath.Join(top, "ws")
	writeFiles(t, root, map[string]string{"sub/a.txt": "needle\n"})
	writeFiles(t, top, map[string]string{"ok/.gitignore": "*.txt\n"})
	if err := syscall.Mkfifo(filepath.Join(top, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "/dev/zero", filepath.Join(top, ".git", "info", "exclude"))
	s, logs := setWithLog(t, root)
	if err, _ := callsReturn(t, s); err != nil {
		t.Fatalf("read_file: %v", err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("%d warnings, want one for each of the two files:\n%s", n, logs)
	}
}
