package loopdetect

import (
	"hash/maphash"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
)

// The markdown patterns below are gemini-cli's, written out for RE2 so
// that they match the same strings as the JavaScript originals: JavaScript's
// \s and trim() include Unicode spaces and \v that Go's \s does not, and its
// "." also excludes \r, U+2028 and U+2029.
const (
	jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`
	jsDot   = `[^\n\r\x{2028}\x{2029}]`
)

// markdown are the patterns that reset content tracking. They are
// compiled on first use, not at start-up: most runs never stream enough
// text to need them, and every agentry command would pay for them.
type markdown struct {
	table, bullet, numbered, heading, blockquote, divider *regexp.Regexp
}

var markdownPatterns = sync.OnceValue(func() *markdown {
	return &markdown{
		table: regexp.MustCompile(`(?:^|\n)` + jsSpace + `*(?:\|` + jsDot + `*\||[|+-]{3,})`),
		// gemini-cli writes the bullet class as [*-+], which is the range
		// from '*' to '+': a "- " item is NOT a list item to it (it can
		// still reset tracking as a table rule "---" or a divider). Kept as
		// is for fidelity.
		bullet:     regexp.MustCompile(`(?:^|\n)` + jsSpace + `*[*+]` + jsSpace),
		numbered:   regexp.MustCompile(`(?:^|\n)` + jsSpace + `*[0-9]+\.` + jsSpace),
		heading:    regexp.MustCompile(`(?:^|\n)#+` + jsSpace),
		blockquote: regexp.MustCompile(`(?:^|\n)>` + jsSpace),
		// gemini-cli writes [+-_=*\u2500-\u257F]: "+-_" is the range
		// U+002B..U+005F, which holds digits, upper-case letters and most
		// ASCII punctuation, so a delta such as "OK" or "42." counts as a
		// divider. Kept as is for fidelity.
		divider: regexp.MustCompile(`^[\x{2b}-\x{5f}=*\x{2500}-\x{257f}]+$`),
	}
})

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
	cs := d.cfg.ChunkSize
	start := max(0, d.lastIndex-detailContext)
	end := min(len(d.content), d.lastIndex+cs)
	text := jsTrim(string(utf16.Decode(d.content[start:end])))
	return d.latch(Detection{
		Kind:   KindContent,
		Detail: `Repeating content detected: "` + text + `..."`,
	}), true
}

// contentLoop is gemini-cli's checkContentLoop.
func (d *Detector) contentLoop(delta string) bool {
	fences := strings.Count(delta, "```")
	md := markdownPatterns()
	divider := md.divider.MatchString(delta)
	if fences > 0 || divider || md.table.MatchString(delta) ||
		md.bullet.MatchString(delta) || md.numbered.MatchString(delta) ||
		md.heading.MatchString(delta) || md.blockquote.MatchString(delta) {
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
	d.content = appendUTF16(d.content, delta)
	d.truncate()
	return d.analyze()
}

// resetContent forgets the tracked text (not the code-block state, which
// describes the stream rather than the tracking).
func (d *Detector) resetContent() {
	d.content = d.content[:0]
	clear(d.stats)
	d.lastIndex = 0
}

// truncate keeps the last MaxContentBuffer code units, shifting every
// stored position so that it still points at the same text.
func (d *Detector) truncate() {
	limit := d.cfg.MaxContentBuffer
	if len(d.content) <= limit {
		return
	}
	cut := len(d.content) - limit
	n := copy(d.content, d.content[cut:])
	d.content = d.content[:n]
	d.lastIndex = max(0, d.lastIndex-cut)
	for h, idx := range d.stats {
		kept := idx[:0]
		for _, i := range idx {
			if i-cut >= 0 {
				kept = append(kept, i-cut)
			}
		}
		if len(kept) == 0 {
			delete(d.stats, h)
		} else {
			d.stats[h] = kept
		}
	}
}

// analyze slides the chunk window over the text not yet examined.
func (d *Detector) analyze() bool {
	cs := d.cfg.ChunkSize
	for d.lastIndex+cs <= len(d.content) {
		chunk := d.content[d.lastIndex : d.lastIndex+cs]
		if d.loopAtChunk(chunk, d.hash(chunk)) {
			return true
		}
		d.lastIndex++
	}
	return false
}

// hash is a seeded 64-bit hash of chunk's UTF-16LE bytes, where
// gemini-cli takes the SHA-256 of its UTF-8: a hash only proposes a
// candidate, which loopAtChunk confirms by comparing the text, so the
// cheaper hash finds the same loops. gemini-cli hashes UTF-8,
// in which lone surrogates (a window can split a pair) all become U+FFFD;
// hashing the code units keeps those chunks apart, which only matters for
// the hash-collision path and never changes a detection.
func (d *Detector) hash(chunk []uint16) uint64 {
	b := d.hashBuf[:0]
	for _, u := range chunk {
		b = append(b, byte(u), byte(u>>8))
	}
	d.hashBuf = b
	return maphash.Bytes(d.seed, b)
}

// loopAtChunk records the chunk at d.lastIndex and decides whether its
// recent occurrences form a loop; it is gemini-cli's isLoopDetectedForChunk.
func (d *Detector) loopAtChunk(chunk []uint16, h uint64) bool {
	idx, seen := d.stats[h]
	if !seen {
		d.stats[h] = []int{d.lastIndex}
		return false
	}
	// Confirm the text, not just the hash, matches the first occurrence.
	cs := d.cfg.ChunkSize
	first := d.content[idx[0]:min(idx[0]+cs, len(d.content))]
	if !equalUnits(first, chunk) {
		return false
	}
	idx = append(idx, d.lastIndex)
	d.stats[h] = idx

	thr := d.cfg.ContentThreshold
	if len(idx) < thr {
		return false
	}
	// The occurrences must be clustered: on average no more than five chunk
	// lengths apart.
	recent := idx[len(idx)-thr:]
	avg := float64(recent[len(recent)-1]-recent[0]) / float64(thr-1)
	if avg > float64(cs*5) {
		return false
	}
	// And the text between occurrences (the period) must itself repeat; a
	// list of distinct items sharing a long prefix has as many periods as
	// items, a chant has one or two.
	periods := make(map[string]struct{}, len(recent))
	for i := 0; i+1 < len(recent); i++ {
		periods[unitsKey(d.content[recent[i]:recent[i+1]])] = struct{}{}
	}
	return len(periods) <= thr/2
}

// appendUTF16 appends s's UTF-16 code units; invalid UTF-8 becomes U+FFFD,
// which is what it would have been as a JavaScript string.
func appendUTF16(dst []uint16, s string) []uint16 {
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			dst = append(dst, uint16(r1), uint16(r2))
			continue
		}
		dst = append(dst, uint16(r))
	}
	return dst
}

func equalUnits(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// unitsKey turns code units into a string usable as a map key.
func unitsKey(u []uint16) string {
	b := make([]byte, 0, 2*len(u))
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	return string(b)
}

// jsTrim is JavaScript's String.prototype.trim: it strips the
// ECMAScript WhiteSpace and LineTerminator characters, which differ from
// unicode.IsSpace (no U+0085, but U+FEFF).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
			return true
		}
		return r >= 0x2000 && r <= 0x200a
	})
}
