package processors_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/processors"
)

// TestLoadMemoryRefusesHostileFiles: context files that are FIFOs, links
// to /dev/zero, links leading outside the repository or larger than 1 MiB
// are skipped with a warning naming the file and the reason, promptly;
// the others are read.
func TestLoadMemoryRefusesHostileFiles(t *testing.T) {
	home := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.md")
	write(t, outside, "outside secret")
	repo := t.TempDir()
	ws := filepath.Join(repo, "ws")
	write(t, filepath.Join(ws, "AGENTRY.md"), "ws rules")
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(filepath.Join(repo, "GEMINI.md")) // above the workspace, below the git root
	mkfifo(filepath.Join(ws, "GEMINI.md"))
	symlink("/dev/zero", filepath.Join(ws, "AGENTS.md"))
	symlink(outside, filepath.Join(ws, "CONTEXT.md"))
	write(t, filepath.Join(ws, "BIG.md"), strings.Repeat("x", 1<<20+1))
	mkfifo(filepath.Join(home, ".agentry", "GEMINI.md"))
	symlink("/dev/zero", filepath.Join(home, ".gemini", "GEMINI.md"))
	write(t, filepath.Join(home, ".agentry", "AGENTRY.md"), "user rules")

	var logs bytes.Buffer
	cfg := processors.MemoryConfig{
		GlobalDirs: []string{filepath.Join(home, ".agentry"), filepath.Join(home, ".gemini")},
		Roots:      []string{ws},
		FileNames:  []string{"AGENTRY.md", "GEMINI.md", "AGENTS.md", "CONTEXT.md", "BIG.md"},
		Trusted:    true,
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
	}
	type result struct {
		m   processors.Memory
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := processors.LoadMemory(cfg)
		done <- result{m, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("LoadMemory blocked on a file for 60s")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.m.Project, "ws rules") || !strings.Contains(r.m.Global, "user rules") {
		t.Errorf("regular files not read: global %q, project %q", r.m.Global, r.m.Project)
	}
	if strings.Contains(r.m.Project, "outside secret") || strings.Contains(r.m.Project, "xxxx") || strings.Contains(r.m.Project, "\x00") || strings.Contains(r.m.Global, "\x00") {
		t.Errorf("a refused file was read: project %.200q", r.m.Project)
	}
	if len(r.m.Files) != 2 {
		t.Errorf("files read %q, want the two regular ones", r.m.Files)
	}
	for _, want := range []string{
		filepath.Join(repo, "GEMINI.md") + ` reason="not a regular file`,
		filepath.Join(ws, "GEMINI.md") + ` reason="not a regular file`,
		filepath.Join(ws, "AGENTS.md") + ` reason="a symbolic link or path leading outside ` + repo,
		filepath.Join(ws, "CONTEXT.md") + ` reason="a symbolic link or path leading outside ` + repo,
		filepath.Join(ws, "BIG.md") + ` reason="larger than 1 MiB"`,
		filepath.Join(home, ".agentry", "GEMINI.md") + ` reason="not a regular file`,
		filepath.Join(home, ".gemini", "GEMINI.md") + ` reason="not a regular file`,
	} {
		if !strings.Contains(logs.String(), "file="+want) {
			t.Errorf("no warning %q in:\n%s", want, logs.String())
		}
	}
}
