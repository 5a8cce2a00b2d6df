package turncost

import (
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// historySizes are the history sizes, in events, a turn starts from.
var historySizes = []int{20, 100, 500}

// BenchmarkTurn times one turn of each variant per round, over a history
// of each size. The history is put back before each round with the timer
// stopped; the round's turns then run back to back, each timed and its
// allocations counted on its own, the variant that goes first rotating
// from round to round. ns/op, B/op and allocs/op are a round's (the three
// turns together); the per-variant figures and the ratios to bare ADK are
// the custom metrics (see the package doc).
func BenchmarkTurn(b *testing.B) {
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) { benchTurn(b, n) })
	}
}

func benchTurn(b *testing.B, n int) {
	ctx := b.Context()
	events := history(n)
	vs := make([]*variant, len(variantNames))
	for i, name := range variantNames {
		vs[i] = newVariant(b, name, events)
	}
	warmUp(b, vs)
	b.ReportAllocs()
	meters := make([]meter, len(vs))
	round := 0
	for b.Loop() {
		b.StopTimer()
		resetAll(b, vs)
		b.StartTimer()
		for k := range vs {
			i := (round + k) % len(vs)
			meters[i].start()
			err := vs[i].turn(ctx)
			meters[i].stop()
			if err != nil {
				b.Fatal(err)
			}
		}
		round++
	}
	report(b, meters)
}

// BenchmarkVariant runs one variant's turns alone, the history put back
// before each with the timer stopped: for a CPU profile of one variant,
// or to follow one variant across commits with benchstat. Its ns/op
// against another variant's is not a ratio to trust on a shared machine;
// BenchmarkTurn's are.
func BenchmarkVariant(b *testing.B) {
	for _, n := range historySizes {
		for _, name := range variantNames {
			b.Run(fmt.Sprintf("history=%d/%s", n, name), func(b *testing.B) {
				ctx := b.Context()
				v := newVariant(b, name, history(n))
				if err := v.reset(ctx); err != nil {
					b.Fatal(err)
				}
				if err := v.turn(ctx); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if err := v.reset(ctx); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if err := v.turn(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// warmUp runs a first turn of each variant: a session builds some things
// once (the session context, the SQLite store's live object), not every
// turn.
// resetAll puts every variant's history back.
func resetAll(b *testing.B, vs []*variant) {
	for _, v := range vs {
		if err := v.reset(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

func warmUp(b *testing.B, vs []*variant) {
	for _, v := range vs {
		if err := v.reset(b.Context()); err != nil {
			b.Fatal(err)
		}
		if err := v.turn(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// growthTurns is the number of turns BenchmarkGrowth runs on a history
// before putting it back.
const growthTurns = 8

// BenchmarkGrowth measures how a variant's turn grows with the history: in
// each round, after both histories are put back and the garbage of putting
// them back is collected (timer stopped), growthTurns turns run on a
// 20-event history and as many on a 500-event one, alternately, each timed
// and counted on its own (the histories grow by four events a turn). Its
// metrics, per size (small: 20, large: 500): the mean CPU time (process,
// every goroutine) and wall time of a turn, its bytes and allocations; and
// large/small-cpu and large/small-ns, the median over the rounds of the
// round's ratio of the large history's turns to the small one's, and
// large/small-B, the ratio of the bytes.
//
// Unlike BenchmarkTurn's, a turn here pays for no other variant's garbage
// and for none of the reset's: the times are the variant's own work (and
// the collections its own allocations start); what it leaves to the
// collector is in its bytes.
func BenchmarkGrowth(b *testing.B) {
	for _, name := range variantNames {
		b.Run(name, func(b *testing.B) { benchGrowth(b, name) })
	}
}

func benchGrowth(b *testing.B, name string) {
	ctx := b.Context()
	vs := []*variant{newVariant(b, name, history(20)), newVariant(b, name, history(500))}
	warmUp(b, vs)
	b.ReportAllocs()
	var meters [2]meter
	var rounds [2][]float64 // per round, the CPU of its turns on each history
	var walls [2][]float64
	round := 0
	for b.Loop() {
		b.StopTimer()
		resetAll(b, vs)
		goruntime.GC()
		b.StartTimer()
		var cpu, wall [2]float64
		for k := range growthTurns {
			for j := range vs {
				i := (round + j) % len(vs)
				meters[i].start()
				err := vs[i].turnAfter(ctx, k)
				meters[i].stop()
				if err != nil {
					b.Fatal(err)
				}
				cpu[i] += meters[i].cpu[len(meters[i].cpu)-1]
				wall[i] += meters[i].wall[len(meters[i].wall)-1]
			}
		}
		for i := range vs {
			rounds[i] = append(rounds[i], cpu[i])
			walls[i] = append(walls[i], wall[i])
		}
		round++
	}
	turns := float64(round * growthTurns)
	for i, size := range []string{"small", "large"} {
		m := &meters[i]
		b.ReportMetric(sum(m.wall)/turns, size+"-ns/turn")
		if !m.noCPU {
			b.ReportMetric(sum(m.cpu)/turns, size+"-cpu-ns/turn")
		}
		b.ReportMetric(float64(m.bytes)/turns, size+"-B/turn")
		b.ReportMetric(float64(m.allocs)/turns, size+"-allocs/turn")
	}
	if !meters[0].noCPU && !meters[1].noCPU {
		b.ReportMetric(pairedMedian(rounds[1], rounds[0]), "large/small-cpu")
	}
	b.ReportMetric(pairedMedian(walls[1], walls[0]), "large/small-ns")
	b.ReportMetric(float64(meters[1].bytes)/float64(meters[0].bytes), "large/small-B")
}

// report reports a run's figures (see the package doc): ns/op, the three
// turns of a round; per variant the means of a turn's wall time, CPU time,
// bytes and allocations; and per agentry variant its ratios to bare ADK:
// for times the median over the rounds of the round's ratio, for bytes and
// allocations the ratio of the totals.
func report(b *testing.B, meters []meter) {
	rounds := float64(len(meters[0].wall))
	cpu := true
	var wall float64
	for _, m := range meters {
		wall += sum(m.wall)
		cpu = cpu && !m.noCPU
	}
	b.ReportMetric(wall/rounds, "ns/op")
	for i, name := range variantNames {
		m := &meters[i]
		b.ReportMetric(sum(m.wall)/rounds, name+"-ns/turn")
		if cpu {
			b.ReportMetric(sum(m.cpu)/rounds, name+"-cpu-ns/turn")
		}
		b.ReportMetric(float64(m.bytes)/rounds, name+"-B/turn")
		b.ReportMetric(float64(m.allocs)/rounds, name+"-allocs/turn")
	}
	floor := &meters[0]
	for i, name := range variantNames[1:] {
		m := &meters[i+1]
		b.ReportMetric(pairedMedian(m.wall, floor.wall), name+"/adk-ns")
		if cpu {
			b.ReportMetric(pairedMedian(m.cpu, floor.cpu), name+"/adk-cpu")
		}
		b.ReportMetric(float64(m.bytes)/float64(floor.bytes), name+"/adk-B")
		b.ReportMetric(float64(m.allocs)/float64(floor.allocs), name+"/adk-allocs")
	}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// pairedMedian is the median of x[i]/y[i].
func pairedMedian(x, y []float64) float64 {
	r := make([]float64, 0, len(x))
	for i := range x {
		if y[i] > 0 {
			r = append(r, x[i]/y[i])
		}
	}
	if len(r) == 0 {
		return 0
	}
	slices.Sort(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}

// meter records one variant's turns: each turn's wall time, and the
// process's CPU time, which leaves out the time other processes on the
// machine took from it but counts every goroutine of this one (agentry's
// session goroutine, the garbage collector's workers); and the heap bytes
// and objects allocated, read as the testing package reads them (MemStats'
// TotalAlloc and Mallocs). ReadMemStats stops the world and flushes the
// per-P caches, so each turn's allocations are counted exactly; it runs
// outside the timed part.
type meter struct {
	ms              goruntime.MemStats
	t0              time.Time
	cpu0            time.Duration
	bytes0, allocs0 uint64
	// wall and cpu hold each turn's times in nanoseconds, in rounds'
	// order; noCPU is set when the CPU time could not be read.
	wall, cpu     []float64
	noCPU         bool
	bytes, allocs uint64
}

func (m *meter) start() {
	goruntime.ReadMemStats(&m.ms)
	m.bytes0, m.allocs0 = m.ms.TotalAlloc, m.ms.Mallocs
	var ok bool
	m.cpu0, ok = proctest.CPU()
	m.noCPU = m.noCPU || !ok
	m.t0 = time.Now()
}

func (m *meter) stop() {
	wall := time.Since(m.t0)
	cpu, ok := proctest.CPU()
	goruntime.ReadMemStats(&m.ms)
	m.noCPU = m.noCPU || !ok
	m.wall = append(m.wall, float64(wall.Nanoseconds()))
	m.cpu = append(m.cpu, float64((cpu - m.cpu0).Nanoseconds()))
	m.bytes += m.ms.TotalAlloc - m.bytes0
	m.allocs += m.ms.Mallocs - m.allocs0
}

// request is what a scripted model was asked, encoded as it was asked.
type request struct {
	contents []string // each content as JSON
	system   string   // the system instruction's text
	tools    string   // the function declarations as JSON
}

// record encodes a request. It runs on the goroutine that calls the
// model, so an encoding error becomes the text, which no check accepts.
func record(contents []*genai.Content, cfg *genai.GenerateContentConfig) request {
	var r request
	for _, c := range contents {
		r.contents = append(r.contents, jsonOf(c))
	}
	if cfg != nil {
		if si := cfg.SystemInstruction; si != nil {
			for _, p := range si.Parts {
				r.system += p.Text
			}
		}
		var decls []*genai.FunctionDeclaration
		for _, tl := range cfg.Tools {
			decls = append(decls, tl.FunctionDeclarations...)
		}
		r.tools = jsonOf(decls)
	}
	return r
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "encoding failed: " + err.Error()
	}
	return string(b)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTurn runs one turn of each variant over each history size and
// checks that the benchmark measures what it says: two model calls and
// one tool call, the whole history in the first request, the same tool
// declaration, system prompt and history in every variant's request, the
// tool's output in the second, and a history that the turn left as it
// was, so that reusing it across turns is sound.
func TestTurn(t *testing.T) {
	for _, n := range historySizes {
		t.Run(fmt.Sprintf("history=%d", n), func(t *testing.T) {
			events := history(n)
			if len(events) != n {
				t.Fatalf("history(%d) has %d events", n, len(events))
			}
			before := mustJSON(t, events)
			reqs := map[string][]request{}
			for _, name := range variantNames {
				v := newVariant(t, name, events)
				v.model.onRequest = func(contents []*genai.Content, cfg *genai.GenerateContentConfig) {
					reqs[name] = append(reqs[name], record(contents, cfg))
				}
				if err := v.reset(t.Context()); err != nil {
					t.Fatal(err)
				}
				// turn checks the counts and the first request's size.
				if err := v.turn(t.Context()); err != nil {
					t.Fatal(err)
				}
				if len(reqs[name]) != 2 {
					t.Fatalf("%s: %d requests recorded, want 2", name, len(reqs[name]))
				}
				second := reqs[name][1]
				last := second.contents[len(second.contents)-1]
				if want := mustJSON(t, toolOutput); !strings.Contains(last, `"name":"lookup"`) || !strings.Contains(last, want) {
					t.Errorf("%s: the second request ends with %s, want lookup's response %s", name, last, want)
				}
			}
			if after := mustJSON(t, events); after != before {
				t.Error("a turn changed the history's events")
			}

			floor := reqs[bareADK][0]
			if !strings.Contains(floor.system, "You are agentry") {
				t.Errorf("bare ADK's system instruction lacks agentry's prompt: %.200q", floor.system)
			}
			for _, name := range variantNames[1:] {
				got := reqs[name][0]
				if got.tools != floor.tools {
					t.Errorf("%s declares %s, bare ADK %s", name, got.tools, floor.tools)
				}
				if got.system != floor.system {
					t.Errorf("%s's system instruction (%d bytes) differs from bare ADK's (%d bytes)", name, len(got.system), len(floor.system))
				}
				// agentry's content processor puts the session context
				// first in the first user turn; everything else is ADK's.
				if !slices.Equal(got.contents[1:], floor.contents[1:]) {
					for i := 1; i < len(floor.contents); i++ {
						if got.contents[i] != floor.contents[i] {
							t.Errorf("%s: content %d of the first request differs:\n%.300s\nbare ADK:\n%.300s", name, i, got.contents[i], floor.contents[i])
							break
						}
					}
				}
				var first, floorFirst genai.Content
				if err := json.Unmarshal([]byte(got.contents[0]), &first); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(floor.contents[0]), &floorFirst); err != nil {
					t.Fatal(err)
				}
				if len(first.Parts) != len(floorFirst.Parts)+1 || !strings.Contains(first.Parts[0].Text, "<session_context>") ||
					mustJSON(t, first.Parts[1:]) != mustJSON(t, floorFirst.Parts) {
					t.Errorf("%s: first content %.300s, want the session context and then bare ADK's %.300s", name, got.contents[0], floor.contents[0])
				}
			}
		})
	}
}
