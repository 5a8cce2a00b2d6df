package termtest

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// AnalyzeOptions says what [Analyze] counts.
type AnalyzeOptions struct {
	// LiveRows is the height of the program's live region, the rows it
	// redraws at the bottom of its output: the live region is the LiveRows
	// rows ending at the bottom of the content, the lowest row printed on,
	// which follows the output as it grows and scrolls, and moves up when
	// the screen is erased below the cursor (ED 0) but not when lines are
	// erased one by one. Give the largest height the region reaches. Zero
	// (and LiveTop zero) counts no writes above the live region.
	LiveRows int
	// LiveTop, when positive, fixes the live region's first row (from 1)
	// instead, e.g. Rows for a one-row region once the screen is full.
	LiveTop int
	// From and To are the byte offsets of the window counted (To zero for
	// the end of the recording): the whole recording is replayed, but only
	// what the window's bytes do is counted.
	From, To int
}

// EventKind names what an [Event] records.
type EventKind string

// Kinds of events.
const (
	// ClearScreen is a sequence that clears the whole screen or the
	// scrollback: ED 2 or 3 (ESC[2J, ESC[3J), ED 0 with the cursor on the
	// first row (ESC[J, ESC[0J), or a full reset (ESC c).
	ClearScreen EventKind = "clear-screen"
	// AboveLive is a write that overwrote, erased, shifted out or scrolled
	// away content above the live region. Writing into empty cells there
	// (lines a program inserts above itself) is not one.
	AboveLive EventKind = "above-live"
)

// Event is one clear-screen or write above the live region.
type Event struct {
	// Kind is what happened.
	Kind EventKind
	// Offset is the byte offset of the sequence or text in the recording.
	Offset int
	// At is when it was read, since the program started.
	At time.Duration
	// Row and Col are the cursor's position before it, from 1.
	Row, Col int
	// Seq is the sequence or text.
	Seq string
}

// String formats the event for failure messages.
func (e Event) String() string {
	return fmt.Sprintf("%s at byte %d (%v), row %d col %d: %q", e.Kind, e.Offset, e.At, e.Row, e.Col, e.Seq)
}

// maxEvents bounds [Report.Events].
const maxEvents = 20

// Report is what [Analyze] found in the window of a recording.
type Report struct {
	// TotalBytes is the size of the whole recording, WindowBytes of the
	// window.
	TotalBytes, WindowBytes int
	// Writes is the number of reads of output that began in the window:
	// each is one or more writes the program made in quick succession (a
	// frame, usually), and MaxWrite the largest in bytes.
	Writes, MaxWrite int
	// ClearScreens counts [ClearScreen] sequences.
	ClearScreens int
	// EraseLines counts erase-in-line sequences (EL: ESC[K, ESC[1K,
	// ESC[2K), wherever they are.
	EraseLines int
	// EraseBelow counts erase-below sequences (ED 0) not on the first row.
	EraseBelow int
	// EraseChars counts erase-character sequences (ECH: ESC[nX).
	EraseChars int
	// AboveLive counts [AboveLive] writes: each sequence once, and each
	// run of text printed on one row once.
	AboveLive int
	// InsertedLines and DeletedLines count lines inserted (IL) and deleted
	// (DL).
	InsertedLines, DeletedLines int
	// ScrolledLines counts lines that scrolled off the top of the main
	// screen into the scrollback.
	ScrolledLines int
	// SyncUpdates counts synchronized updates begun (ESC[?2026h).
	SyncUpdates int
	// AltScreens counts switches to the alternate screen.
	AltScreens int
	// Events are the first clear-screens and writes above the live region.
	Events []Event
	// Final is the screen at the end of the recording, one line per row
	// without trailing spaces, as tmux capture-pane prints it.
	Final string
}

// BytesPerWrite is the window's mean bytes per read of output.
func (r Report) BytesPerWrite() float64 {
	if r.Writes == 0 {
		return 0
	}
	return float64(r.WindowBytes) / float64(r.Writes)
}

// String summarises the report in one line, with its events after it.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d bytes (window %d in %d writes, %.0f bytes/write, max %d); clear-screens %d, erase-lines %d, erase-below %d, erase-chars %d, above-live %d; lines inserted %d, deleted %d, scrolled %d; sync updates %d, alt screens %d",
		r.TotalBytes, r.WindowBytes, r.Writes, r.BytesPerWrite(), r.MaxWrite, r.ClearScreens, r.EraseLines, r.EraseBelow, r.EraseChars, r.AboveLive,
		r.InsertedLines, r.DeletedLines, r.ScrolledLines, r.SyncUpdates, r.AltScreens)
	for _, e := range r.Events {
		b.WriteString("\n  ")
		b.WriteString(e.String())
	}
	return b.String()
}

// Analyze replays rec on a model of a VT terminal (xterm's behaviour for
// what it models: printing with auto-wrap and wide characters, cursor
// movement, scroll regions and scrolling, insert and delete of lines and
// characters, erases, tab stops, saved cursors, insert mode, the alternate
// screen) and reports what happened in the window opts gives. The
// recording's size is the terminal's (80×24 if unset).
//
// Writes above the live region are counted on the main screen only. Not
// modelled: origin mode, left and right margins, character sets and double
// width lines; a resize keeps the top-left of the screen.
func Analyze(rec Recording, opts AnalyzeOptions) Report {
	cols, rows := size(rec.Cols, rec.Rows)
	a := &analyzer{opts: opts, rec: rec}
	a.main = newScreen(cols, rows)
	a.alt = newScreen(cols, rows)
	a.cur = a.main

	data := rec.Bytes()
	to := opts.To
	if to <= 0 || to > len(data) {
		to = len(data)
	}
	from := min(max(opts.From, 0), to)
	a.report.TotalBytes = len(data)
	a.report.WindowBytes = to - from

	// Reads that start in the window, and resizes by offset.
	type resize struct{ offset, cols, rows int }
	var resizes []resize
	off := 0
	for _, c := range rec.Chunks {
		if c.Cols > 0 && c.Rows > 0 {
			resizes = append(resizes, resize{off, c.Cols, c.Rows})
		}
		if len(c.Data) > 0 && off >= from && off < to {
			a.report.Writes++
			a.report.MaxWrite = max(a.report.MaxWrite, len(c.Data))
		}
		off += len(c.Data)
	}

	p := ansi.NewParser()
	var state byte
	for i := 0; i < len(data); {
		for len(resizes) > 0 && resizes[0].offset <= i {
			a.main.resize(resizes[0].cols, resizes[0].rows)
			a.alt.resize(resizes[0].cols, resizes[0].rows)
			resizes = resizes[1:]
		}
		var seq []byte
		var width, n int
		if a.graphemes {
			seq, width, n, state = ansi.DecodeSequence(data[i:], state, p)
		} else {
			seq, width, n, state = ansi.DecodeSequenceWc(data[i:], state, p)
		}
		if n <= 0 {
			i++ // not decodable: skip the byte
			continue
		}
		a.counting = i >= from && i < to
		a.offset = i
		a.seq = seq
		a.step(seq, width, p)
		i += n
	}
	for _, r := range resizes {
		a.main.resize(r.cols, r.rows)
		a.alt.resize(r.cols, r.rows)
	}
	a.report.Final = a.cur.String()
	return a.report
}

// analyzer replays a recording.
type analyzer struct {
	opts           AnalyzeOptions
	rec            Recording
	main, alt, cur *screen
	graphemes      bool // mode 2027: grapheme clustering
	report         Report

	// The sequence being replayed.
	counting bool
	offset   int
	seq      []byte

	// The run of text being printed: its row, and whether it has
	// damaged content above the live region yet.
	inRun      bool
	runRow     int
	runDamaged bool
}

// event counts a clear-screen or a write above the live region.
func (a *analyzer) event(kind EventKind) {
	if !a.counting {
		return
	}
	switch kind {
	case ClearScreen:
		a.report.ClearScreens++
	case AboveLive:
		a.report.AboveLive++
	}
	if len(a.report.Events) < maxEvents {
		seq := string(a.seq)
		if len(seq) > 80 {
			seq = seq[:80] + "…"
		}
		a.report.Events = append(a.report.Events, Event{
			Kind: kind, Offset: a.offset, At: a.rec.TimeAt(a.offset),
			Row: a.cur.row + 1, Col: a.cur.col + 1, Seq: seq,
		})
	}
}

// count adds to a counter when the sequence is in the window.
func (a *analyzer) count(c *int, n int) {
	if a.counting {
		*c += n
	}
}

// liveTop is the first row (from 0) of the live region on the current
// screen, or 0 when nothing is above it.
func (a *analyzer) liveTop() int {
	if a.cur != a.main {
		return 0
	}
	if a.opts.LiveTop > 0 {
		return a.opts.LiveTop - 1
	}
	if a.opts.LiveRows <= 0 {
		return 0
	}
	return max(a.cur.floor-a.opts.LiveRows+1, 0)
}

// damage records a write above the live region when the cells of row y
// from x0 up to x1 (exclusive) hold content, y being above the live region.
func (a *analyzer) damage(top, y, x0, x1 int) bool {
	if y < top && a.cur.hasContent(y, x0, x1) {
		a.event(AboveLive)
		return true
	}
	return false
}

// damageRows is damage over whole rows y0 up to y1 (exclusive), recorded
// once.
func (a *analyzer) damageRows(top, y0, y1 int) bool {
	for y := max(y0, 0); y < y1 && y < top; y++ {
		if a.damage(top, y, 0, a.cur.cols) {
			return true
		}
	}
	return false
}

// step replays one sequence, control character or grapheme.
func (a *analyzer) step(seq []byte, width int, p *ansi.Parser) {
	if c := seq[0]; c < 0x20 || c == ansi.DEL || (c >= 0x80 && c < 0xc0) {
		a.inRun = false // a control or sequence ends a run of text
	}
	switch c := seq[0]; {
	case c == ansi.ESC && len(seq) > 1:
		switch seq[1] {
		case '[':
			a.csi(ansi.Cmd(p.Command()), p.Params())
		case ']', 'P', '_', '^', 'X':
			// OSC, DCS, APC, PM, SOS: nothing on the screen.
		default:
			a.esc(ansi.Cmd(p.Command()))
		}
	case c == ansi.CSI && len(seq) > 1:
		a.csi(ansi.Cmd(p.Command()), p.Params())
	case c < 0x20 || c == ansi.DEL:
		a.control(c)
	case c >= 0x80 && c < 0xc0:
		// C1 controls and their strings, stray continuation bytes: not
		// drawn.
	default:
		a.print(string(seq), width)
	}
}

// print draws a grapheme at the cursor.
func (a *analyzer) print(g string, width int) {
	s := a.cur
	if width <= 0 {
		return // combining or zero-width: joins the previous cell
	}
	width = min(width, s.cols)
	if s.wrapPending && s.autowrap {
		s.col = 0
		a.lineFeed()
	}
	if s.col+width > s.cols {
		if s.autowrap {
			s.col = 0
			a.lineFeed()
		} else {
			s.col = s.cols - width
		}
	}
	top := a.liveTop()
	// A run of text counts once: the first of its graphemes that damages
	// content stands for the rest.
	if !a.inRun || a.runRow != s.row {
		a.runDamaged = false
	}
	if !a.runDamaged {
		if s.insert {
			a.runDamaged = a.damage(top, s.row, s.col, s.cols)
		} else {
			a.runDamaged = a.damage(top, s.row, s.col, s.col+width)
		}
	}
	if s.insert {
		s.insertCells(s.col, width)
	}
	a.inRun, a.runRow = true, s.row
	s.put(g, width)
}

// control replays a C0 control character.
func (a *analyzer) control(c byte) {
	s := a.cur
	switch c {
	case ansi.CR:
		s.col, s.wrapPending = 0, false
	case ansi.LF, ansi.VT, ansi.FF:
		a.lineFeed()
	case ansi.BS:
		s.col, s.wrapPending = max(s.col-1, 0), false
	case ansi.HT:
		s.col, s.wrapPending = s.nextTab(s.col, 1), false
	}
}

// lineFeed moves down a row, scrolling the region up at its bottom.
func (a *analyzer) lineFeed() {
	s := a.cur
	s.wrapPending = false
	if s.row == s.bot {
		a.scrollUp(1)
		return
	}
	if s.row < s.rows-1 {
		s.row++
	}
}

// scrollUp scrolls the scroll region up n lines. On the main screen with the
// region the whole screen the lines go to the scrollback; otherwise they are
// lost.
func (a *analyzer) scrollUp(n int) {
	s := a.cur
	n = min(n, s.bot-s.top+1)
	if s.top == 0 && s.bot == s.rows-1 && s == a.main {
		a.count(&a.report.ScrolledLines, n)
	} else {
		a.damageRows(a.liveTop(), s.top, s.top+n)
	}
	s.deleteRows(s.top, n, s.bot)
}

// scrollDown scrolls the scroll region down n lines, losing its last ones.
func (a *analyzer) scrollDown(n int) {
	s := a.cur
	n = min(n, s.bot-s.top+1)
	a.damageRows(a.liveTop(), s.bot-n+1, s.bot+1)
	s.insertRows(s.top, n, s.bot)
}

// esc replays an ESC sequence.
func (a *analyzer) esc(cmd ansi.Cmd) {
	s := a.cur
	if cmd.Intermediate() != 0 {
		return // character sets, DECALN and the like
	}
	switch cmd.Final() {
	case '7':
		s.save()
	case '8':
		s.restore()
	case 'D': // IND
		a.lineFeed()
	case 'E': // NEL
		s.col = 0
		a.lineFeed()
	case 'M': // RI
		s.wrapPending = false
		if s.row == s.top {
			a.scrollDown(1)
		} else if s.row > 0 {
			s.row--
		}
	case 'H': // HTS
		s.tabs[s.col] = true
	case 'c': // RIS
		a.event(ClearScreen)
		a.damageRows(a.liveTop(), 0, s.rows)
		a.main.reset()
		a.alt.reset()
		a.cur = a.main
	}
}

// csi replays a CSI sequence.
func (a *analyzer) csi(cmd ansi.Cmd, params ansi.Params) {
	s := a.cur
	arg := func(i, def int) int {
		v, _, _ := params.Param(i, def)
		return v
	}
	// count is a parameter that means 1 when missing or zero.
	count := func(i int) int { return max(arg(i, 1), 1) }

	switch cmd.Prefix() {
	case '?':
		if cmd.Intermediate() == 0 {
			switch cmd.Final() {
			case 'h', 'l':
				a.modes(params, cmd.Final() == 'h', true)
			case 'J':
				a.eraseDisplay(arg(0, 0))
			case 'K':
				a.eraseLine(arg(0, 0))
			case 'W':
				if arg(0, 0) == 5 {
					s.defaultTabs()
				}
			}
		}
		return
	case 0:
	default:
		return // private sequences: keyboard protocols and queries
	}
	if cmd.Intermediate() != 0 {
		return // DECSCUSR, DECRQM and the like
	}
	top := a.liveTop()
	switch cmd.Final() {
	case 'A': // CUU
		s.moveUp(count(0))
	case 'B', 'e': // CUD, VPR
		s.moveDown(count(0))
	case 'C', 'a': // CUF, HPR
		s.setCol(s.col + count(0))
	case 'D': // CUB
		s.setCol(s.col - count(0))
	case 'E': // CNL
		s.moveDown(count(0))
		s.col = 0
	case 'F': // CPL
		s.moveUp(count(0))
		s.col = 0
	case 'G', '`': // CHA, HPA
		s.setCol(count(0) - 1)
	case 'd': // VPA
		s.setRow(count(0) - 1)
	case 'H', 'f': // CUP
		s.setRow(count(0) - 1)
		s.setCol(count(1) - 1)
	case 'I': // CHT
		s.col, s.wrapPending = s.nextTab(s.col, count(0)), false
	case 'Z': // CBT
		s.col, s.wrapPending = s.prevTab(s.col, count(0)), false
	case 'J':
		a.eraseDisplay(arg(0, 0))
	case 'K':
		a.eraseLine(arg(0, 0))
	case 'X': // ECH
		a.count(&a.report.EraseChars, 1)
		n := min(count(0), s.cols-s.col)
		a.damage(top, s.row, s.col, s.col+n)
		s.clear(s.row, s.col, s.col+n)
		s.wrapPending = false
	case '@': // ICH
		a.damage(top, s.row, s.col, s.cols)
		s.insertCells(s.col, count(0))
		s.wrapPending = false
	case 'P': // DCH
		a.damage(top, s.row, s.col, s.cols)
		s.deleteCells(s.col, count(0))
		s.wrapPending = false
	case 'L': // IL
		if s.row >= s.top && s.row <= s.bot {
			n := min(count(0), s.bot-s.row+1)
			a.count(&a.report.InsertedLines, n)
			a.damageRows(top, s.bot-n+1, s.bot+1)
			s.insertRows(s.row, n, s.bot)
			s.col, s.wrapPending = 0, false
		}
	case 'M': // DL
		if s.row >= s.top && s.row <= s.bot {
			n := min(count(0), s.bot-s.row+1)
			a.count(&a.report.DeletedLines, n)
			a.damageRows(top, s.row, s.row+n)
			s.deleteRows(s.row, n, s.bot)
			s.col, s.wrapPending = 0, false
		}
	case 'S': // SU
		a.scrollUp(count(0))
	case 'T': // SD
		if len(params) <= 1 {
			a.scrollDown(count(0))
		}
	case 'b': // REP
		if s.last != "" {
			g, w := s.last, s.lastWidth
			for range min(count(0), s.cols*s.rows) {
				a.print(g, w)
			}
		}
	case 'r': // DECSTBM
		t, b := arg(0, 1), arg(1, s.rows)
		if t < 1 {
			t = 1
		}
		if b < 1 || b > s.rows {
			b = s.rows
		}
		if t < b {
			s.top, s.bot = t-1, b-1
			s.row, s.col, s.wrapPending = 0, 0, false
		}
	case 's':
		if len(params) == 0 {
			s.save()
		}
	case 'u':
		if len(params) == 0 {
			s.restore()
		}
	case 'g': // TBC
		switch arg(0, 0) {
		case 0:
			s.tabs[s.col] = false
		case 3:
			clear(s.tabs)
		}
	case 'h', 'l':
		a.modes(params, cmd.Final() == 'h', false)
	}
}

// modes sets or resets ANSI or DEC private modes.
func (a *analyzer) modes(params ansi.Params, set, private bool) {
	params.ForEach(0, func(_, mode int, _ bool) {
		s := a.cur
		if !private {
			if mode == 4 { // IRM
				s.insert = set
			}
			return
		}
		switch mode {
		case 7: // DECAWM
			s.autowrap = set
			if !set {
				s.wrapPending = false
			}
		case 2026:
			if set {
				a.count(&a.report.SyncUpdates, 1)
			}
		case 2027:
			a.graphemes = set
		case 47, 1047, 1049:
			a.altScreen(set, mode)
		}
	})
}

// altScreen switches between the main and alternate screens.
func (a *analyzer) altScreen(on bool, mode int) {
	if on == (a.cur == a.alt) {
		return
	}
	if on {
		a.count(&a.report.AltScreens, 1)
		if mode == 1049 {
			a.main.save()
		}
		a.alt.row, a.alt.col = a.main.row, a.main.col
		if mode == 1049 {
			a.alt.clearAll()
		}
		a.cur = a.alt
		return
	}
	if mode == 1047 {
		a.alt.clearAll()
	}
	a.cur = a.main
	if mode == 1049 {
		a.main.restore()
	}
}

// eraseDisplay replays ED.
func (a *analyzer) eraseDisplay(mode int) {
	s := a.cur
	top := a.liveTop()
	switch mode {
	case 0:
		switch {
		case s.row == 0 && s.col == 0 && !s.hasContentFrom(0):
			// Erasing an empty screen from its top clears nothing a
			// user could see flicker: an inline program's first frame
			// drawn before anything was printed.
			a.count(&a.report.EraseBelow, 1)
		case s.row == 0:
			a.event(ClearScreen)
		default:
			a.count(&a.report.EraseBelow, 1)
		}
		if !a.damage(top, s.row, s.col, s.cols) {
			a.damageRows(top, s.row+1, s.rows)
		}
		s.clear(s.row, s.col, s.cols)
		for y := s.row + 1; y < s.rows; y++ {
			s.clear(y, 0, s.cols)
		}
		// What was below is gone: an inline renderer erases below its
		// region as it shrinks or redraws.
		if s.col == 0 {
			s.floor = min(s.floor, s.row-1)
		} else {
			s.floor = min(s.floor, s.row)
		}
	case 1:
		if !a.damageRows(top, 0, s.row) {
			a.damage(top, s.row, 0, s.col+1)
		}
		for y := 0; y < s.row; y++ {
			s.clear(y, 0, s.cols)
		}
		s.clear(s.row, 0, s.col+1)
	case 2:
		a.event(ClearScreen)
		a.damageRows(top, 0, s.rows)
		s.clearAll()
	case 3:
		// The scrollback, not the screen.
		a.event(ClearScreen)
	}
}

// eraseLine replays EL.
func (a *analyzer) eraseLine(mode int) {
	s := a.cur
	a.count(&a.report.EraseLines, 1)
	x0, x1 := s.col, s.cols
	switch mode {
	case 1:
		x0, x1 = 0, s.col+1
	case 2:
		x0, x1 = 0, s.cols
	}
	a.damage(a.liveTop(), s.row, x0, min(x1, s.cols))
	s.clear(s.row, x0, min(x1, s.cols))
}

// wideTail marks the second cell of a wide character.
const wideTail = "\x00"

// cursor is a saved cursor.
type cursor struct {
	row, col int
	autowrap bool
}

// screen is one screen buffer of the terminal model.
type screen struct {
	cols, rows  int
	cells       [][]string // "" for an empty cell
	row, col    int        // from 0
	wrapPending bool
	autowrap    bool
	insert      bool
	top, bot    int // scroll region, from 0, inclusive
	tabs        []bool
	saved       cursor
	last        string // the last grapheme printed, for REP
	lastWidth   int
	// floor is the bottom of the content, the row the live region ends
	// on: the lowest row printed on, moved as lines scroll, are inserted
	// or deleted, and by erasing below (ED 0) but not by erasing lines (a
	// program that erases its way up from the bottom line by line does not
	// move its live region up); -1 for none.
	floor int
}

func newScreen(cols, rows int) *screen {
	s := &screen{cols: cols, rows: rows}
	s.reset()
	return s
}

// reset is a full reset of the screen.
func (s *screen) reset() {
	s.cells = make([][]string, s.rows)
	for y := range s.cells {
		s.cells[y] = make([]string, s.cols)
	}
	s.row, s.col, s.wrapPending = 0, 0, false
	s.autowrap, s.insert = true, false
	s.top, s.bot = 0, s.rows-1
	s.saved = cursor{autowrap: true}
	s.defaultTabs()
	s.last, s.lastWidth = "", 0
	s.floor = -1
}

// resize changes the screen's size, keeping its top-left.
func (s *screen) resize(cols, rows int) {
	cells := make([][]string, rows)
	for y := range cells {
		cells[y] = make([]string, cols)
		if y < s.rows {
			copy(cells[y], s.cells[y])
		}
	}
	s.cells, s.cols, s.rows = cells, cols, rows
	s.row, s.col, s.wrapPending = min(s.row, rows-1), min(s.col, cols-1), false
	s.top, s.bot = 0, rows-1
	s.floor = min(s.floor, rows-1)
	s.defaultTabs()
}

func (s *screen) defaultTabs() {
	s.tabs = make([]bool, s.cols)
	for x := 8; x < s.cols; x += 8 {
		s.tabs[x] = true
	}
}

func (s *screen) nextTab(x, n int) int {
	for ; n > 0 && x < s.cols-1; n-- {
		x++
		for x < s.cols-1 && !s.tabs[x] {
			x++
		}
	}
	return x
}

func (s *screen) prevTab(x, n int) int {
	for ; n > 0 && x > 0; n-- {
		x--
		for x > 0 && !s.tabs[x] {
			x--
		}
	}
	return x
}

func (s *screen) save() {
	s.saved = cursor{row: s.row, col: s.col, autowrap: s.autowrap}
}

func (s *screen) restore() {
	s.row, s.col = min(s.saved.row, s.rows-1), min(s.saved.col, s.cols-1)
	s.autowrap, s.wrapPending = s.saved.autowrap, false
}

// moveUp is CUU: it stops at the top margin when it starts below it.
func (s *screen) moveUp(n int) {
	limit := 0
	if s.row >= s.top {
		limit = s.top
	}
	s.row, s.wrapPending = max(s.row-n, limit), false
}

// moveDown is CUD: it stops at the bottom margin when it starts above it.
func (s *screen) moveDown(n int) {
	limit := s.rows - 1
	if s.row <= s.bot {
		limit = s.bot
	}
	s.row, s.wrapPending = min(s.row+n, limit), false
}

func (s *screen) setRow(y int) { s.row, s.wrapPending = min(max(y, 0), s.rows-1), false }
func (s *screen) setCol(x int) { s.col, s.wrapPending = min(max(x, 0), s.cols-1), false }

// put writes a grapheme of width w at the cursor and advances it.
func (s *screen) put(g string, w int) {
	line := s.cells[s.row]
	line[s.col] = g
	for i := 1; i < w && s.col+i < s.cols; i++ {
		line[s.col+i] = wideTail
	}
	s.last, s.lastWidth = g, w
	s.floor = max(s.floor, s.row)
	if s.col+w >= s.cols {
		s.col = s.cols - 1
		s.wrapPending = s.autowrap
		return
	}
	s.col += w
}

// hasContent reports whether cells x0 up to x1 of row y hold anything.
func (s *screen) hasContent(y, x0, x1 int) bool {
	if y < 0 || y >= s.rows {
		return false
	}
	for _, c := range s.cells[y][max(x0, 0):min(x1, s.cols)] {
		if c != "" {
			return true
		}
	}
	return false
}

// hasContentFrom reports whether any row from y down holds a glyph.
func (s *screen) hasContentFrom(y int) bool {
	for ; y < s.rows; y++ {
		if s.hasContent(y, 0, s.cols) {
			return true
		}
	}
	return false
}

func (s *screen) clear(y, x0, x1 int) {
	clear(s.cells[y][max(x0, 0):min(x1, s.cols)])
}

func (s *screen) clearAll() {
	for y := range s.cells {
		clear(s.cells[y])
	}
	s.floor = -1
}

// insertCells shifts cells from x right by n, blank ones in their place.
func (s *screen) insertCells(x, n int) {
	line := s.cells[s.row]
	n = min(n, s.cols-x)
	copy(line[x+n:], line[x:s.cols-n])
	clear(line[x : x+n])
}

// deleteCells shifts cells after x left by n, blank ones at the end.
func (s *screen) deleteCells(x, n int) {
	line := s.cells[s.row]
	n = min(n, s.cols-x)
	copy(line[x:], line[x+n:])
	clear(line[s.cols-n:])
}

// insertRows inserts n blank rows at y, losing the rows pushed below bot.
func (s *screen) insertRows(y, n, bot int) {
	if y <= s.floor && s.floor <= bot {
		s.floor = min(s.floor+n, bot)
	}
	for range n {
		last := s.cells[bot]
		copy(s.cells[y+1:bot+1], s.cells[y:bot])
		clear(last)
		s.cells[y] = last
	}
}

// deleteRows deletes n rows at y, blank rows coming in above bot.
func (s *screen) deleteRows(y, n, bot int) {
	if y <= s.floor && s.floor <= bot {
		s.floor = max(s.floor-n, y-1)
	}
	for range n {
		first := s.cells[y]
		copy(s.cells[y:bot], s.cells[y+1:bot+1])
		clear(first)
		s.cells[bot] = first
	}
}

// String renders the screen as tmux capture-pane -p does.
func (s *screen) String() string {
	var b bytes.Buffer
	for _, line := range s.cells {
		var l strings.Builder
		for _, c := range line {
			switch c {
			case "":
				l.WriteByte(' ')
			case wideTail:
			default:
				l.WriteString(c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
