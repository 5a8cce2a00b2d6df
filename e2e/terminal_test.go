package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// geminiEnv points agentry's Gemini backend at a fake server.
func (e *env) geminiEnv(srv *fakegemini.Server) {
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
}

// environ is the command's whole environment.
func (e *env) environ() []string { return append([]string{"HOME=" + e.home}, e.vars...) }

// paragraphs are the lines of a streamed WordAnswer, as the terminal's
// joined scrollback shows them.
func paragraphs(n, blankEvery int) []string {
	return strings.Split(termtest.WordAnswer(n, blankEvery), "\n")
}

// TestTerminalRunInTmux runs agentry on a terminal (a tmux pane) while the
// fake Gemini server streams a 200-chunk answer, and reads the answer back
// from the terminal.
func TestTerminalRunInTmux(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(termtest.WordStep(200, 50, time.Millisecond))
	e := newEnv(t)
	e.geminiEnv(srv)
	tm := termtest.Start(t, termtest.Options{
		Command: []string{binary, "run", "-m", "gemini-2.5-flash", "-p", "count"},
		Env:     e.environ(),
		Dir:     e.ws,
		Cols:    120, Rows: 40,
	})
	tm.WaitText("w0199")
	if ex := tm.WaitExit(); ex != (termtest.Exit{}) {
		t.Fatalf("exit %+v; the screen:\n%s", ex, termtest.Framed(tm.Screen()))
	}
	lines := strings.Split(tm.Scrollback(), "\n")
	for _, p := range paragraphs(200, 50) {
		if !slices.Contains(lines, p) {
			t.Errorf("line %q is not on the terminal:\n%s", p, tm.Scrollback())
			break
		}
	}
}

// TestTerminalRunRecorded records what agentry writes to its terminal
// while the answer streams: plain text, never a clear-screen or a rewrite
// of what it has written. The figures are logged.
func TestTerminalRunRecorded(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(termtest.WordStep(200, 50, time.Millisecond))
	e := newEnv(t)
	e.geminiEnv(srv)
	e.set("TERM=xterm-256color")
	p := termtest.StartPTY(t, e.cmd("run", "-m", "gemini-2.5-flash", "-p", "count"), 120, 40)
	first := p.WaitOutput("w0000")
	ps := p.WaitExit()
	if !ps.Success() {
		t.Fatalf("exit %v; output %q", ps, p.Output())
	}
	rec := p.Recording()
	r := termtest.Analyze(rec, termtest.AnalyzeOptions{LiveRows: 1})
	if r.ClearScreens != 0 || r.AboveLive != 0 {
		t.Errorf("agentry run redrew its output: %s", r)
	}
	if want := termtest.WordAnswer(200, 50); !strings.Contains(strings.ReplaceAll(p.Output(), "\r\n", "\n"), want) {
		t.Errorf("output %q", p.Output())
	}
	t.Logf("agentry run, 200 chunks 1 ms apart: first word after %v, exit after %v, peak RSS %.1f MB; %s",
		first, rec.Chunks[len(rec.Chunks)-1].At, float64(termtest.PeakRSS(ps))/(1<<20), r)
}

// BenchmarkTerminalRunAnchor streams the benchmark anchor's answer (2,000
// chunks "wNNNN ", a blank line every 50, 5 ms apart, from the fake Gemini
// server) to agentry run on a 120×40 terminal and reports the time to the
// first word and to exit, the bytes written to the terminal per chunk, the
// writes (terminal reads) and the peak RSS.
func BenchmarkTerminalRunAnchor(b *testing.B) {
	home, ws := b.TempDir(), b.TempDir()
	var firsts, totals []time.Duration
	var bytes, writes int
	var peak int64
	for b.Loop() {
		srv := fakegemini.New(b)
		srv.Enqueue(termtest.AnchorStep())
		c := (&env{home: home, ws: ws, vars: []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color",
			"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + srv.URL}}).cmd("run", "-m", "gemini-2.5-flash", "-p", "count")
		p := termtest.StartPTY(b, c, 120, 40)
		firsts = append(firsts, p.WaitOutput("w0000"))
		ps := p.WaitExit()
		if !ps.Success() {
			b.Fatalf("exit %v", ps)
		}
		rec := p.Recording()
		totals = append(totals, rec.Chunks[len(rec.Chunks)-1].At)
		r := termtest.Analyze(rec, termtest.AnalyzeOptions{LiveRows: 1})
		if r.ClearScreens != 0 || r.AboveLive != 0 {
			b.Errorf("agentry run redrew its output: %s", r)
		}
		bytes, writes = r.TotalBytes, r.Writes
		peak = max(peak, termtest.PeakRSS(ps))
	}
	b.ReportMetric(float64(termtest.Percentiles(firsts).P50.Microseconds())/1000, "first-word-ms")
	b.ReportMetric(termtest.Percentiles(totals).P50.Seconds(), "exit-s")
	b.ReportMetric(float64(bytes)/termtest.AnchorChunks, "bytes/chunk")
	b.ReportMetric(float64(writes), "writes")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
}
