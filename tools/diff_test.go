package tools

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestNewFileDiffCounts(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		added, removed      int
	}{
		{"new file", "", "a\nb\n", 2, 0},
		{"deleted content", "a\nb\n", "", 0, 2},
		{"same", "a\nb\n", "a\nb\n", 0, 0},
		{"one changed", "a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"insert", "a\nc\n", "a\nb\nc\n", 1, 0},
		{"remove", "a\nb\nc\n", "a\nc\n", 0, 1},
		{"missing final newline", "a\nb", "a\nb\n", 1, 1},
		{"reordered", "a\nb\nc\nd\n", "d\na\nb\nc\n", 1, 1},
		{"interleaved", "a\nx\nb\nx\nc\n", "a\nb\nc\n", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newFileDiff("/f", tc.before, tc.after)
			if d.LinesAdded != tc.added || d.LinesRemoved != tc.removed {
				t.Errorf("+%d -%d, want +%d -%d", d.LinesAdded, d.LinesRemoved, tc.added, tc.removed)
			}
		})
	}
}

func TestLineDiffIsMinimal(t *testing.T) {
	// Each pair differs in k scattered lines: a minimal diff removes and
	// adds exactly k lines.
	var a, b []string
	for i := 0; i < 500; i++ {
		a = append(a, fmt.Sprintf("line %d\n", i))
		if i%50 == 7 {
			b = append(b, fmt.Sprintf("changed %d\n", i))
		} else {
			b = append(b, a[i])
		}
	}
	d := newFileDiff("/f", strings.Join(a, ""), strings.Join(b, ""))
	if d.LinesAdded != 10 || d.LinesRemoved != 10 {
		t.Errorf("+%d -%d, want +10 -10", d.LinesAdded, d.LinesRemoved)
	}
}

func TestLineDiffOfDisjointTexts(t *testing.T) {
	// Wholly different texts: every line is removed and added.
	var a, b []string
	for i := 0; i < 3000; i++ {
		a = append(a, fmt.Sprintf("a%d\n", i))
		b = append(b, fmt.Sprintf("b%d\n", i))
	}
	d := newFileDiff("/f", strings.Join(a, ""), strings.Join(b, ""))
	if d.LinesAdded != 3000 || d.LinesRemoved != 3000 {
		t.Errorf("+%d -%d", d.LinesAdded, d.LinesRemoved)
	}
}

func TestDiffSnippet(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprint(i))
	}
	before := strings.Join(lines, "\n") + "\n"
	lines[1] = "two"
	lines[27] = "twenty-eight"
	after := strings.Join(lines, "\n") + "\n"
	want := "1\ntwo\n3\n4\n5\n6\n7\n...\n23\n24\n25\n26\n27\ntwenty-eight\n29\n30\n"
	if got := diffSnippet(before, after, 5); got != want {
		t.Errorf("diffSnippet =\n%q\nwant\n%q", got, want)
	}
	if got := diffSnippet("", "new", 5); got != "new" {
		t.Errorf("new file snippet = %q", got)
	}
}

// TestUnifiedDiffIsValid checks on random texts that diffing only the
// region between the common prefix and suffix gives a unified diff that
// turns before into after, with the line counts lineChanges reports.
func TestUnifiedDiffIsValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "", "x y"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte('\n')
		}
		s := b.String()
		if rng.IntN(4) == 0 {
			s = strings.TrimSuffix(s, "\n") // no final newline
		}
		return s
	}
	for i := range 2000 {
		before := text(rng.IntN(30))
		after := before
		switch rng.IntN(3) {
		case 0:
			after = text(rng.IntN(30))
		case 1: // a small edit somewhere
			lines := strings.SplitAfter(before, "\n")
			j := rng.IntN(len(lines))
			lines[j] = words[rng.IntN(len(words))] + "\n"
			after = strings.Join(lines, "")
		}
		got := UnifiedDiff("f", before, after)
		applied, err := applyUnified(got, before)
		if err != nil || applied != after {
			t.Fatalf("case %d: UnifiedDiff(%q, %q) =\n%s\napplies as %q, %v", i, before, after, got, applied, err)
		}
		added, removed := 0, 0
		if got != "" {
			// Past the two header lines, a line's first byte is its kind.
			for _, l := range strings.Split(got, "\n")[2:] {
				switch {
				case strings.HasPrefix(l, "+"):
					added++
				case strings.HasPrefix(l, "-"):
					removed++
				}
			}
		}
		if _, a, r, _ := lineChanges(before, after); a != added || r != removed {
			t.Fatalf("case %d: lineChanges(%q, %q) = +%d -%d, the unified diff has +%d -%d", i, before, after, a, r, added, removed)
		}
	}
}

// TestUnifiedDiffTooLarge diffs a small change in a large file in full,
// and summarises a large change.
func TestUnifiedDiffTooLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&a, "line %d\n", i)
		if i == 50_000 {
			b.WriteString("changed\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	got := UnifiedDiff("f", a.String(), b.String())
	if !strings.Contains(got, "@@ -49998,7 +49998,7 @@") || !strings.Contains(got, "-line 50000\n+changed\n") {
		t.Errorf("diff of a one-line change in a large file:\n%s", got)
	}
	got = UnifiedDiff("f", a.String(), strings.ReplaceAll(b.String(), "line", "LINE"))
	if got != "[file too large to show a diff: 100000 lines from line 1 replaced by 100000 lines]\n" {
		t.Errorf("diff of a large change = %q", got)
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@`)

// applyUnified applies a unified diff of one file to before.
func applyUnified(diff, before string) (string, error) {
	if diff == "" {
		return before, nil
	}
	old := strings.SplitAfter(before, "\n")
	if old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	var out []string
	left := 0
	prev := byte(0)
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
			continue
		case strings.HasPrefix(l, "@@ "):
			h := hunkHeader.FindStringSubmatch(l)
			if h == nil {
				return "", fmt.Errorf("bad hunk header %q", l)
			}
			from, _ := strconv.Atoi(h[1])
			n := 1
			if h[2] != "" {
				n, _ = strconv.Atoi(h[2])
			}
			start := from - 1
			if n == 0 {
				start = from
			}
			for ; left < start; left++ {
				out = append(out, old[left])
			}
		case l == "":
			return "", fmt.Errorf("empty line in diff")
		case l[0] == ' ':
			if left >= len(old) || strings.TrimSuffix(old[left], "\n") != l[1:] {
				return "", fmt.Errorf("context %q does not match line %d", l, left+1)
			}
			out = append(out, old[left])
			left++
		case l[0] == '-':
			if left >= len(old) || strings.TrimSuffix(old[left], "\n") != l[1:] {
				return "", fmt.Errorf("removed %q does not match line %d", l, left+1)
			}
			left++
		case l[0] == '+':
			out = append(out, l[1:]+"\n")
		case l[0] == '\\':
			if prev == '+' {
				out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
			}
		default:
			return "", fmt.Errorf("unexpected line %q", l)
		}
		if l != "" {
			prev = l[0]
		}
	}
	out = append(out, old[left:]...)
	return strings.Join(out, ""), nil
}
