package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFileToolsSymlinkSwapRace runs read_file and write_file (and
// grep_search, glob and list_directory, which walk or list directories)
// while another
// goroutine keeps exchanging, inside the workspace, a real directory with a
// symlink to a directory outside it, and a real file with a symlink to a
// file outside it. The path check and the open are one operation, so
// nothing outside is ever read, written or created, however the calls
// interleave with the swaps.
func TestFileToolsSymlinkSwapRace(t *testing.T) {
	s, root := newTestSet(t, Config{})
	outside := realDir(t)
	const secret = "outside-secret"
	writeFiles(t, outside, map[string]string{"f.txt": secret, "outside-only.txt": secret})
	writeFiles(t, root, map[string]string{"d/f.txt": "inside", "g.txt": "inside"})
	mustSymlink(t, outside, filepath.Join(root, "d-swap"))
	mustSymlink(t, filepath.Join(outside, "f.txt"), filepath.Join(root, "g-swap"))

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// RENAME_EXCHANGE swaps the two names atomically, so d and
			// g.txt always exist, as a directory or a file one moment and
			// as a symlink leading out the next.
			unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "d"), unix.AT_FDCWD, filepath.Join(root, "d-swap"), unix.RENAME_EXCHANGE)
			unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "g.txt"), unix.AT_FDCWD, filepath.Join(root, "g-swap"), unix.RENAME_EXCHANGE)
		}
	}()

	outsideFile := filepath.Join(outside, "f.txt")
	var readEscapes, writeEscapes, listEscapes, reads, writes int
	for i := range 400 {
		path := "d/f.txt"
		if i%2 == 1 {
			path = "g.txt"
		}
		if res, err := run(t, s, "read_file", map[string]any{"file_path": path}); err == nil {
			reads++
			if strings.Contains(res.LLMContent, secret) {
				readEscapes++
			}
		}
		// Every third write creates a file, through the swapped directory.
		wpath := path
		if i%3 == 2 {
			wpath = "d/new.txt"
		}
		if _, err := run(t, s, "write_file", map[string]any{"file_path": wpath, "content": fmt.Sprintf("w%d\n", i)}); err == nil {
			writes++
		}
		if i%4 == 0 {
			// Names and contents seen through a walk or a listing.
			grep, _ := run(t, s, "grep_search", map[string]any{"pattern": secret})
			glob, _ := run(t, s, "glob", map[string]any{"pattern": "**/outside-only.txt"})
			ls, _ := run(t, s, "list_directory", map[string]any{"dir_path": "d"})
			// The patterns appear in the messages; matches and names do not.
			if grep.Data["matchCount"] != 0 {
				listEscapes++
			}
			if files, _ := glob.Data["files"].([]string); len(files) != 0 {
				listEscapes++
			}
			if strings.Contains(ls.LLMContent, "outside-only.txt") {
				listEscapes++
			}
		}
		if os.Remove(filepath.Join(outside, "new.txt")) == nil {
			writeEscapes++
		}
		if b, _ := os.ReadFile(outsideFile); string(b) != secret {
			writeEscapes++
			if err := os.WriteFile(outsideFile, []byte(secret), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()

	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if readEscapes > 0 || writeEscapes > 0 || listEscapes > 0 || len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("%d of 400 reads returned the outside file, %d of 400 writes changed or created a file there, %d of 300 searches and listings showed it; outside directory holds %v",
			readEscapes, writeEscapes, listEscapes, names)
	}
	t.Logf("%d reads and %d writes succeeded, all inside the workspace", reads, writes)
}

// TestFileToolsFollowSymlinksInside reads through symlinks, absolute and
// relative, that stay inside the workspace: confinement refuses only what
// leads out.
func TestFileToolsFollowSymlinksInside(t *testing.T) {
	s, root := newTestSet(t, Config{})
	writeFiles(t, root, map[string]string{"dir/real.txt": "content-x\n"})
	mustSymlink(t, filepath.Join(root, "dir", "real.txt"), filepath.Join(root, "abs-link.txt"))
	mustSymlink(t, "dir/real.txt", filepath.Join(root, "rel-link.txt"))
	mustSymlink(t, filepath.Join(root, "dir"), filepath.Join(root, "abs-dir"))
	for _, p := range []string{"abs-link.txt", "rel-link.txt", "abs-dir/real.txt"} {
		if res := mustRun(t, s, "read_file", map[string]any{"file_path": p}); res.LLMContent != "content-x\n" {
			t.Errorf("read_file(%s) = %q", p, res.LLMContent)
		}
	}
	res := mustRun(t, s, "read_many_files", map[string]any{"include": []any{"*-link.txt"}})
	if files, _ := res.Data["files"].([]string); len(files) != 2 {
		t.Errorf("read_many_files read %v, want both links: %s", res.Data, res.LLMContent)
	}
	res = mustRun(t, s, "grep_search", map[string]any{"pattern": "content-x"})
	if res.Data["matchCount"] != 3 {
		t.Errorf("grep_search: %s", res.LLMContent)
	}
	mustRun(t, s, "write_file", map[string]any{"file_path": "abs-dir/real.txt", "content": "new\n"})
	if got := readBack(t, filepath.Join(root, "dir", "real.txt")); got != "new\n" {
		t.Errorf("after write_file through a symlinked directory: %q", got)
	}
}
