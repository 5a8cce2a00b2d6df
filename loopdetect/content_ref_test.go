package loopdetect

import (
	"hash/maphash"
	"regexp"
	"strings"
	"unicode/utf16"
)

// The markdown patterns below are gemini-cli's, written out for RE2 so
// that they match the same strings as the JavaScript originals: JavaScript's
// \s and trim() include Unicode spaces and \v that Go's \s does not, and its
// "." also excludes \r, U+2028 and U+2029. The Detector matches them by
// hand (startsMarkdownElement, isDivider); these are the reference.
const (
	jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`
	jsDot   = `[^\n\r\x{2028}\x{2029}]`
)

// markdown holds the compiled patterns; refPatterns is never modified
// after initialisation.
type markdown struct {
	table, bullet, numbered, heading, blockquote, divider *regexp.Regexp
}

var refPatterns = &markdown{
	table: regexp.MustCompile(`(?:^|\n)` + jsSpace + `*(?:\|` + jsDot + `*\||[|+-]{3,})`),
	// gemini-cli writes the bullet class as [*-+], the range '*'..'+'.
	bullet:     regexp.MustCompile(`(?:^|\n)` + jsSpace + `*[*+]` + jsSpace),
	numbered:   regexp.MustCompile(`(?:^|\n)` + jsSpace + `*[0-9]+\.` + jsSpace),
	heading:    regexp.MustCompile(`(?:^|\n)#+` + jsSpace),
	blockquote: regexp.MustCompile(`(?:^|\n)>` + jsSpace),
	// gemini-cli writes [+-_=*\u2500-\u257F]: "+-_" is U+002B..U+005F.
	divider: regexp.MustCompile(`^[\x{2b}-\x{5f}=*\x{2500}-\x{257f}]+$`),
}

// refContent is the content detector as it was before the allocation and
// regexp work: a verbatim copy of the old AddContent and its helpers, kept
// as the oracle for the differential tests and as the "old" side of the
// benchmarks. It favours being obviously gemini-cli's algorithm over speed:
// every window position gets its own []int, truncation rewrites every
// entry, and all seven markdown patterns run on every delta.
type refContent struct {
	cfg         Config
	content     []uint16
	stats       map[uint64][]int
	lastIndex   int
	inCodeBlock bool
	seed        maphash.Seed
	hashBuf     []byte

	latched bool
	last    Detection
	count   int
}

// newRefContent returns an oracle hashing with seed, so that it and a
// Detector with the same seed propose the same candidates (and would
// collide on the same chunks).
func newRefContent(cfg Config, seed maphash.Seed) *refContent {
	return &refContent{cfg: cfg.withDefaults(), stats: make(map[uint64][]int), seed: seed}
}

func (d *refContent) AddContent(delta string) (Detection, bool) {
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
	d.count++
	d.latched = true
	d.last = Detection{
		Kind:   KindContent,
		Detail: `Repeating content detected: "` + text + `..."`,
		Count:  d.count,
	}
	return d.last, true
}

// ClearDetection mirrors Detector.ClearDetection.
func (d *refContent) ClearDetection() { d.latched = false }

// Reset mirrors Detector.Reset as far as content is concerned.
func (d *refContent) Reset() {
	d.resetContent()
	d.inCodeBlock = false
	d.latched = false
	d.last = Detection{}
	d.count = 0
}

// toolCall mirrors what AddToolCall does to content tracking for a call
// that does not complete a tool-call loop.
func (d *refContent) toolCall() (Detection, bool) {
	if d.latched {
		return d.last, true
	}
	d.resetContent()
	return Detection{}, false
}

func (d *refContent) contentLoop(delta string) bool {
	fences := strings.Count(delta, "```")
	md := refPatterns
	divider := md.divider.MatchString(delta)
	if fences > 0 || divider || md.table.MatchString(delta) ||
		md.bullet.MatchString(delta) || md.numbered.MatchString(delta) ||
		md.heading.MatchString(delta) || md.blockquote.MatchString(delta) {
		d.resetContent()
	}
	was := d.inCodeBlock
	if fences%2 == 1 {
		d.inCodeBlock = !d.inCodeBlock
	}
	if was || d.inCodeBlock || divider {
		return false
	}
	d.content = refAppendUTF16(d.content, delta)
	d.truncate()
	return d.analyze()
}

func (d *refContent) resetContent() {
	d.content = d.content[:0]
	clear(d.stats)
	d.lastIndex = 0
}

func (d *refContent) truncate() {
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

func (d *refContent) analyze() bool {
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

func (d *refContent) hash(chunk []uint16) uint64 {
	b := d.hashBuf[:0]
	for _, u := range chunk {
		b = append(b, byte(u), byte(u>>8))
	}
	d.hashBuf = b
	return maphash.Bytes(d.seed, b)
}

func (d *refContent) loopAtChunk(chunk []uint16, h uint64) bool {
	idx, seen := d.stats[h]
	if !seen {
		d.stats[h] = []int{d.lastIndex}
		return false
	}
	cs := d.cfg.ChunkSize
	first := d.content[idx[0]:min(idx[0]+cs, len(d.content))]
	if !refEqualUnits(first, chunk) {
		return false
	}
	idx = append(idx, d.lastIndex)
	d.stats[h] = idx

	thr := d.cfg.ContentThreshold
	if len(idx) < thr {
		return false
	}
	recent := idx[len(idx)-thr:]
	avg := float64(recent[len(recent)-1]-recent[0]) / float64(thr-1)
	if avg > float64(cs*5) {
		return false
	}
	periods := make(map[string]struct{}, len(recent))
	for i := 0; i+1 < len(recent); i++ {
		periods[refUnitsKey(d.content[recent[i]:recent[i+1]])] = struct{}{}
	}
	return len(periods) <= thr/2
}

func refAppendUTF16(dst []uint16, s string) []uint16 {
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

func refEqualUnits(a, b []uint16) bool {
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

func refUnitsKey(u []uint16) string {
	b := make([]byte, 0, 2*len(u))
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	return string(b)
}
