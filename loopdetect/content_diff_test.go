package loopdetect

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// markdownAlphabet is what random markdown probes are built from: every
// character the patterns treat specially, JavaScript spaces Go's \s
// lacks, near-misses (U+0085, U+200B), the edges of the divider class,
// line terminators "." must not cross, astral characters, and bytes that
// make invalid UTF-8, alone or as pieces of U+2028.
var markdownAlphabet = []string{
	"\n", "\r", " ", "\t", "\v", "\f", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029",
	"\u202f", "\u205f", "\u3000", "\ufeff", "\u0085", "\u200b",
	"|", "+", "-", "*", "#", ">", ".", "0", "7", "9", "=", "_", ")", "`", "^",
	"a", "Z", "x", "\u2500", "\u257f", "\u2580", "\u2010", "😀",
	"\xe2", "\x80", "\xa8", "\xff", "\xc2",
}

// randomMarkdown is a short string of markdownAlphabet pieces.
func randomMarkdown(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(10) {
		b.WriteString(markdownAlphabet[r.IntN(len(markdownAlphabet))])
	}
	return b.String()
}

// checkMarkdown compares the hand-written matchers with gemini-cli's
// patterns as regexps.
func checkMarkdown(t *testing.T, s string) {
	t.Helper()
	md := refPatterns
	if got, want := isDivider(s), md.divider.MatchString(s); got != want {
		t.Errorf("isDivider(%q) = %v, regexp says %v", s, got, want)
	}
	want := md.table.MatchString(s) || md.bullet.MatchString(s) || md.numbered.MatchString(s) ||
		md.heading.MatchString(s) || md.blockquote.MatchString(s)
	if got := startsMarkdownElement(s); got != want {
		t.Errorf("startsMarkdownElement(%q) = %v, regexps say %v", s, got, want)
	}
}

var markdownExamples = []string{
	"", "word17 ", "| a | b |", "\n| a | b |", "|a", "||", "|\r|", "|\u2028|", "|\xff|", "|||", "+-+", "--", "---",
	"* x", "*x", "+ x", "- x", "\u00a0* x", "\n\n  * x", " \n\t+\u3000", "1. x", "12.x", "x\n42. y", "1.\u00a0",
	"# h", "#h", "###\th", " # h", "\n#\n", "> q", ">q", " > q", "\n>\v", "\n\n>\n",
	"OK", "42.", "==", "\u2500\u2500", "*", "a*", "\n", "\n\n\n", "\xff", "\xe2\x80\xa8", "\x80* x",
}

func TestMarkdownMatchesRegexps(t *testing.T) {
	for _, s := range markdownExamples {
		checkMarkdown(t, s)
	}
	n := 100000 / raceScale
	if testing.Short() {
		n /= 10
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range n {
		checkMarkdown(t, randomMarkdown(r))
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range markdownExamples {
		f.Add(s)
	}
	f.Fuzz(checkMarkdown)
}

// streamGen makes text streams that exercise content detection: prose,
// chants (exact and nearly exact), markdown that resets tracking, code
// blocks, astral characters whose surrogate pairs windows split, invalid
// UTF-8, and texts long enough to be truncated.
type streamGen struct {
	r *rand.Rand
}

var genWords = strings.Fields("the a model tool file read write check build test error value function returns when then because loop detect stream chunk buffer prompt turn user history I will now done Thinking é 中文 😀 naïve 𝄞")

func (g streamGen) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(genWords[g.r.IntN(len(genWords))])
		switch g.r.IntN(12) {
		case 0:
			b.WriteString(". ")
		case 1:
			fmt.Fprintf(&b, "%d ", g.r.IntN(1000))
		case 2:
			b.WriteString("\n")
		default:
			b.WriteString(" ")
		}
	}
	return b.String()
}

var genMarkdown = []string{
	"* item\n", "\n+ plus\n", "1. first\n", "\n42. answer\n", "# Heading\n", "\n## Sub\n", "> quote\n",
	"| a | b |\n", "|---|---|\n", "\n+---+\n", "---", "OK", "42.", "\u2500\u2500\u2500", "- dash item\n",
	"```", "```go\n", "\n```\n", "\u00a0* nbsp\n", "\n>\vquote\n", "\xff", "\xe2\x80",
}

// segment is one piece of a stream.
func (g streamGen) segment(long bool) string {
	switch k := g.r.IntN(10); {
	case k < 2 || long && k < 4:
		n := 20 + g.r.IntN(300)
		if long {
			n = 3000 + g.r.IntN(9000)
		}
		return g.prose(n)
	case k < 6:
		// A chant: a phrase repeated, sometimes with a slip.
		var phrase string
		switch g.r.IntN(4) {
		case 0:
			phrase = strings.Repeat("😀a", 1+g.r.IntN(30))
		case 1:
			phrase = strings.Repeat("ab", 1+g.r.IntN(4))
		default:
			phrase = g.prose(3 + g.r.IntN(250))
		}
		var b strings.Builder
		for range 2 + g.r.IntN(30) {
			if g.r.IntN(15) == 0 {
				b.WriteString("slip ")
			}
			b.WriteString(phrase)
		}
		return b.String()
	case k < 7:
		// A list whose items share a long prefix.
		var b strings.Builder
		prefix := g.prose(40 + g.r.IntN(80))
		for i := range 5 + g.r.IntN(15) {
			fmt.Fprintf(&b, "%s%d\n", prefix, i)
		}
		return b.String()
	default:
		return genMarkdown[g.r.IntN(len(genMarkdown))]
	}
}

// split cuts s into deltas: random sizes (which may split a UTF-8
// sequence, making invalid UTF-8 on both sides), words, lines, or whole.
func (g streamGen) split(s string) []string {
	var out []string
	switch g.r.IntN(5) {
	case 0:
		return []string{s}
	case 1:
		for s != "" {
			i := strings.IndexAny(s, " \n")
			if i < 0 {
				i = len(s) - 1
			}
			out = append(out, s[:i+1])
			s = s[i+1:]
		}
		return out
	case 2:
		return strings.SplitAfter(s, "\n")
	default:
		for s != "" {
			n := min(len(s), 1+g.r.IntN(40))
			out = append(out, s[:n])
			s = s[n:]
		}
		return out
	}
}

// pair is a Detector and the oracle, fed the same calls.
type pair struct {
	t    *testing.T
	d    *Detector
	ref  *refContent
	step int
	tool int

	detections, dupPositions, renumbers int
}

func newPair(t *testing.T, cfg Config, posLimit int, fpMask uint32) *pair {
	d := New(cfg, nil)
	if posLimit > 0 {
		d.chunks.posLimit = posLimit
	}
	d.chunks.fpMask = fpMask
	return &pair{t: t, d: d, ref: newRefContent(d.cfg, d.chunks.seed)}
}

func (p *pair) content(delta string) bool {
	p.t.Helper()
	p.step++
	base := p.d.chunks.base
	got, gotOK := p.d.AddContent(delta)
	want, wantOK := p.ref.AddContent(delta)
	if got != want || gotOK != wantOK {
		p.t.Fatalf("step %d: AddContent(%q) = %+v, %v; the old algorithm gives %+v, %v", p.step, delta, got, gotOK, want, wantOK)
	}
	if p.d.chunks.base < base {
		p.renumbers++
	}
	if len(p.d.chunks.dups) > 0 {
		p.dupPositions++
	}
	return gotOK
}

func (p *pair) toolCall() {
	p.t.Helper()
	p.step++
	p.tool++
	// Distinct arguments: never a tool-call loop, only the content reset.
	got, gotOK := p.d.AddToolCall("t", map[string]any{"n": p.tool})
	want, wantOK := p.ref.toolCall()
	if got != want || gotOK != wantOK {
		p.t.Fatalf("step %d: AddToolCall = %+v, %v; want %+v, %v", p.step, got, gotOK, want, wantOK)
	}
}

// run feeds one random stream, reacting to detections as a caller might:
// usually clearing the latch and carrying on (which examines the chunk that
// fired again), sometimes resetting, sometimes leaving it latched.
func (p *pair) run(g streamGen, segments int, long bool) {
	for range segments {
		for _, delta := range g.split(g.segment(long)) {
			if p.content(delta) {
				p.detections++
				switch k := g.r.IntN(10); {
				case k < 7:
					p.d.ClearDetection()
					p.ref.ClearDetection()
				case k < 8:
					p.d.Reset()
					p.ref.Reset()
				}
			}
		}
		switch g.r.IntN(20) {
		case 0:
			p.toolCall()
		case 1:
			p.d.Reset()
			p.ref.Reset()
		}
	}
}

func TestContentMatchesOldAlgorithm(t *testing.T) {
	configs := []struct {
		name     string
		cfg      Config
		posLimit int
		fpMask   uint32
		long     bool
	}{
		{"defaults", Config{}, 0, ^uint32(0), false},
		{"defaults, long texts", Config{}, 0, ^uint32(0), true},
		{"defaults, renumbering", Config{}, 6000, ^uint32(0), true},
		{"small", Config{ChunkSize: 10, ContentThreshold: 4, MaxContentBuffer: 120}, 0, ^uint32(0), false},
		{"small, renumbering and clashing fingerprints", Config{ChunkSize: 10, ContentThreshold: 4, MaxContentBuffer: 120}, 150, 0xf, false},
		{"tiny buffer", Config{ChunkSize: 3, ContentThreshold: 2, MaxContentBuffer: 7}, 20, 0x3, false},
		{"threshold 1", Config{ChunkSize: 5, ContentThreshold: 1, MaxContentBuffer: 60}, 0, ^uint32(0), false},
		{"threshold 70", Config{ChunkSize: 8, ContentThreshold: 70}, 0, ^uint32(0), false},
		{"clashing fingerprints", Config{}, 0, 0xff, false},
	}
	for i, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			// Long texts are slow for the old algorithm, which rewrites every
			// stored position on every delta once the buffer is full.
			streams := 60
			if c.long {
				streams = 10
			}
			streams = max(2, streams/raceScale)
			if testing.Short() {
				streams = max(2, streams/4)
			}
			var detections, dups, renumbers int
			for s := range streams {
				g := streamGen{rand.New(rand.NewPCG(uint64(i), uint64(s)))}
				p := newPair(t, c.cfg, c.posLimit, c.fpMask)
				segments := 40
				if c.long {
					segments = 10
				}
				p.run(g, segments, c.long)
				detections += p.detections
				dups += p.dupPositions
				renumbers += p.renumbers
			}
			t.Logf("%d detections, %d deltas with a position recorded twice, %d renumberings", detections, dups, renumbers)
			// The comparison is only as good as the detections it sees.
			if detections < streams {
				t.Errorf("only %d detections in %d streams", detections, streams)
			}
			if c.posLimit > 0 && renumbers == 0 {
				t.Error("positions were never renumbered")
			}
		})
	}
}

// TestContentRepeatAfterClear pins down the quirk dups exists for: after a
// detection gemini-cli has not advanced past the chunk that fired, so
// clearing the latch and streaming on records that chunk a second time.
func TestContentRepeatAfterClear(t *testing.T) {
	p := newPair(t, Config{}, 0, ^uint32(0))
	rc := strings.Repeat("Thinking... Done. ", 3)
	n := 0
	for range 40 {
		if p.content(rc) {
			n++
			p.d.ClearDetection()
			p.ref.ClearDetection()
		}
	}
	if n < 2 || p.dupPositions == 0 {
		t.Errorf("%d detections, %d deltas with a position recorded twice; want the quirk exercised", n, p.dupPositions)
	}
}
