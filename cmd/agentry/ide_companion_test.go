package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf16"

	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// fakeCompanion records what the line loop asks of the server into the
// same log as the lines it writes, so a golden file shows their order.
type fakeCompanion struct {
	log   *bytes.Buffer
	diffs map[string]bool
	last  idewire.Context
}

func (f *fakeCompanion) SetContext(c idewire.Context) {
	b, _ := json.Marshal(c)
	fmt.Fprintf(f.log, "server SetContext %s\n", b)
	f.last = c
}

func (f *fakeCompanion) diff(op, path string, content *string) error {
	if !f.diffs[path] {
		return fmt.Errorf("%w: %s", companion.ErrNoDiff, path)
	}
	if op != "UpdateDiff" {
		delete(f.diffs, path)
	}
	if content != nil {
		fmt.Fprintf(f.log, "server %s %s %q\n", op, path, *content)
	} else {
		fmt.Fprintf(f.log, "server %s %s\n", op, path)
	}
	return nil
}

func (f *fakeCompanion) AcceptDiff(path, content string) error {
	return f.diff("AcceptDiff", path, &content)
}
func (f *fakeCompanion) RejectDiff(path string) error { return f.diff("RejectDiff", path, nil) }
func (f *fakeCompanion) UpdateDiff(path, content string) error {
	return f.diff("UpdateDiff", path, &content)
}

// clock counts milliseconds from 1000, one a call.
func clock() func() int64 {
	t := int64(999)
	return func() int64 { t++; return t }
}

// TestCompanionLinesGolden: the editor's lines (testdata/ide_companion/*.in)
// and what the companion does with them — the server's calls and the
// lines it writes — in order (*.golden; -update rewrites them).
func TestCompanionLinesGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxLine int
	}{{"events", companionMaxLine}, {"bad", companionMaxLine}, {"long", 200}} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "ide_companion", tc.name+".in"))
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			srv := &fakeCompanion{log: &log, diffs: map[string]bool{"/w/new.txt": true, "/w/old.txt": true}}
			if err := companionLines(bytes.NewReader(in), &lineWriter{w: &log}, srv, clock(), tc.maxLine); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "ide_companion", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, log.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got := log.String(); got != string(want) {
				t.Errorf("%s (-update rewrites it):\n got:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// TestCompanionHugeSelection: a selection of a MiB reaches the context cut
// at 16384 UTF-16 units and marked, surrogate pairs counted as two and
// never split.
func TestCompanionHugeSelection(t *testing.T) {
	for _, unit := range []string{"x", "é", "😀"} {
		sel := strings.Repeat(unit, (1<<20)/len(unit))
		line, _ := json.Marshal(map[string]string{"type": "selection", "path": "/w/a.go", "text": sel})
		in := `{"type":"focused","path":"/w/a.go"}` + "\n" + string(line) + "\n"
		var log bytes.Buffer
		srv := &fakeCompanion{log: &log}
		if err := companionLines(strings.NewReader(in), &lineWriter{w: &log}, srv, clock(), companionMaxLine); err != nil {
			t.Fatal(err)
		}
		got := srv.last.WorkspaceState.OpenFiles[0].SelectedText
		body, ok := strings.CutSuffix(got, "... [TRUNCATED]")
		if !ok {
			t.Fatalf("%q: the selection is not marked as cut (%d bytes)", unit, len(got))
		}
		n := len(utf16.Encode([]rune(body)))
		if n > companionMaxSelection || n < companionMaxSelection-1 || !strings.HasPrefix(sel, body) {
			t.Errorf("%q: the cut selection has %d UTF-16 units, want %d (or one less before a pair)", unit, n, companionMaxSelection)
		}
	}
}

// TestIDECompanionCommand: `agentry ide companion` writes its ready line,
// prints the discovery file and the terminal environment on stderr (never
// the token), answers a bad line with an error line, and at EOF on stdin
// exits 0 having removed the file; a SIGTERM does the same.
func TestIDECompanionCommand(t *testing.T) {
	for _, how := range []string{"eof", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ws := t.TempDir()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			var errb bytes.Buffer
			in := &interrupts{c: make(chan os.Signal, 1)}
			exit := -1
			root := newRoot(stdio{in: inR, out: outW, err: &errb}, in, &exit)
			root.SetArgs([]string{"ide", "companion", "--workspace", ws, "--pid", "4242"})
			done := make(chan error, 1)
			go func() { done <- root.ExecuteContext(t.Context()); outW.Close() }()

			lines := bufio.NewScanner(outR)
			if !lines.Scan() {
				t.Fatalf("no ready line; stderr: %s", errb.String())
			}
			var ready companionOut
			if err := json.Unmarshal(lines.Bytes(), &ready); err != nil || ready.Type != "ready" || ready.Port == 0 {
				t.Fatalf("first line %s (%v)", lines.Bytes(), err)
			}
			if filepath.Dir(ready.File) != filepath.Join(tmp, "gemini", "ide") || filepath.Base(ready.File) != idewire.FileName(4242, ready.Port) {
				t.Fatalf("discovery file %s", ready.File)
			}
			b, err := os.ReadFile(ready.File)
			if err != nil {
				t.Fatal(err)
			}
			var d idewire.Discovery
			if err := json.Unmarshal(b, &d); err != nil || d.AuthToken == "" || d.WorkspacePath != ws {
				t.Fatalf("discovery file %s (%v)", b, err)
			}
			fmt.Fprintln(inW, `{"type":"focused","path":"relative"}`)
			if !lines.Scan() || !strings.Contains(lines.Text(), `"type":"error","line":1`) {
				t.Fatalf("after a bad line: %s", lines.Text())
			}
			if how == "eof" {
				inW.Close()
			} else {
				in.c <- syscall.SIGTERM
			}
			if err := <-done; err != nil || exit != 0 {
				t.Fatalf("exit %d, %v; stderr: %s", exit, err, errb.String())
			}
			if _, err := os.Stat(ready.File); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the discovery file outlived the command: %v", err)
			}
			stderr := errb.String()
			for _, want := range []string{ready.File, fmt.Sprintf("GEMINI_CLI_IDE_SERVER_PORT=%d\n", ready.Port), "GEMINI_CLI_IDE_WORKSPACE_PATH=" + ws + "\n"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, d.AuthToken) {
				t.Errorf("stderr holds the token:\n%s", stderr)
			}
			inW.Close()
		})
	}
}
