package idecontext_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// BenchmarkPromptContext measures what the editor context adds to a
// prompt's processing: update — the IDE sent an update since the last
// prompt (ten open files, the active one's cursor moved and a 1 KiB
// selection changed: normalisation and the delta text); unchanged — no
// update (the counter says so); full — a new session's first prompt with
// a 16 KiB selection; off — no IDE at all (the runtime does not call the
// source).
func BenchmarkPromptContext(b *testing.B) {
	files := func(i int, sel string) idewire.Context {
		fs := make([]idewire.File, 0, 10)
		for j := range 9 {
			fs = append(fs, idewire.File{Path: fmt.Sprintf("/home/user/project/pkg/file%02d.go", j), Timestamp: int64(j)})
		}
		fs = append(fs, idewire.File{Path: "/home/user/project/main.go", Timestamp: int64(100 + i), IsActive: true,
			Cursor: &idewire.Cursor{Line: i%500 + 1, Character: 3}, SelectedText: sel + fmt.Sprint(i)})
		return idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: fs}}
	}
	hist := events{userEvent("p", nil), modelEvent("m")}
	b.Run("update", func(b *testing.B) {
		sel := strings.Repeat("selected text ", 73) // ~1 KiB
		ide := &fakeIDE{c: files(0, sel), n: 1}
		src := idecontext.New(ide)
		src.PromptContext(b.Context(), "s", hist)
		// Two updates in turn, made beforehand: what is measured is the
		// source's work, not the IDE connection's.
		updates := []idewire.Context{files(1, sel), files(2, sel)}
		i := 0
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			i++
			ide.c, ide.n = updates[i%2], uint64(i+1)
			if src.PromptContext(b.Context(), "s", hist) == nil {
				b.Fatal("no delta")
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		ide := &fakeIDE{c: files(0, "x"), n: 1}
		src := idecontext.New(ide)
		src.PromptContext(b.Context(), "s", hist)
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			if src.PromptContext(b.Context(), "s", hist) != nil {
				b.Fatal("a text with nothing changed")
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		ide := &fakeIDE{c: files(0, strings.Repeat("x", 16384)), n: 1}
		src := idecontext.New(ide)
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			src.Forget("s")
			if src.PromptContext(b.Context(), "s", hist) == nil {
				b.Fatal("no full context")
			}
		}
	})
}

// cpuPerOp reports the process's CPU time per operation (cpu-ns/op), which
// other processes on a shared machine do not inflate as they do the wall
// time; call the returned function when the loop is done.
func cpuPerOp(b *testing.B) func() {
	start, ok := proctest.CPU()
	return func() {
		end, _ := proctest.CPU()
		if ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
