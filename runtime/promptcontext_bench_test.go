package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/processors"
)

// benchIDE is an IDE whose context changes before every prompt.
type benchIDE struct {
	updates []idewire.Context
	n       uint64
}

func (b *benchIDE) Context() (idewire.Context, uint64) {
	return b.updates[b.n%uint64(len(b.updates))], b.n
}

// BenchmarkPromptContextTurn measures a whole prompt (Send to agent_end,
// a model that answers at once, a 20-event history) without an IDE and
// with one whose context was updated before every prompt (ten open files,
// the cursor moved, a 1 KiB selection changed): the difference is what a
// context update adds to the next model request's processing.
func BenchmarkPromptContextTurn(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run("ide="+onOff(on), func(b *testing.B) {
			var ide *benchIDE
			var pc PromptContext
			if on {
				ide = &benchIDE{}
				for i := range 2 {
					fs := make([]idewire.File, 0, 10)
					for j := range 9 {
						fs = append(fs, idewire.File{Path: fmt.Sprintf("/home/user/project/pkg/file%02d.go", j), Timestamp: int64(j)})
					}
					sel := fmt.Sprintf("%1024d", i)
					fs = append(fs, idewire.File{Path: "/home/user/project/main.go", Timestamp: 100, IsActive: true,
						Cursor: &idewire.Cursor{Line: i + 1, Character: 3}, SelectedText: sel})
					ide.updates = append(ide.updates, idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: fs}})
				}
				ide.n = 1
				pc = idecontext.New(ide)
			}
			content := processors.NewContent(processors.ContentConfig{Roots: []string{b.TempDir()}, OS: "linux"})
			s, err := New(context.Background(), Config{
				Model:          "gemini-2.5-flash",
				Resolver:       fixedResolver{B: instant{Chunks: textTurn("Hello ", "there, ", "friend.").Chunks}},
				Instruction:    SystemPrompt,
				Chain:          processors.NewChain(content),
				SessionService: &fixedHistory{Base: history(20)},
				PromptContext:  pc,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			msg := TextMessage("next question")
			b.ReportAllocs()
			start, cpuOK := proctest.CPU()
			for b.Loop() {
				if ide != nil {
					ide.n++ // an update since the last prompt
				}
				id, err := s.Send(ctx, msg)
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range s.Stream(ctx, id) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			if end, _ := proctest.CPU(); cpuOK {
				b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
