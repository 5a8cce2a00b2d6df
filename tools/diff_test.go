package tools

import (
	"fmt"
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
