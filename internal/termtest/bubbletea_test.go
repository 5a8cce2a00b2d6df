package termtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replayInTmux writes rec's bytes, raw, to a tmux pane of the recording's
// size and returns the tmux terminal, once its screen equals want: tmux is
// the reference the analyser's terminal model is checked against. If the
// screens never agree, the test fails showing both.
func replayInTmux(t *testing.T, rec Recording, want string) *Term {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recording")
	if err := os.WriteFile(path, rec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// Raw: the recording's line endings are already as the terminal got
	// them.
	tm := Start(t, Options{
		Command: []string{"sh", "-c", `stty raw -echo && cat "$1" && exec sleep 1000`, "sh", path},
		Cols:    rec.Cols, Rows: rec.Rows,
	})
	tm.WaitFor("tmux's screen to equal the model's:\n"+Framed(want), func(s string) bool { return s == want })
	return tm
}

// recordStream runs the stream program on a 80×24 pty below header lines
// of a shell's and returns its recording.
func recordStream(t *testing.T, header, pause string) Recording {
	t.Helper()
	p := StartPTY(t, helperCmd("stream", "STREAM_HEADER="+header, "STREAM_PAUSE="+pause), 80, 24)
	if ps := p.WaitExit(); !ps.Success() {
		t.Fatalf("the program failed: %v; output %q", ps, tail(p.Output(), 2000))
	}
	return p.Recording()
}

// TestBubbleteaInlineRenderer records an inline bubbletea program printing
// 200 lines above a one-row live region it redraws, and checks what the
// analyser finds: no clear-screen, no write above the live region, and the
// screen tmux shows for the same bytes.
//
// Below a shell's lines only the program's steady state, from its first
// frame on, is free of writes above the live region: bubbletea (v2.1.1)
// inserts lines printed before its first frame at the top of the screen,
// as if its view filled the screen, and the first frame's erase-below then
// wipes what was on the screen under them; when that happens depends on
// timing, so it is logged, not asserted. (At full speed all 200 lines may
// come before the first frame, each scrolling the one before it off the
// top: the screen ends with the last two lines on its first rows.)
func TestBubbleteaInlineRenderer(t *testing.T) {
	for _, tc := range []struct {
		name, header, pause string
		// firstFrame counts from the first frame; otherwise the whole
		// recording is counted.
		firstFrame bool
	}{
		// At full speed from the top of an empty screen.
		{"from the first row", "0", "0s", false},
		// Paced: the live region is redrawn between lines.
		{"below a shell's lines, paced", "3", "1ms", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := recordStream(t, tc.header, tc.pause)
			all := Analyze(rec, AnalyzeOptions{LiveRows: 1})
			t.Logf("bubbletea inline renderer, whole recording: %s", all)
			if all.ClearScreens != 0 {
				t.Errorf("%d clear-screens: %v", all.ClearScreens, all.Events)
			}
			r := all
			if tc.firstFrame {
				first := rec.Index(0, "streaming ")
				if first < 0 {
					t.Fatalf("no frame drawn: %q", rec.Bytes())
				}
				r = Analyze(rec, AnalyzeOptions{LiveRows: 1, From: first})
				t.Logf("from the first frame: %s", r)
			}
			if r.AboveLive != 0 {
				t.Errorf("%d writes above the live region: %v", r.AboveLive, r.Events)
			}
			// Each tea.Println inserts a line (IL) and erases the rest
			// of it (EL), inside the live region's row.
			if all.InsertedLines != streamLines || all.EraseLines < streamLines {
				t.Errorf("inserted lines %d, erased lines %d, want %d", all.InsertedLines, all.EraseLines, streamLines)
			}
			// Where the last lines end up depends on how many were
			// printed before the first frame.
			if !hasLine("line 200: the quick brown fox jumps over the lazy dog")(all.Final) {
				t.Errorf("final screen:\n%s", Framed(all.Final))
			}
			tm := replayInTmux(t, rec, all.Final)

			// The lines reach the scrollback in order.
			history := tm.Scrollback()
			last := -1
			for i := 1; i <= streamLines; i++ {
				at := strings.Index(history, "line "+pad3(i)+":")
				if at < last {
					t.Errorf("line %d is out of order in the scrollback:\n%s", i, history)
					break
				}
				last = at
			}
		})
	}
}

// pad3 formats n in three digits.
func pad3(n int) string {
	s := "00" + itoa(n)
	return s[len(s)-3:]
}

// TestAboveLiveDetected: a program that erases its way up through lines it
// has already printed, as renderers do that redraw a region taller than
// their live one, is caught writing above its live region; a window that
// ends before the redraw sees nothing.
func TestAboveLiveDetected(t *testing.T) {
	p := StartPTY(t, helperCmd("redraw"), 80, 24)
	p.WaitExit()
	rec := p.Recording()
	r := Analyze(rec, AnalyzeOptions{LiveRows: 1})
	t.Logf("redraw: %s", r)
	// The first erase above "ready" hits line 30 on row 22.
	if r.AboveLive == 0 || r.Events[0].Kind != AboveLive || r.Events[0].Row != 22 || r.Events[0].Seq != "\x1b[2K" {
		t.Fatalf("the redraw was not caught: %s", r)
	}
	// EL 2 at row 1 is not a clear-screen, and nothing cleared one.
	if r.ClearScreens != 0 {
		t.Errorf("clear-screens %d", r.ClearScreens)
	}
	ready := rec.Index(0, "ready\r\n") + len("ready\r\n")
	if r := Analyze(rec, AnalyzeOptions{LiveRows: 1, To: ready}); r.AboveLive != 0 {
		t.Errorf("before the redraw: %s", r)
	}
	replayInTmux(t, rec, r.Final)
}

// TestClearScreenDetected runs a program that clears the screen.
func TestClearScreenDetected(t *testing.T) {
	for _, tc := range []struct {
		script string
		clears int
	}{
		{`printf 'one\ntwo\n\033[2Jthree\n'`, 1},
		{`printf 'one\ntwo\n\033[Hthree\033[J\n'`, 1},
		{`printf 'one\ntwo\n\033[3J'`, 1},
		{`printf 'one\ntwo\n\033[Kthree\033[J\n'`, 0},
	} {
		p := StartPTY(t, command("sh", "-c", tc.script), 40, 10)
		p.WaitExit()
		rec := p.Recording()
		r := Analyze(rec, AnalyzeOptions{})
		if r.ClearScreens != tc.clears {
			t.Errorf("%s: %s", tc.script, r)
		}
		replayInTmux(t, rec, r.Final)
	}
}
