package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// streamingModel returns a model at 120x40 in the middle of a turn whose
// answer so far is about size bytes of Markdown, and the deltas to stream
// next: words, with a paragraph break every few lines and now and then a
// code block.
func streamingModel(b *testing.B, size int) (*model, []string) {
	b.Helper()
	cfg := testConfig(newTestSession())
	m := newModel(b.Context(), cfg, newMailbox(), colorprofile.ANSI, nil)
	m.fx.print = func(string) tea.Cmd { m.printing = false; return nil }
	m.fx.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(printReadyMsg{})
	m.prompt("explain", "explain") // the turn's command is not run
	var deltas []string
	for i := 0; len(deltas) < 4096; i++ {
		if i%40 == 39 {
			deltas = append(deltas, "\n\n")
		}
		if i%400 == 200 {
			deltas = append(deltas, "\n\n```go\nfunc f() int {\n\treturn 42\n}\n```\n\n")
		}
		deltas = append(deltas, fmt.Sprintf("word%d **bold** ", i%97))
	}
	for n := 0; n < size; {
		for _, d := range deltas {
			m.Update(streamEventMsg{m.turn.id, textEv(d)})
			n += len(d)
		}
	}
	m.outbox = nil
	return m, deltas
}

// BenchmarkStreamDelta is one streamed delta: Update and View at 120x40.
// Its cost must not grow with the answer so far.
func BenchmarkStreamDelta(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("answer=%dKiB", size>>10), func(b *testing.B) {
			m, deltas := streamingModel(b, size)
			id := m.turn.id
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Update(streamEventMsg{id, textEv(deltas[i%len(deltas)])})
				_ = m.View()
			}
		})
	}
}

// BenchmarkKeystroke is one key typed while an answer streams: Update and
// View at 120x40.
func BenchmarkKeystroke(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("answer=%dKiB", size>>10), func(b *testing.B) {
			m, _ := streamingModel(b, size)
			keys := []tea.KeyPressMsg{runeKey('a'), runeKey('b'), {Code: tea.KeyBackspace}, {Code: tea.KeyBackspace}}
			m.Update(tea.PasteMsg{Content: strings.Repeat("some typed text ", 10)})
			b.ReportAllocs()
			// Each key's update and frame is timed too, for the tail:
			// a key must be on screen within one frame (8.3 ms at 120
			// frames a second).
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				m.Update(keys[i%len(keys)])
				_ = m.View()
				ds = append(ds, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
		})
	}
}
