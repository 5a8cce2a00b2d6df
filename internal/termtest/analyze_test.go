package termtest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// screenOf renders rows lines as Report.Final does.
func screenOf(rows int, lines ...string) string {
	var b strings.Builder
	for i := range rows {
		if i < len(lines) {
			b.WriteString(lines[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// screenCases are byte strings and the screen a 4-row terminal shows for
// them.
var screenCases = []struct {
	name string
	cols int
	in   string
	want []string // the first rows
}{
	{"text and CRLF", 10, "hello\r\nworld", []string{"hello", "world"}},
	{"LF keeps the column", 10, "ab\ncd", []string{"ab", "  cd"}},
	{"wrap at the margin", 4, "abcdef", []string{"abcd", "ef"}},
	{"pending wrap: CR cancels it", 4, "abcd\rX", []string{"Xbcd"}},
	{"no autowrap overwrites the last column", 4, "\x1b[?7labcdef\x1b[?7h", []string{"abcf"}},
	{"wide characters", 5, "a世界b", []string{"a世界", "b"}},
	{"CUP and erase to the end of line", 10, "0123456789\x1b[1;4H\x1b[K", []string{"012"}},
	{"erase to the start of line", 10, "0123456789\x1b[1;4H\x1b[1K", []string{"    456789"}},
	{"erase characters", 10, "0123456789\x1b[1;3H\x1b[3X", []string{"01   56789"}},
	{"relative moves", 10, "a\x1b[2Bb\x1b[1Ac\x1b[3Dd\x1b[2Ce", []string{"a", "d ce", " b"}},
	{"CHA, VPA, HPA", 10, "\x1b[3Gx\x1b[2dy\x1b[1`z", []string{"  x", "z  y"}},
	{"CNL and CPL", 10, "ab\x1b[2Ec\x1b[Fd", []string{"ab", "d", "c"}},
	{"insert and delete characters", 10, "abcdef\x1b[1;3H\x1b[2@XY\x1b[1;2H\x1b[1P", []string{"aXYcdef"}},
	{"insert mode", 10, "abc\x1b[1;2H\x1b[4hXY\x1b[4l", []string{"aXYbc"}},
	{"insert and delete lines", 10, "1\r\n2\r\n3\r\n4\x1b[2;1H\x1b[L\x1b[4;1H\x1b[M", []string{"1", "", "2", ""}},
	{"scroll off the top", 10, "1\r\n2\r\n3\r\n4\r\n5", []string{"2", "3", "4", "5"}},
	{"scroll region", 10, "1\r\n2\r\n3\r\n4\x1b[2;3r\x1b[3;1H\nx\x1b[r", []string{"1", "3", "x", "4"}},
	{"scroll up and down", 10, "1\r\n2\r\n3\r\n4\x1b[1S\x1b[2T", []string{"", "", "2", "3"}},
	{"reverse index at the top", 10, "1\r\n2\x1b[H\x1bMx", []string{"x", "1", "2"}},
	{"save and restore the cursor", 10, "ab\x1b7\r\ncd\x1b8e\x1b[s\x1b[4;1Hf\x1b[ug", []string{"abeg", "cd", "", "f"}},
	{"tabs", 20, "a\tb\tc\x1b[Zd\t\tx", []string{"a       b       d  x"}},
	// tmux ignores CHT (CSI I); xterm moves to the next tab stops.
	{"forward tabs (xterm)", 20, "a\x1b[2Ib\x1b[9Ic", []string{"a               b  c"}},
	{"repeat", 10, "ab\x1b[3b", []string{"abbbb"}},
	{"erase below", 10, "111\r\n222\r\n333\x1b[2;2H\x1b[J", []string{"111", "2"}},
	{"erase above", 10, "111\r\n222\r\n333\x1b[2;2H\x1b[1J", []string{"", "  2", "333"}},
	{"erase the screen", 10, "111\r\n222\x1b[2J", []string{}},
	{"alternate screen", 10, "main\x1b[?1049halt\x1b[?1049l!", []string{"main!"}},
	{"private and string sequences draw nothing", 10, "a\x1b[>1u\x1b[?2026$p\x1b]0;title\x07\x1b[2 qb\x1b[?u\x1bPx\x1b\\c", []string{"abc"}},
	{"SGR and charset selection draw nothing", 10, "\x1b[1;31ma\x1b[m\x1b(Bb", []string{"ab"}},
}

func TestAnalyzeScreenModel(t *testing.T) {
	for _, tc := range screenCases {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(RecordingOf(tc.cols, 4, []byte(tc.in)), AnalyzeOptions{})
			if want := screenOf(4, tc.want...); r.Final != want {
				t.Errorf("screen:\n%s\nwant:\n%s", Framed(r.Final), Framed(want))
			}
		})
	}
}

// TestScreenModelMatchesTmux replays the model's cases in tmux, a real
// terminal emulator: it must show the same screens.
func TestScreenModelMatchesTmux(t *testing.T) {
	for _, tc := range screenCases {
		if strings.HasSuffix(tc.name, "(xterm)") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			replayInTmux(t, RecordingOf(tc.cols, 4, []byte(tc.in)), screenOf(4, tc.want...))
		})
	}
}

func TestAnalyzeClearScreens(t *testing.T) {
	for _, tc := range []struct {
		in         string
		clears     int
		eraseBelow int
	}{
		{"abc\r\n\x1b[2J", 1, 0},
		{"abc\r\n\x1b[3J", 1, 0},
		{"abc\r\ndef\x1b[H\x1b[J", 1, 0},
		{"abc\r\ndef\x1b[1;2H\x1b[0J", 1, 0},
		{"abc\x1bc", 1, 0},
		{"abc\r\ndef\x1b[J", 0, 1},
		{"abc\r\n\x1b[?2J", 1, 0},
		{"abc\r\n\x1b[1J\x1b[K\x1b[2K", 0, 0},
		{"plain\r\ntext\r\n", 0, 0},
		// An empty screen erased from its top: nothing to flicker.
		{"\x1b[J", 0, 1},
		{"\x1b[H\x1b[Jabc", 0, 1},
	} {
		r := Analyze(RecordingOf(10, 4, []byte(tc.in)), AnalyzeOptions{})
		if r.ClearScreens != tc.clears || r.EraseBelow != tc.eraseBelow {
			t.Errorf("%q: clear-screens %d, erase-below %d; want %d, %d", tc.in, r.ClearScreens, r.EraseBelow, tc.clears, tc.eraseBelow)
		}
		if r.ClearScreens > 0 && (len(r.Events) == 0 || r.Events[0].Kind != ClearScreen) {
			t.Errorf("%q: events %v", tc.in, r.Events)
		}
	}
}

func TestAnalyzeCounts(t *testing.T) {
	rec := Recording{Cols: 10, Rows: 4, Chunks: []Chunk{
		{At: 1 * time.Millisecond, Data: []byte("ab\x1b[K")},
		{At: 2 * time.Millisecond, Data: []byte("\x1b[?2026h\x1b[2K\x1b[1K\x1b[3X\x1b[?2026l")},
		{At: 3 * time.Millisecond, Data: []byte("1\r\n2\r\n3\r\n4\r\n5\r\n6\x1b[2;1H\x1b[2L\x1b[M")},
	}}
	r := Analyze(rec, AnalyzeOptions{})
	want := Report{
		TotalBytes: rec.Len(), WindowBytes: rec.Len(), Writes: 3, MaxWrite: len(rec.Chunks[2].Data),
		EraseLines: 3, EraseChars: 1, InsertedLines: 2, DeletedLines: 1, ScrolledLines: 2, SyncUpdates: 1,
	}
	r.Final, r.Events = "", nil
	if !reflect.DeepEqual(r, want) {
		t.Errorf("report\n%+v\nwant\n%+v", r, want)
	}
	if got := r.BytesPerWrite(); got != float64(rec.Len())/3 {
		t.Errorf("bytes per write %v", got)
	}

	// A window counts only its own bytes, but replays everything before it.
	from := len(rec.Chunks[0].Data)
	r = Analyze(rec, AnalyzeOptions{From: from, To: from + len(rec.Chunks[1].Data)})
	if r.EraseLines != 2 || r.Writes != 1 || r.WindowBytes != len(rec.Chunks[1].Data) || r.ScrolledLines != 0 || r.TotalBytes != rec.Len() {
		t.Errorf("window report %+v", r)
	}
}

// lines returns n numbered lines, each ended by CRLF.
func lines(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\r\n", i+1)
	}
	return b.String()
}

// insertAbove is what bubbletea's inline renderer writes for tea.Println
// with a one-row view and the cursor on it (see insertAbove in its
// cursed_renderer.go), then the view redrawn.
func insertAbove(line, view string) string {
	return "\r\n\x1b[1A\x1b[1L" + line + "\x1b[K\r\n" + view + "\x1b[K\r"
}

func TestAnalyzeAboveLive(t *testing.T) {
	const rows = 10
	full := lines(30, "line %02d") + "view" // a full screen, the view on its last row
	for _, tc := range []struct {
		name  string
		in    string
		opts  AnalyzeOptions
		above int
	}{
		{"rewrite a line far above", full + "\x1b[5;1HX", AnalyzeOptions{LiveRows: 1}, 1},
		{"erase lines upwards past the live region", full + strings.Repeat("\x1b[2K\x1b[1A", 5), AnalyzeOptions{LiveRows: 2}, 3},
		{"erase the screen", full + "\x1b[2J", AnalyzeOptions{LiveRows: 1}, 1},
		{"delete a line above", full + "\x1b[3;1H\x1b[M", AnalyzeOptions{LiveRows: 1}, 1},
		{"scroll a region above", full + "\x1b[1;5r\x1b[5;1H\n\x1b[r", AnalyzeOptions{LiveRows: 1}, 1},
		{"redraw the live region", full + "\rview 2\x1b[K\r\x1b[2Kview 3", AnalyzeOptions{LiveRows: 1}, 0},
		{"rewrite the line just above, inside a taller region", full + "\x1b[1A\rX", AnalyzeOptions{LiveRows: 2}, 0},
		{"the same, one row too many", full + "\x1b[1A\rX", AnalyzeOptions{LiveRows: 1}, 1},
		{"lines inserted above the view", full + insertAbove("new 1", "view") + insertAbove("new 2", "view"), AnalyzeOptions{LiveRows: 1}, 0},
		{"lines inserted above, fixed live top", full + insertAbove("new 1", "view") + insertAbove("new 2", "view"), AnalyzeOptions{LiveTop: rows}, 0},
		{"lines inserted while the screen fills", "top\r\nview" + insertAbove("new 1", "view") + insertAbove("new 2", "view"), AnalyzeOptions{LiveRows: 1}, 0},
		{"writing into empty cells above", "a\r\n\r\n\r\nview\x1b[2;1Hnew", AnalyzeOptions{LiveRows: 1}, 0},
		{"no live region given", full + "\x1b[5;1HX", AnalyzeOptions{}, 0},
		{"outside the window", full + "\x1b[5;1HX", AnalyzeOptions{LiveRows: 1, To: len(full)}, 0},
		{"in the alternate screen", full + "\x1b[?1049h" + full + "\x1b[5;1HX", AnalyzeOptions{LiveRows: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(RecordingOf(20, rows, []byte(tc.in)), tc.opts)
			if r.AboveLive != tc.above {
				t.Errorf("above-live %d, want %d\n%s\nscreen:\n%s", r.AboveLive, tc.above, r, Framed(r.Final))
			}
			if r.AboveLive > 0 && r.Events[0].Kind != AboveLive && r.Events[0].Kind != ClearScreen {
				t.Errorf("events %v", r.Events)
			}
		})
	}
}

func TestAnalyzeEventsSayWhere(t *testing.T) {
	full := lines(30, "line %02d") + "view"
	rec := Recording{Cols: 20, Rows: 10, Chunks: []Chunk{
		{At: time.Second, Data: []byte(full)},
		{At: 2 * time.Second, Data: []byte("\x1b[5;3HX")},
	}}
	r := Analyze(rec, AnalyzeOptions{LiveRows: 1})
	want := Event{Kind: AboveLive, Offset: len(full) + len("\x1b[5;3H"), At: 2 * time.Second, Row: 5, Col: 3, Seq: "X"}
	if len(r.Events) != 1 || r.Events[0] != want {
		t.Errorf("events %v, want %v", r.Events, want)
	}
	if s := r.String(); !strings.Contains(s, "above-live 1") || !strings.Contains(s, want.String()) {
		t.Errorf("String() = %s", s)
	}
}

func TestAnalyzeResize(t *testing.T) {
	rec := Recording{Cols: 10, Rows: 4, Chunks: []Chunk{
		{Data: []byte("0123456789")},
		{Cols: 5, Rows: 2},
		{Data: []byte("\r\nabc")},
	}}
	r := Analyze(rec, AnalyzeOptions{})
	if want := "01234\nabc\n"; r.Final != want {
		t.Errorf("screen:\n%s", Framed(r.Final))
	}
}

func TestRecordingOffsets(t *testing.T) {
	rec := Recording{Chunks: []Chunk{
		{At: 10 * time.Millisecond, Data: []byte("abc")},
		{At: 20 * time.Millisecond, Cols: 1, Rows: 1},
		{At: 30 * time.Millisecond, Data: []byte("defabc")},
	}}
	if got := rec.Index(0, "abc"); got != 0 {
		t.Errorf("Index(0) = %d", got)
	}
	if got := rec.Index(1, "abc"); got != 6 {
		t.Errorf("Index(1) = %d", got)
	}
	if got := rec.Index(1, "xyz"); got != -1 {
		t.Errorf("Index(xyz) = %d", got)
	}
	if got := rec.TimeAt(2); got != 10*time.Millisecond {
		t.Errorf("TimeAt(2) = %v", got)
	}
	if got := rec.TimeAt(3); got != 30*time.Millisecond {
		t.Errorf("TimeAt(3) = %v", got)
	}
	if got := rec.OffsetAt(15 * time.Millisecond); got != 3 {
		t.Errorf("OffsetAt(15ms) = %d", got)
	}
	if got := rec.OffsetAt(time.Hour); got != 9 {
		t.Errorf("OffsetAt(1h) = %d", got)
	}
	if string(rec.Bytes()) != "abcdefabc" || rec.Len() != 9 {
		t.Errorf("Bytes() = %q", rec.Bytes())
	}
}
