package tools

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Bounds on the line diff. Its cost grows with the size of the region that
// changed (go-udiff allocates about 70 bytes per byte diffed), so only the
// lines between the common prefix and suffix of the two texts are diffed,
// and only when they are at most this large; a larger change is summarised
// as the replacement of that region, "too large to show a diff".
const (
	maxDiffBytes = 1 << 20
	maxDiffLines = 20_000
)

// changedRegion is where two texts differ: the bytes before Start and after
// the ends of Before and After are common whole lines.
type changedRegion struct {
	start          int    // byte offset of the region in both texts
	before, after  string // the region in each text
	lineOffset     int    // lines before the region
	tooLarge       bool   // over maxDiffBytes or maxDiffLines
	added, removed int    // lines in the region, for a summary
}

// regionOf trims the common whole lines at the start and the end of before
// and after, in time linear in their length and without allocating.
func regionOf(before, after string) changedRegion {
	n := min(len(before), len(after))
	p := 0
	for p < n && before[p] == after[p] {
		p++
	}
	// Back up to the start of a line common to both.
	if p < len(before) || p < len(after) {
		p = strings.LastIndexByte(before[:p], '\n') + 1
	}
	b, a := before[p:], after[p:]
	k := 0
	for k < len(b) && k < len(a) && b[len(b)-1-k] == a[len(a)-1-k] {
		k++
	}
	// Shrink the suffix until it starts a line in both.
	for k > 0 && !(lineStartsAt(b, len(b)-k) && lineStartsAt(a, len(a)-k)) {
		k--
	}
	r := changedRegion{
		start:      p,
		before:     b[:len(b)-k],
		after:      a[:len(a)-k],
		lineOffset: strings.Count(before[:p], "\n"),
	}
	r.removed, r.added = countLines(r.before), countLines(r.after)
	r.tooLarge = len(r.before) > maxDiffBytes || len(r.after) > maxDiffBytes ||
		r.removed > maxDiffLines || r.added > maxDiffLines
	return r
}

func lineStartsAt(s string, i int) bool { return i == 0 || s[i-1] == '\n' }

// countLines counts lines, a last one without a newline included.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// lineChanges diffs before and after by lines (go-udiff, a port of gopls'
// diff) and returns, for each changed region, its lines in after as a
// half-open 0-based range (a pure deletion is an empty range where the lines
// were), with the counts of added and removed lines. When the change is too
// large to diff, it is one range with every line of the region counted as
// removed and added, and tooLarge is set.
func lineChanges(before, after string) (ranges [][2]int, added, removed int, tooLarge bool) {
	r := regionOf(before, after)
	if r.before == "" && r.after == "" {
		return nil, 0, 0, false
	}
	if r.tooLarge {
		return [][2]int{{r.lineOffset, r.lineOffset + r.added}}, r.added, r.removed, true
	}
	edits := udiff.Lines(r.before, r.after)
	if len(edits) == 0 {
		return nil, 0, 0, false
	}
	u, err := udiff.ToUnifiedDiff("", "", r.before, edits, 0)
	if err != nil {
		// Cannot happen: Lines' edits fit before. Report a whole rewrite
		// of the region rather than nothing.
		return [][2]int{{r.lineOffset, r.lineOffset + r.added}}, r.added, r.removed, false
	}
	for _, h := range u.Hunks {
		inserted := 0
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				inserted++
			case udiff.Delete:
				removed++
			}
		}
		added += inserted
		// With no context lines, ToLine is where the hunk's inserted lines
		// start in the region (1-based).
		start := r.lineOffset + h.ToLine - 1
		ranges = append(ranges, [2]int{start, start + inserted})
	}
	return ranges, added, removed, false
}

// newFileDiff describes the change from before to after.
func newFileDiff(abs, before, after string) *FileDiff {
	_, added, removed, _ := lineChanges(before, after)
	return &FileDiff{Path: abs, Before: before, After: after, LinesAdded: added, LinesRemoved: removed}
}

// UnifiedDiff returns the unified diff (three lines of context) that turns
// before into after, both labelled name, as an approval prompt shows it.
// Only the region between the texts' common prefix and suffix is diffed;
// when that is too large for a line diff (more than 1 MiB or 20,000 lines
// on either side), the result is a one-line summary saying that the file is
// too large to show a diff, so that building it stays cheap whatever the
// texts.
func UnifiedDiff(name, before, after string) string {
	r := regionOf(before, after)
	if r.before == "" && r.after == "" {
		return ""
	}
	if r.tooLarge {
		return tooLargeDiffNote(r)
	}
	edits := udiff.Lines(r.before, r.after)
	for i := range edits {
		edits[i].Start += r.start
		edits[i].End += r.start
	}
	s, err := udiff.ToUnified(name, name, before, edits, 3)
	if err != nil {
		return tooLargeDiffNote(r)
	}
	return s
}

func tooLargeDiffNote(r changedRegion) string {
	return fmt.Sprintf("[file too large to show a diff: %d lines from line %d replaced by %d lines]\n",
		r.removed, r.lineOffset+1, r.added)
}

// diffSnippet returns the changed regions of after with contextLines of
// context around each, "..." marking what was left out: gemini-cli's
// getDiffContextSnippet, which write_file and replace append to their
// result so the model need not read the file again. A change too large to
// diff is summarised instead.
func diffSnippet(before, after string, contextLines int) string {
	if before == "" {
		return after
	}
	ranges, added, removed, tooLarge := lineChanges(before, after)
	if tooLarge {
		return fmt.Sprintf("[file too large to show a diff: %d lines from line %d replaced by %d lines; use read_file to see them]",
			removed, ranges[0][0]+1, added)
	}
	if len(ranges) == 0 {
		return after
	}
	lines := splitLines(after)
	var merged [][2]int
	for _, r := range ranges {
		r = [2]int{max(0, r[0]-contextLines), min(len(lines), r[1]+contextLines)}
		if n := len(merged); n > 0 && r[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	var parts []string
	last := 0
	for _, r := range merged {
		if r[0] > last {
			parts = append(parts, "...")
		}
		parts = append(parts, strings.Join(lines[r[0]:r[1]], "\n"))
		last = r[1]
	}
	if last < len(lines) {
		parts = append(parts, "...")
	}
	return strings.Join(parts, "\n")
}
