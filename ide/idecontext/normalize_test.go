package idecontext_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
)

func ws(files ...idewire.File) idewire.Context {
	return idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: files}}
}

func at(l, c int) *idewire.Cursor { return &idewire.Cursor{Line: l, Character: c} }

func TestNormalize(t *testing.T) {
	many := make([]idewire.File, 0, 12)
	for i := range 12 {
		many = append(many, idewire.File{Path: "/w/" + string(rune('a'+i)), Timestamp: int64(i)})
	}
	newestFirst := make([]idewire.File, 0, 10)
	for i := 11; i >= 2; i-- {
		newestFirst = append(newestFirst, many[i])
	}
	tests := []struct {
		name string
		in   idewire.Context
		want idewire.Context
	}{
		{"no workspace state", idewire.Context{}, idewire.Context{}},
		{"no files", ws(), ws()},
		{"sorted newest first, stable on ties",
			ws(idewire.File{Path: "/a", Timestamp: 1}, idewire.File{Path: "/b", Timestamp: 3}, idewire.File{Path: "/c", Timestamp: 1}, idewire.File{Path: "/d", Timestamp: 3}),
			ws(idewire.File{Path: "/b", Timestamp: 3}, idewire.File{Path: "/d", Timestamp: 3}, idewire.File{Path: "/a", Timestamp: 1}, idewire.File{Path: "/c", Timestamp: 1})},
		{"only the newest stays active",
			ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true, Cursor: at(1, 1), SelectedText: "old"}, idewire.File{Path: "/b", Timestamp: 2, IsActive: true, Cursor: at(2, 2), SelectedText: "new"}),
			ws(idewire.File{Path: "/b", Timestamp: 2, IsActive: true, Cursor: at(2, 2), SelectedText: "new"}, idewire.File{Path: "/a", Timestamp: 1})},
		{"newest not active: none is",
			ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true, Cursor: at(1, 1), SelectedText: "sel"}, idewire.File{Path: "/b", Timestamp: 2, Cursor: at(3, 3), SelectedText: "x"}),
			ws(idewire.File{Path: "/b", Timestamp: 2}, idewire.File{Path: "/a", Timestamp: 1})},
		{"virtual files dropped before sorting",
			ws(idewire.File{Path: "Untitled-1", Timestamp: 9, IsActive: true}, idewire.File{Path: "", Timestamp: 8}, idewire.File{Path: "vscode-settings:/user", Timestamp: 7}, idewire.File{Path: "/real.go", Timestamp: 1, IsActive: true, Cursor: at(1, 2)}),
			ws(idewire.File{Path: "/real.go", Timestamp: 1, IsActive: true, Cursor: at(1, 2)})},
		{"at most ten files", ws(many...), ws(newestFirst...)},
		{"selection of 16384 units kept",
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("é", 16384)}),
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("é", 16384)})},
		{"selection of 16385 units cut",
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("é", 16385)}),
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("é", 16384) + idecontext.TruncatedSuffix})},
		{"a character beyond U+FFFF counts two units",
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("😀", 8192) + "z"}),
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("😀", 8192) + idecontext.TruncatedSuffix})},
		{"a cut inside a pair keeps the high surrogate",
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("a", 16383) + "😀"}),
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: strings.Repeat("a", 16383) + "\xed\xa0\xbd" + idecontext.TruncatedSuffix})},
		{"an invalid byte counts one unit",
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: "\xff" + strings.Repeat("a", 16384)}),
			ws(idewire.File{Path: "/a", IsActive: true, SelectedText: "\xff" + strings.Repeat("a", 16383) + idecontext.TruncatedSuffix})},
		{"the selection of an inactive newest file is dropped, not cut",
			ws(idewire.File{Path: "/a", SelectedText: strings.Repeat("a", 20000)}),
			ws(idewire.File{Path: "/a"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := idecontext.Normalize(tt.in)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Normalize (-want +got):\n%s", d)
			}
		})
	}
}

// TestNormalizeLeavesInputAlone: the context as received is not changed
// (the IDE connection keeps it).
func TestNormalizeLeavesInputAlone(t *testing.T) {
	in := ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true, Cursor: at(1, 1), SelectedText: "s"}, idewire.File{Path: "/b", Timestamp: 2})
	before := ws(idewire.File{Path: "/a", Timestamp: 1, IsActive: true, Cursor: at(1, 1), SelectedText: "s"}, idewire.File{Path: "/b", Timestamp: 2})
	out := idecontext.Normalize(in)
	out.WorkspaceState.OpenFiles[0].Path = "/changed"
	if d := cmp.Diff(before, in); d != "" {
		t.Errorf("input changed (-before +after):\n%s", d)
	}
}
