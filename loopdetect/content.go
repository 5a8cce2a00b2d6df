package loopdetect

import (
	"bytes"
	"hash/maphash"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// detailContext is how many code units before the repeated chunk the
// content Detail shows; gemini-cli hard-codes it.
const detailContext = 20

// AddContent feeds one streamed text delta (model output text, not thoughts
// or tool results) and reports whether the text has started chanting. The
// delta's markdown matters: fences, table rows, list items, headings,
// blockquotes and divider lines restart tracking, and text in code blocks
// is not tracked at all, because such content repeats legitimately. While a
// detection is latched the delta is ignored and the latched detection is
// returned.
func (d *Detector) AddContent(delta string) (Detection, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.latched {
		return d.last, true
	}
	if !d.contentLoop(delta) {
		return Detection{}, false
	}
	return d.latch(Detection{
		Kind:   KindContent,
		Detail: `Repeating content detected: "` + jsTrim(d.chunks.detail()) + `..."`,
	}), true
}

// contentLoop is gemini-cli's checkContentLoop.
func (d *Detector) contentLoop(delta string) bool {
	fences := strings.Count(delta, "```")
	divider := isDivider(delta)
	if fences > 0 || divider || startsMarkdownElement(delta) {
		// A different kind of element starts: don't let chunks span it.
		d.resetContent()
	}
	was := d.inCodeBlock
	if fences%2 == 1 {
		d.inCodeBlock = !d.inCodeBlock
	}
	// Code is legitimately repetitive, so nothing in, entering or leaving a
	// code block is tracked; nor are dividers.
	if was || d.inCodeBlock || divider {
		return false
	}
	return d.chunks.add(delta)
}

// resetContent forgets the tracked text (not the code-block state, which
// describes the stream rather than the tracking).
func (d *Detector) resetContent() { d.chunks.reset() }

// gemini-cli decides which deltas restart tracking with these regular
// expressions (JavaScript, so \s and "." are JavaScript's; see jsSpace):
//
//	table      /(^|\n)\s*(\|.*\||[|+-]{3,})/
//	bullet     /(^|\n)\s*[*-+]\s/
//	numbered   /(^|\n)\s*\d+\.\s/
//	heading    /(^|\n)#+\s/
//	blockquote /(^|\n)>\s/
//	divider    /^[+-_=*\u2500-\u257F]+$/
//
// They used to run through package regexp, seven matches per delta, which
// was most of the cost of a short delta. They are simple enough to match by
// hand in one pass; content_ref_test.go keeps them as regexps and checks
// that both agree.

// isDivider is gemini-cli's divider pattern: the whole delta made of
// characters from [+-_=*\u2500-\u257F]. "+-_" is the range U+002B..U+005F,
// which holds digits, upper-case letters and most ASCII punctuation, so a
// delta such as "OK" or "42." counts as a divider; it is kept for fidelity.
// With '=' (inside that range) and '*' (U+002A) the class is
// U+002A..U+005F and U+2500..U+257F. Invalid UTF-8 decodes to U+FFFD, as
// it does for regexp and in a JavaScript string, and is outside the class.
func isDivider(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 0x2a || r > 0x5f) && (r < 0x2500 || r > 0x257f) {
			return false
		}
	}
	return true
}

// startsMarkdownElement reports whether gemini-cli's table, bullet,
// numbered, heading or blockquote pattern matches somewhere in s.
//
// Each pattern is anchored at the start of s or just after a '\n'. Those
// patterns that allow leading whitespace need a non-whitespace character
// after it, so the whitespace they skip is always the whole run starting at
// the anchor: checking what follows that maximal run is enough. A run may
// cross '\n's, and the anchors inside it end at the same place, so each run
// is checked once. All positions inspected are just after an ASCII byte or
// at an anchor, where decoding rune by rune from the start of s (as regexp
// does) is also at a boundary.
func startsMarkdownElement(s string) bool {
	runEnd := -1 // end of the last whitespace run checked
	for a := 0; a <= len(s); {
		if a < len(s) {
			switch s[a] {
			case '#': // heading: #+\s
				k := a + 1
				for k < len(s) && s[k] == '#' {
					k++
				}
				if jsSpaceAt(s, k) {
					return true
				}
			case '>': // blockquote: >\s
				if jsSpaceAt(s, a+1) {
					return true
				}
			}
		}
		if a > runEnd {
			runEnd = skipJSSpace(s, a)
			if elementAfterSpace(s, runEnd) {
				return true
			}
		}
		nl := strings.IndexByte(s[a:], '\n')
		if nl < 0 {
			break
		}
		a += nl + 1
	}
	return false
}

// elementAfterSpace reports whether the table, bullet or numbered pattern
// matches from s[j], the first character after the leading whitespace.
func elementAfterSpace(s string, j int) bool {
	if j >= len(s) {
		return false
	}
	switch c := s[j]; {
	case c == '|':
		// Table: \|.*\| (a second '|' before the line ends) or [|+-]{3,}.
		for _, r := range s[j+1:] {
			if r == '|' {
				return true
			}
			if r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 {
				break
			}
		}
		return tableRule(s, j)
	case c == '+':
		// Bullet [*+]\s, or the table's [|+-]{3,}.
		return jsSpaceAt(s, j+1) || tableRule(s, j)
	case c == '-':
		// gemini-cli's bullet class [*-+] is the range '*'..'+', so a "- "
		// item is not a bullet; "---" is a table rule.
		return tableRule(s, j)
	case c == '*':
		return jsSpaceAt(s, j+1)
	case '0' <= c && c <= '9':
		// Numbered: \d+\.\s ('.' is not a digit, so the digits are all of
		// the run).
		k := j + 1
		for k < len(s) && '0' <= s[k] && s[k] <= '9' {
			k++
		}
		return k < len(s) && s[k] == '.' && jsSpaceAt(s, k+1)
	}
	return false
}

// tableRule reports whether [|+-]{3,} matches at s[j].
func tableRule(s string, j int) bool {
	if j+3 > len(s) {
		return false
	}
	for _, c := range []byte(s[j : j+3]) {
		if c != '|' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

// skipJSSpace returns the end of the run of JavaScript whitespace starting
// at s[i].
func skipJSSpace(s string, i int) int {
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isJSSpace(r) {
			return i
		}
		i += w
	}
	return i
}

// jsSpaceAt reports whether the character at s[i] is JavaScript
// whitespace; false at the end of s.
func jsSpaceAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isJSSpace(r)
}

// isJSSpace reports whether r is in JavaScript's \s, the ECMAScript
// WhiteSpace and LineTerminator characters. They differ from
// unicode.IsSpace: no U+0085, but U+FEFF.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// chunkTracker is the text half of gemini-cli's content detection: the
// streamed text, a window of ChunkSize code units slid over it one unit at
// a time, and for each distinct chunk the positions where it starts
// (gemini-cli's contentStats). A stream holds one entry per position, so
// how an entry is stored decides the detector's memory: a map from hash to
// []int costs a map slot and a slice allocation per position. Here the
// positions where a chunk starts form a linked list through prev, newest
// first, and an open-addressing table maps the chunk to its newest
// position in eight bytes.
//
// Positions are absolute: they count code units from the Detector's
// creation and are never reused. Dropping text off the front
// (MaxContentBuffer) or resetting then only moves base, and anything
// stored before base is dead, so neither has to visit the stored positions
// the way gemini-cli's truncation shifts every one of them. Dead table
// entries are reused or dropped when the table is rebuilt.
type chunkTracker struct {
	chunkSize, threshold, limit int
	// seed keys the chunk hash. gemini-cli hashes chunks with SHA-256;
	// a hash here only finds candidates, each confirmed by comparing the
	// text, so a fast non-cryptographic one decides the same.
	seed maphash.Seed

	// text is the UTF-16LE encoding of the text from position textBase on;
	// gemini-cli's content is the part from base on. Keeping the bytes lets
	// a chunk be hashed and compared in place. Text before base is only
	// dropped once there is enough of it (see compactAt), to copy the
	// buffer rarely rather than on every delta.
	text     []byte
	textBase int
	base     int
	// next is the next window position to examine, gemini-cli's
	// lastContentIndex plus base.
	next int
	// prev[p-textBase] is the previous position where the chunk at p
	// starts, or -1, for every position examined.
	prev []int32
	// dups counts the extra times a position was recorded: after a
	// detection gemini-cli does not advance past the chunk that fired, so
	// once the latch is cleared it records that position again. Usually
	// nil.
	dups map[int32]int

	// slots is the open-addressing table (linear probing, power-of-two
	// size) from chunk to newest position; used counts its non-empty
	// slots, live or dead.
	slots []chunkSlot
	used  int
	// recent is scratch space for repeat.
	recent []int

	// posLimit is the largest absolute position before everything is
	// renumbered from base, so that positions fit in int32; fpMask is
	// applied to fingerprints. They are fields so that tests can make
	// renumbering and fingerprint clashes common.
	posLimit int
	fpMask   uint32
}

// chunkSlot is one table entry.
type chunkSlot struct {
	// pos is the newest position of the chunk plus one; 0 marks an empty
	// slot, so that a new table needs no initialising.
	pos int32
	// fp is the chunk hash's upper half: it places the entry and rules out
	// most other chunks without looking at their text.
	fp uint32
}

const (
	// minSlots is the size of a new table.
	minSlots = 32
	// maxPos bounds absolute positions, well inside int32.
	maxPos = 1 << 30
)

func newChunkTracker(cfg Config) chunkTracker {
	return chunkTracker{
		chunkSize: cfg.ChunkSize,
		threshold: cfg.ContentThreshold,
		// Positions are stored as int32 (see maxPos), so a MaxContentBuffer
		// over maxPos/2 units, a gigabyte of text, is capped there.
		limit:    min(cfg.MaxContentBuffer, maxPos/2),
		seed:     maphash.MakeSeed(),
		posLimit: maxPos,
		fpMask:   ^uint32(0),
	}
}

// end is the position just past the text.
func (c *chunkTracker) end() int { return c.textBase + len(c.text)/2 }

// reset forgets the text. The table keeps its slots: everything in it is
// now before base, so dead.
func (c *chunkTracker) reset() {
	end := c.end()
	c.text = c.text[:0]
	c.prev = c.prev[:0]
	c.textBase, c.base, c.next = end, end, end
	c.dups = nil
}

// add appends delta, drops text beyond the last limit units and examines
// the new window positions; it reports whether one of them completes a
// loop.
func (c *chunkTracker) add(delta string) bool {
	c.text = appendUTF16LE(c.text, delta)
	if end := c.end(); end-c.base > c.limit {
		// gemini-cli's truncateAndUpdate: positions before the cut are
		// forgotten and lastContentIndex moves up to the new start if it
		// was before it.
		c.base = end - c.limit
		c.next = max(c.next, c.base)
	}
	// The positions examined must stay contiguous from textBase, so a cut
	// past next compacts at once.
	if drop := c.base - c.textBase; drop > 0 && (drop >= c.compactAt() || c.textBase+len(c.prev) < c.next) {
		c.compact()
	}
	if c.end() > c.posLimit {
		c.renumber()
	}
	for c.next+c.chunkSize <= c.end() {
		if c.record(c.next) {
			return true
		}
		c.next++
	}
	return false
}

// compactAt is how much dead text may sit before base: a quarter of the
// buffer costs a quarter more memory in long streams and copies the buffer
// once per quarter buffer of text rather than on every delta.
func (c *chunkTracker) compactAt() int { return max(1, c.limit/4) }

// compact drops the text and prev entries before base.
func (c *chunkTracker) compact() {
	drop := c.base - c.textBase
	n := copy(c.text, c.text[2*drop:])
	c.text = c.text[:n]
	if drop < len(c.prev) {
		n = copy(c.prev, c.prev[drop:])
		c.prev = c.prev[:n]
	} else {
		c.prev = c.prev[:0]
	}
	c.textBase = c.base
}

// renumber shifts every position down by base so that base becomes 0; the
// table is rebuilt on the way, which also drops dead entries.
func (c *chunkTracker) renumber() {
	c.compact()
	shift := c.base
	for i, p := range c.prev {
		if int(p) < c.base {
			c.prev[i] = -1
		} else {
			c.prev[i] = p - int32(shift)
		}
	}
	if c.dups != nil {
		old := c.dups
		c.dups = make(map[int32]int, len(old))
		for p, n := range old {
			if int(p) >= c.base {
				c.dups[p-int32(shift)] = n
			}
		}
	}
	c.rebuild(shift)
	c.textBase -= shift
	c.base -= shift
	c.next -= shift
}

// chunkAt is the chunk at position p, as UTF-16LE bytes.
func (c *chunkTracker) chunkAt(p int) []byte {
	o := 2 * (p - c.textBase)
	return c.text[o : o+2*c.chunkSize]
}

// record is gemini-cli's isLoopDetectedForChunk for the chunk at position
// p: it adds p to the chunk's positions and decides whether they now form
// a loop.
func (c *chunkTracker) record(p int) bool {
	if p-c.textBase == len(c.prev) {
		c.prev = append(c.prev, -1)
	}
	if len(c.slots) == 0 {
		c.slots = make([]chunkSlot, minSlots)
	}
	chunk := c.chunkAt(p)
	h := maphash.Bytes(c.seed, chunk)
	fp := uint32(h>>32) & c.fpMask
	mask := len(c.slots) - 1
	free := -1
	i := int(fp) & mask
	for ; c.slots[i].pos != 0; i = (i + 1) & mask {
		s := &c.slots[i]
		q := int(s.pos) - 1
		if q < c.base {
			if free < 0 {
				free = i
			}
			continue
		}
		if s.fp != fp {
			continue
		}
		other := c.chunkAt(q)
		if bytes.Equal(other, chunk) {
			return c.repeat(s, p)
		}
		if maphash.Bytes(c.seed, other) == h {
			// gemini-cli keys its positions by hash alone and checks the
			// text against the first occurrence: a chunk colliding with a
			// different one is not recorded. Keep that (it never happens
			// with 64 bits, but it keeps the two algorithms identical).
			return false
		}
	}
	if free < 0 {
		free = i
		c.used++
	}
	c.slots[free] = chunkSlot{pos: int32(p + 1), fp: fp}
	if c.used > len(c.slots)/4*3 {
		c.rebuild(0)
	}
	return false
}

// repeat adds position p to the chunk whose newest position s holds, and
// is the rest of isLoopDetectedForChunk.
func (c *chunkTracker) repeat(s *chunkSlot, p int) bool {
	if q := int(s.pos) - 1; q == p {
		// The chunk that fired last time, examined again.
		if c.dups == nil {
			c.dups = make(map[int32]int)
		}
		c.dups[int32(p)]++
	} else {
		c.prev[p-c.textBase] = int32(q)
		s.pos = int32(p + 1)
	}

	// The threshold most recent positions still in the text, newest first.
	thr := c.threshold
	recent := c.recent[:0]
	for q := p; q >= c.base && len(recent) < thr; q = int(c.prev[q-c.textBase]) {
		n := 1
		if c.dups != nil {
			n += c.dups[int32(q)]
		}
		for ; n > 0 && len(recent) < thr; n-- {
			recent = append(recent, q)
		}
	}
	c.recent = recent
	if len(recent) < thr {
		return false
	}
	// The occurrences must be clustered: on average no more than five chunk
	// lengths apart. (The same arithmetic as gemini-cli's, float included.)
	avg := float64(recent[0]-recent[len(recent)-1]) / float64(thr-1)
	if avg > float64(c.chunkSize*5) {
		return false
	}
	// And the text between occurrences (the period) must itself repeat; a
	// list of distinct items sharing a long prefix has as many periods as
	// items, a chant has one or two.
	return c.distinctPeriods(recent) <= thr/2
}

// distinctPeriods counts the different texts between consecutive
// positions of recent (newest first), stopping once it passes half of
// them, which is all repeat needs to know. For the usual thresholds
// comparing the periods pairwise costs less than building a set of them.
func (c *chunkTracker) distinctPeriods(recent []int) int {
	period := func(k int) []byte {
		return c.text[2*(recent[k+1]-c.textBase) : 2*(recent[k]-c.textBase)]
	}
	limit := c.threshold / 2
	if len(recent) > 64 {
		seen := make(map[string]struct{}, len(recent))
		for k := 0; k+1 < len(recent); k++ {
			seen[string(period(k))] = struct{}{}
		}
		return len(seen)
	}
	n := 0
	for k := 0; k+1 < len(recent); k++ {
		pk := period(k)
		dup := false
		for m := 0; m < k; m++ {
			if bytes.Equal(period(m), pk) {
				dup = true
				break
			}
		}
		if !dup {
			if n++; n > limit {
				return n
			}
		}
	}
	return n
}

// rebuild re-inserts the live entries, with positions lowered by shift,
// into a table sized so that they fill at most half of it: it grows a full
// table and shrinks one left mostly dead by resets. At most half, so that
// a quarter of the table is filled before the next rebuild: in a long
// stream every position dropped off the front leaves a dead slot, and
// sizing for five eighths (a third less memory with a full buffer)
// rebuilt every thousand or so positions, doubling the cost per delta.
func (c *chunkTracker) rebuild(shift int) {
	live := 0
	for _, s := range c.slots {
		if int(s.pos)-1 >= c.base {
			live++
		}
	}
	size := minSlots
	for size < 2*live {
		size *= 2
	}
	old := c.slots
	c.slots = make([]chunkSlot, size)
	mask := size - 1
	for _, s := range old {
		if int(s.pos)-1 < c.base {
			continue
		}
		i := int(s.fp) & mask
		for c.slots[i].pos != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = chunkSlot{pos: s.pos - int32(shift), fp: s.fp}
	}
	c.used = live
}

// detail is the text gemini-cli quotes in the detection: detailContext
// units before the chunk at next and the chunk itself.
func (c *chunkTracker) detail() string {
	start := max(c.base, c.next-detailContext)
	end := min(c.end(), c.next+c.chunkSize)
	b := c.text[2*(start-c.textBase) : 2*(end-c.textBase)]
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u))
}

// appendUTF16LE appends s as UTF-16LE; invalid UTF-8 becomes U+FFFD,
// which is what it would have been as a JavaScript string.
func appendUTF16LE(dst []byte, s string) []byte {
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			dst = append(dst, byte(r1), byte(r1>>8), byte(r2), byte(r2>>8))
			continue
		}
		dst = append(dst, byte(r), byte(r>>8))
	}
	return dst
}
