package tools

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
)

func TestFileFilter(t *testing.T) {
	top := realDir(t)
	initGit(t, top)
	writeFiles(t, top, map[string]string{
		".git/info/exclude": "*.excluded\n",
		".gitignore": "# comment\n*.log\n!keep.log\n/rootonly.txt\nbuild/\ndocs/**/*.tmp\n\\#hash\ntrailing.txt   \n" +
			"{braces}\n",
		"ws/.gitignore":     "local.txt\n/anchored.txt\n",
		"ws/sub/.gitignore": "!local.txt\n",
		"ws/.geminiignore":  "gem.txt\ngem-but-kept.txt\n",
		"ws/.agentryignore": "agentry.txt\n!gem-but-kept.txt\n",
	})
	ws := filepath.Join(top, "ws")

	all := filteringOptions{gitIgnore: true, agentryIgnore: true}
	for _, tc := range []struct {
		rel     string // relative to ws
		isDir   bool
		opts    filteringOptions
		ignored bool
	}{
		{"a.log", false, all, true},
		{"deep/x/a.log", false, all, true},
		{"keep.log", false, all, false},
		{"rootonly.txt", false, all, false}, // anchored to the repository top, not ws
		{"build", true, all, true},
		{"build", false, all, false}, // "build/" matches directories only
		{"build/x/y.go", false, all, true},
		{"docs/a/b/c.tmp", false, all, false}, // docs/ is relative to the top, not ws
		{"#hash", false, all, true},
		{"trailing.txt", false, all, true},
		{"{braces}", false, all, true},
		{"b", false, all, false},
		{"x.excluded", false, all, true},
		{"local.txt", false, all, true},
		{"nested/local.txt", false, all, true},
		{"sub/local.txt", false, all, false}, // re-included by the deeper .gitignore
		{"anchored.txt", false, all, true},
		{"nested/anchored.txt", false, all, false},
		{"gem.txt", false, all, true},
		{"agentry.txt", false, all, true},
		{"gem-but-kept.txt", false, all, false}, // .agentryignore wins over .geminiignore
		{"a.log", false, filteringOptions{agentryIgnore: true}, false},
		{"gem.txt", false, filteringOptions{gitIgnore: true}, false},
		{"a.log", false, filteringOptions{}, false},
		{".git", true, all, true},
	} {
		f := newFileFilter(ws, tc.opts, nil)
		if got := f.ignored(filepath.Join(ws, filepath.FromSlash(tc.rel)), tc.isDir); got != tc.ignored {
			t.Errorf("ignored(%q, dir=%v, %+v) = %v, want %v", tc.rel, tc.isDir, tc.opts, got, tc.ignored)
		}
	}

	// Nothing below an excluded directory can be re-included.
	writeFiles(t, top, map[string]string{".gitignore": "out/\n!out/keep.txt\n"})
	if f := newFileFilter(top, all, nil); !f.ignored(filepath.Join(top, "out", "keep.txt"), false) {
		t.Error("a file below an excluded directory was re-included")
	}
}

func TestFileFilterWithoutGit(t *testing.T) {
	root := realDir(t)
	writeFiles(t, root, map[string]string{".gitignore": "*.log\n", ".geminiignore": "secret/\n"})
	f := newFileFilter(root, filteringOptions{gitIgnore: true, agentryIgnore: true}, nil)
	if f.ignored(filepath.Join(root, "a.log"), false) {
		t.Error(".gitignore applied outside a git repository")
	}
	if !f.ignored(filepath.Join(root, "secret", "x"), false) {
		t.Error(".geminiignore not applied outside a git repository")
	}
}

func TestWalk(t *testing.T) {
	root := realDir(t)
	initGit(t, root)
	writeFiles(t, root, map[string]string{
		".gitignore":        "gen/\n",
		"a.txt":             "",
		"src/b.txt":         "",
		"gen/c.txt":         "",
		"node_modules/d.js": "",
	})
	f := newFileFilter(root, filteringOptions{gitIgnore: true, agentryIgnore: true}, nil)
	collect := func(prune bool) []string {
		var got []string
		err := walk(context.Background(), f, root, prune, func(e walkEntry) error {
			if !e.entry.IsDir() {
				s := e.rel
				if e.ignored {
					s += " (ignored)"
				}
				got = append(got, s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		return got
	}
	if got := collect(true); !equalStrings(got, []string{".gitignore", "a.txt", "src/b.txt"}) {
		t.Errorf("pruned walk = %q", got)
	}
	if got := collect(false); !equalStrings(got, []string{".gitignore", "a.txt", "gen/c.txt (ignored)", "src/b.txt"}) {
		t.Errorf("full walk = %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 300; i++ {
		writeFiles(t, root, map[string]string{filepath.Join("many", string(rune('a'+i%26))+string(rune('a'+i/26))): ""})
	}
	if err := walk(ctx, f, root, true, func(walkEntry) error { return nil }); err == nil {
		t.Error("walk ignored a cancelled context")
	}
}

func equalStrings(a, b []string) bool {
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
