package loopdetect

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// contentFeeder is what the benchmarks drive: the Detector, or the oracle
// copy of the old algorithm so that one run compares the two.
type contentFeeder interface {
	AddContent(delta string) (Detection, bool)
}

var feeders = []struct {
	name string
	make func() contentFeeder
}{
	{"impl=old", func() contentFeeder {
		d := New(Config{}, nil)
		return newRefContent(d.cfg, d.chunks.seed)
	}},
	{"impl=new", func() contentFeeder { return New(Config{}, nil) }},
}

// wordDeltas is what a served session streams in the protocol benchmark:
// n short deltas "word0 ", "word1 ", ...
func wordDeltas(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("word%d ", i)
	}
	return out
}

// proseDeltas is n units of non-repeating prose cut into deltas of size
// units, as BenchmarkAddContent streams it.
func proseDeltas(n, size int) []string {
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields("the a model tool file read write check build test error value function returns when then because loop detect stream chunk buffer prompt turn user history")
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(words[r.IntN(len(words))])
		fmt.Fprintf(&sb, "%d ", r.IntN(100000))
	}
	text := sb.String()[:n]
	var deltas []string
	for i := 0; i < len(text); i += size {
		deltas = append(deltas, text[i:min(i+size, len(text))])
	}
	return deltas
}

// markdownDeltas is an answer mixing prose, list items, headings and a
// code block, one line per delta.
func markdownDeltas(n int) []string {
	lines := []string{
		"## Summary\n", "The change keeps the detector's results and cuts its cost.\n",
		"* first point about the buffer\n", "* second point about the table\n",
		"1. run the tests\n", "2. run the benchmarks\n", "> quoted remark\n",
		"```go\n", "for i := range n {\n", "\tsum += i\n", "}\n", "```\n",
		"| a | b |\n", "|---|---|\n", "| 1 | 2 |\n", "Plain text follows the table, word by word.\n",
	}
	out := make([]string, n)
	for i := range out {
		out[i] = lines[i%len(lines)]
	}
	return out
}

func benchStreams(b *testing.B, deltas []string) {
	for _, f := range feeders {
		b.Run(f.name, func(b *testing.B) {
			units := 0
			for _, s := range deltas {
				units += len(s)
			}
			b.SetBytes(int64(units))
			b.ReportAllocs()
			for b.Loop() {
				d := f.make()
				for _, s := range deltas {
					if _, ok := d.AddContent(s); ok {
						b.Fatal("loop detected in benchmark text")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(deltas)), "ns/delta")
		})
	}
}

// BenchmarkStreamWords is one served stream: a fresh detector fed 200
// short deltas, as in the protocol package's concurrent-stream benchmark.
func BenchmarkStreamWords(b *testing.B) { benchStreams(b, wordDeltas(200)) }

// BenchmarkStreamProse is 5,000 units of prose in 20-unit deltas: the
// buffer fills up but is never truncated.
func BenchmarkStreamProse(b *testing.B) { benchStreams(b, proseDeltas(5000, 20)) }

// BenchmarkStreamLong is 50,000 units in 20-unit deltas, so that almost
// every delta truncates the 5,000-unit buffer.
func BenchmarkStreamLong(b *testing.B) { benchStreams(b, proseDeltas(50000, 20)) }

// BenchmarkStreamMarkdown is 400 markdown lines: many deltas reset
// tracking or fall in a code block.
func BenchmarkStreamMarkdown(b *testing.B) { benchStreams(b, markdownDeltas(400)) }

// BenchmarkRetained reports the heap a detector still holds after a
// stream: 200 short deltas, measured over 200 live detectors as the
// protocol benchmark's 200 concurrent streams hold them; and 50,000 units
// of prose, which fill the buffer, over fewer detectors since the old
// algorithm takes a quarter of a second for each.
func BenchmarkRetained(b *testing.B) {
	cases := []struct {
		name    string
		streams int
		deltas  []string
	}{
		{"stream=words200", 200, wordDeltas(200)},
		{"stream=prose50k", 10, proseDeltas(50000, 20)},
	}
	for _, c := range cases {
		for _, f := range feeders {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				var perDetector float64
				for b.Loop() {
					live := make([]contentFeeder, c.streams)
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					for i := range live {
						live[i] = f.make()
						for _, s := range c.deltas {
							live[i].AddContent(s)
						}
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					perDetector = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(c.streams)
					runtime.KeepAlive(live)
				}
				b.ReportMetric(perDetector, "retained-B/detector")
			})
		}
	}
}
