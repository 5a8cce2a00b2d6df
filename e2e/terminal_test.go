package e2e

import (
	"fmt"
	"os"
	"path/filepath"
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

// interactive starts agentry's interactive session on a 120×40 pty below
// a shell's line, as a user starts it, with the fake server streaming
// step, and waits for its prompt.
func interactive(tb testing.TB, step fakegemini.Step) *termtest.PTY {
	srv := fakegemini.New(tb)
	srv.Enqueue(step)
	e := &env{home: tb.TempDir(), ws: tb.TempDir(), vars: []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color"}}
	e.geminiEnv(srv)
	c := e.cmd()
	c.Path, c.Args = "/bin/sh", []string{"sh", "-c", `echo "$ agentry"; exec "$0" "$@"`, binary, "-m", "gemini-2.5-flash"}
	p := termtest.StartPTY(tb, c, 120, 40)
	p.WaitOutput("Type your message")
	return p
}

// TestTerminalInteractiveAnswer: agentry's interactive session starts and
// streams a 500-delta answer without clearing the screen and without
// touching what is above its live region (8 rows at most: the spinner, the
// paragraph being written, the input box and the footer; 10 allowed), the
// shell's line included. (Started on the first row of an empty screen, its
// redraws erase below from the first row, which the analyser counts as
// clear-screens: hence the shell's line.)
func TestTerminalInteractiveAnswer(t *testing.T) {
	p := interactive(t, termtest.WordStep(500, 50, time.Millisecond))
	p.Type("count\r")
	p.WaitOutput("w0499")
	rec := p.Recording()
	r := termtest.Analyze(rec, termtest.AnalyzeOptions{LiveRows: 10, To: rec.Index(0, "w0499")})
	t.Logf("from the start to the answer's last word: %s", r)
	if r.ClearScreens != 0 || r.AboveLive != 0 {
		t.Errorf("the session redrew the screen: %s", r)
	}
	// The answer is longer than the screen: the shell's line has scrolled
	// into the scrollback (AboveLive counts it had it been rewritten).
	if !strings.Contains(r.Final, "w0499") {
		t.Errorf("the answer's end is not on the screen:\n%s", termtest.Framed(r.Final))
	}
	p.Type("\x04") // Ctrl+D on the empty prompt
	if ps := p.WaitExit(); !ps.Success() {
		t.Errorf("exit %v", ps)
	}
}

// BenchmarkTerminalInteractiveAnchor streams the benchmark anchor's answer
// to agentry's interactive session on a 120×40 pty and reports the time to
// the prompt, to the first word and to the last, the bytes written to the
// terminal per chunk, the writes (terminal reads), the clear-screens and
// writes above a 10-row live region while it streamed, and the peak RSS.
func BenchmarkTerminalInteractiveAnchor(b *testing.B) {
	var ready, first, last []time.Duration
	var r termtest.Report
	var peak, idle int64
	for b.Loop() {
		p := interactive(b, termtest.AnchorStep())
		ready = append(ready, p.WaitOutput("Type your message"))
		if m, err := termtest.ReadMemory(p.PID()); err == nil {
			idle = max(idle, m.Current)
		}
		typed := time.Duration(0)
		if rec := p.Recording(); len(rec.Chunks) > 0 {
			typed = rec.Chunks[len(rec.Chunks)-1].At
		}
		p.Type("count\r")
		first = append(first, p.WaitOutput("w0000")-typed)
		last = append(last, p.WaitOutput("w1999")-typed)
		rec := p.Recording()
		r = termtest.Analyze(rec, termtest.AnalyzeOptions{LiveRows: 10, From: rec.Index(0, "w0000"), To: rec.Index(0, "w1999")})
		p.Type("\x04")
		peak = max(peak, termtest.PeakRSS(p.WaitExit()))
	}
	b.ReportMetric(float64(termtest.Percentiles(ready).P50.Microseconds())/1000, "ready-ms")
	b.ReportMetric(float64(termtest.Percentiles(first).P50.Microseconds())/1000, "first-word-ms")
	b.ReportMetric(termtest.Percentiles(last).P50.Seconds(), "last-word-s")
	b.ReportMetric(float64(r.WindowBytes)/termtest.AnchorChunks, "bytes/chunk")
	b.ReportMetric(float64(r.Writes), "writes")
	b.ReportMetric(float64(r.ClearScreens), "clear-screens")
	b.ReportMetric(float64(r.AboveLive), "above-live")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(idle)/(1<<20), "idle-RSS-MB")
}

// BenchmarkTerminalInteractiveEcho types into agentry's interactive
// session, through tmux, while the anchor's answer streams, and reports
// the echo latency's percentiles (tmux's own floor, a few milliseconds, is
// in them: see termtest.Term.Echo).
func BenchmarkTerminalInteractiveEcho(b *testing.B) {
	var ds []time.Duration
	for b.Loop() {
		srv := fakegemini.New(b)
		srv.Enqueue(termtest.AnchorStep())
		e := &env{home: b.TempDir(), ws: b.TempDir(), vars: []string{"PATH=" + os.Getenv("PATH")}}
		e.geminiEnv(srv)
		tm := termtest.Start(b, termtest.Options{Command: []string{binary, "-m", "gemini-2.5-flash"}, Env: e.environ(), Dir: e.ws, Cols: 120, Rows: 40})
		tm.WaitText("Type your message")
		tm.Type("count")
		tm.Keys("Enter")
		tm.WaitText("w0100")
		d, err := tm.EchoLatencies(b.Context(), "> ", "abcdefghijklmnopqrstuvwxyz")
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d...)
		tm.WaitText("w1999")
		tm.Keys("C-u", "C-d")
		tm.WaitExit()
	}
	q := termtest.Percentiles(ds)
	b.ReportMetric(float64(q.P50.Microseconds())/1000, "echo-p50-ms")
	b.ReportMetric(float64(q.P90.Microseconds())/1000, "echo-p90-ms")
	b.ReportMetric(float64(q.P99.Microseconds())/1000, "echo-p99-ms")
}

// BenchmarkTerminalResume resumes a stored session of 1,000 messages (500
// prompts and their answers, made by headless runs) in the interactive
// session on a 120×40 pty, and reports the time to the prompt, the time
// until the whole conversation is printed, the bytes written for it and
// the peak RSS.
func BenchmarkTerminalResume(b *testing.B) {
	e := &env{home: b.TempDir(), ws: b.TempDir(), vars: []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color"}}
	replay := filepath.Join(b.TempDir(), "answer.jsonl")
	line := `{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"An answer of a few words, as a model gives them, with a second sentence."}]},"finishReason":"STOP"}]}]}`
	if err := os.WriteFile(replay, []byte(line+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	const prompts = 500
	for i := range prompts {
		args := []string{"run", "-m", "replay:" + replay, "-p", fmt.Sprintf("prompt number %d, asking about the code", i)}
		if i > 0 {
			args = append(args, "-r", "latest")
		}
		c := e.cmd(args...)
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("run %d: %v\n%s", i, err, out)
		}
	}
	last := fmt.Sprintf("prompt number %d,", prompts-1)
	var ready, printed []time.Duration
	var bytes int
	var peak int64
	for b.Loop() {
		c := e.cmd()
		c.Path, c.Args = binary, []string{binary, "-r", "latest", "-m", "replay:" + replay}
		p := termtest.StartPTY(b, c, 120, 40)
		ready = append(ready, p.WaitOutput("Type your message"))
		printed = append(printed, p.WaitOutput(last))
		bytes = p.Recording().Len()
		p.Type("\x04")
		peak = max(peak, termtest.PeakRSS(p.WaitExit()))
	}
	b.ReportMetric(float64(termtest.Percentiles(ready).P50.Microseconds())/1000, "ready-ms")
	b.ReportMetric(float64(termtest.Percentiles(printed).P50.Microseconds())/1000, "printed-ms")
	b.ReportMetric(float64(bytes)/(1<<10), "KiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
}
