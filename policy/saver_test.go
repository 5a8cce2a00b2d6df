package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func always(t *testing.T, c Call) []Rule {
	t.Helper()
	c.Mode = ModeDefault
	r, _, err := AlwaysRules(c, ProceedAlwaysAndSave)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSaverRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies")
	s := NewSaver(filepath.Join(dir, "auto-saved.toml"))
	calls := []Call{
		shell("git status && npm test > log.txt"),
		{Tool: "read_file", Args: map[string]any{"file_path": "docs/a.md"}},
		{Tool: "q", Server: "db", ServerTool: "q", Args: map[string]any{}},
		{Tool: "web_fetch", Args: map[string]any{"prompt": "x"}},
	}
	for _, c := range calls {
		if err := s.Save(always(t, c)...); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "commandPrefix = ['git', 'npm']") || !strings.Contains(string(data), "mcpName = 'db'") ||
		!strings.Contains(string(data), "toolName = 'q'") || strings.Count(string(data), "[[rule]]") != 4 {
		t.Errorf("file:\n%s", data)
	}
	rules, errs := LoadPaths([]string{dir}, TierUser)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	e, err := New(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		c.Mode, c.Interactive, c.Trusted = ModeAutoEdit, true, true
		r := e.Check(c)
		if r.Decision != Allow || r.Rule == nil || r.Rule.Priority != 4.95 || r.Rule.Source != "User: auto-saved.toml" {
			t.Errorf("%s %v after reload: %+v", c.Tool, c.Args, r)
		}
	}
	// Permissions: the file 0600, its directory 0700; no temporary files left.
	if st, _ := os.Stat(s.Path()); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", st.Mode())
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", st.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %v", ents)
	}
}

func TestSaverUpdateOrAppend(t *testing.T) {
	s := NewSaver(filepath.Join(t.TempDir(), "auto-saved.toml"))
	// Same tool, mcpName, prefix and pattern: updated (modes, allowRedirection).
	r1 := always(t, shell("git status"))
	if err := s.Save(r1...); err != nil {
		t.Fatal(err)
	}
	c := shell("git log > x")
	c.Mode = ModeYolo
	r2, _, _ := AlwaysRules(c, ProceedAlwaysAndSave)
	if err := s.Save(r2...); err != nil {
		t.Fatal(err)
	}
	// A different file path: appended.
	if err := s.Save(always(t, Call{Tool: "read_file", Args: map[string]any{"file_path": "a"}})...); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(always(t, Call{Tool: "read_file", Args: map[string]any{"file_path": "b"}})...); err != nil {
		t.Fatal(err)
	}
	rules, errs := LoadPaths([]string{s.Path()}, TierUser)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(rules) != 3 {
		t.Fatalf("%d rules: %+v", len(rules), rules)
	}
	if g := rules[0]; g.CommandPrefix != "git" || !g.AllowRedirection || !slices.Equal(g.Modes, []Mode{ModeYolo}) {
		t.Errorf("updated rule %+v", g)
	}
}

func TestSaverCorrupted(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":        "[[rule]\ntoolName = \n",
		"rule not list": "rule = 5\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "auto-saved.toml")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := NewSaver(path).Save(always(t, Call{Tool: "glob", Args: map[string]any{"pattern": "*"}})...)
			if !errors.Is(err, ErrCorrupted) {
				t.Fatalf("Save: %v, want ErrCorrupted", err)
			}
			want := "Syntax error found in policy file. Backing up corrupted file to " + path + ".bak and starting fresh."
			if !strings.HasSuffix(err.Error(), want) {
				t.Errorf("warning %q", err)
			}
			bak, _ := os.ReadFile(path + ".bak")
			if string(bak) != content {
				t.Errorf("backup %q", bak)
			}
			rules, errs := LoadPaths([]string{path}, TierUser)
			if len(errs) > 0 || len(rules) != 1 || rules[0].ToolName != "glob" {
				t.Errorf("after: %v %v", rules, errs)
			}
		})
	}
}

// TestSaverKeepsFile: a failed save leaves the file as it was, and a file
// with other content keeps it.
func TestSaverKeepsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "auto-saved.toml")
	orig := "note = 'kept'\n\n[[rule]]\ntoolName = 'x'\ndecision = 'deny'\npriority = 10\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := NewSaver(path).Save(always(t, Call{Tool: "y"})...); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "note = 'kept'") || !strings.Contains(string(data), "toolName = 'x'") {
		t.Errorf("file lost content:\n%s", data)
	}
	if os.Geteuid() == 0 {
		return // root writes anyway
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	err := NewSaver(path).Save(always(t, Call{Tool: "z"})...)
	if err == nil || !strings.HasPrefix(err.Error(), "Failed to persist policy for z: ") {
		t.Errorf("Save in a read-only dir: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(data) {
		t.Error("a failed save changed the file")
	}
}

// TestSaverConcurrent: saves from many goroutines all land (run with -race).
func TestSaverConcurrent(t *testing.T) {
	s := NewSaver(filepath.Join(t.TempDir(), "p", "auto-saved.toml"))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Save(always(t, Call{Tool: fmt.Sprintf("tool_%d", i)})...); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	rules, errs := LoadPaths([]string{s.Path()}, TierUser)
	if len(errs) > 0 || len(rules) != 16 {
		t.Errorf("%d rules, %v", len(rules), errs)
	}
}
