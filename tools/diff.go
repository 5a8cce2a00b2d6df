package tools

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// lineChanges diffs before and after by lines (go-udiff, a port of gopls'
// diff) and returns, for each changed region, its lines in after as a
// half-open 0-based range (a pure deletion is an empty range where the lines
// were), with the counts of added and removed lines.
func lineChanges(before, after string) (ranges [][2]int, added, removed int) {
	edits := udiff.Lines(before, after)
	if len(edits) == 0 {
		return nil, 0, 0
	}
	u, err := udiff.ToUnifiedDiff("", "", before, edits, 0)
	if err != nil {
		// Cannot happen: Lines' edits fit before. Report a whole rewrite
		// rather than nothing.
		n := strings.Count(after, "\n")
		return [][2]int{{0, n}}, n, strings.Count(before, "\n")
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
		// start in after (1-based).
		ranges = append(ranges, [2]int{h.ToLine - 1, h.ToLine - 1 + inserted})
	}
	return ranges, added, removed
}

// newFileDiff describes the change from before to after.
func newFileDiff(abs, before, after string) *FileDiff {
	_, added, removed := lineChanges(before, after)
	return &FileDiff{Path: abs, Before: before, After: after, LinesAdded: added, LinesRemoved: removed}
}

// diffSnippet returns the changed regions of after with contextLines of
// context around each, "..." marking what was left out: gemini-cli's
// getDiffContextSnippet, which write_file and replace append to their
// result so the model need not read the file again.
func diffSnippet(before, after string, contextLines int) string {
	if before == "" {
		return after
	}
	ranges, _, _ := lineChanges(before, after)
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
