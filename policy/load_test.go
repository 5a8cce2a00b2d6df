package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rule := func(tool string) string {
		return "[[rule]]\ntoolName = \"" + tool + "\"\ndecision = \"allow\"\npriority = 1\n"
	}
	write("pol/a.toml", rule("glob"))
	write("pol/b.toml", rule("read_file")+"[[rule]]\ntoolName = \"x\"\nargsPattern = \"a(?=b)\"\ndecision = \"allow\"\npriority = 1\n")
	write("pol/bad.toml", "[[rule]]\ntoolName = ")
	write("pol/notes.txt", rule("ignored_txt"))
	write("pol/sub/c.toml", rule("ignored_subdir"))
	if err := os.Symlink(write("elsewhere.toml", rule("ignored_symlink")), filepath.Join(dir, "pol", "link.toml")); err != nil {
		t.Fatal(err)
	}
	single := write("one.toml", rule("list_directory"))
	rules, errs := LoadPaths([]string{filepath.Join(dir, "pol"), single, filepath.Join(dir, "missing"), filepath.Join(dir, "pol", "notes.txt")}, TierUser)
	var names []string
	for _, r := range rules {
		names = append(names, r.ToolName+"@"+r.Source)
	}
	if got, want := strings.Join(names, " "), "glob@User: a.toml read_file@User: b.toml list_directory@User: one.toml"; got != want {
		t.Errorf("rules %s, want %s", got, want)
	}
	if len(errs) != 2 {
		t.Fatalf("errors: %v", errs)
	}
	// The lookahead drops its rule, with a clear error.
	if !errors.Is(errs[0], ErrUnsupportedRegex) || !strings.HasPrefix(errs[0].Error(), "[USER] Policy file error in b.toml:\n  Invalid regex pattern\nPattern: a(?=b)\nError: policy: regular expression not supported") {
		t.Errorf("lookahead: %v", errs[0])
	}
	var fe *FileError
	if !errors.As(errs[1], &fe) || fe.Kind != "toml_parse" || fe.Warning || filepath.Base(fe.Path) != "bad.toml" {
		t.Errorf("syntax: %v", errs[1])
	}
}

func TestDefaults(t *testing.T) {
	d := Defaults()
	if len(d) != 73 { // gemini-cli 0.61.0's loader yields 73 rules from the same files
		t.Errorf("%d default rules", len(d))
	}
	for _, r := range d {
		if int(r.Priority) != int(TierDefault) || !strings.HasPrefix(r.Source, "Default: ") {
			t.Errorf("rule %+v", r)
		}
	}
	d[0].ToolName = "changed"
	if Defaults()[0].ToolName == "changed" {
		t.Error("Defaults shares its result")
	}
}

// TestDefaultsTable: the bundled defaults for agentry's built-in tools, by
// mode and interactivity (gemini-cli's own decisions for many more calls
// are in golden.json).
func TestDefaultsTable(t *testing.T) {
	e, err := New(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]map[string]any{
		"read_file": {"file_path": "a.go"}, "read_many_files": {"include": []any{"*.go"}}, "write_file": {"file_path": "a.go"},
		"replace": {"file_path": "a.go"}, "glob": {"pattern": "*"}, "grep_search": {"pattern": "x"}, "list_directory": {"dir_path": "."},
		"run_shell_command": {"command": "npm test"}, "invoke_agent": {"agent_name": "other"}, "complete_task": {},
		"list_mcp_resources": {}, "read_mcp_resource": {"uri": "x"}, "web_fetch": {"prompt": "x"}, "google_web_search": {"query": "x"},
	}
	A, Q, D := Allow, AskUser, Deny
	// default i, default headless, autoEdit i, yolo headless, plan i, plan headless
	tests := map[string][6]Decision{
		"read_file":          {A, A, A, A, A, A},
		"read_many_files":    {Q, D, Q, A, D, D},
		"write_file":         {Q, D, A, A, D, D},
		"replace":            {Q, D, A, A, D, D},
		"glob":               {A, A, A, A, A, A},
		"grep_search":        {A, A, A, A, A, A},
		"list_directory":     {A, A, A, A, A, A},
		"run_shell_command":  {Q, D, Q, A, D, D},
		"invoke_agent":       {A, A, A, A, D, D},
		"complete_task":      {A, A, A, A, A, A},
		"list_mcp_resources": {A, A, A, A, A, A},
		"read_mcp_resource":  {A, A, A, A, A, A},
		"web_fetch":          {Q, D, A, A, Q, D},
		"google_web_search":  {A, A, A, A, A, A},
	}
	cols := []struct {
		mode        Mode
		interactive bool
	}{{ModeDefault, true}, {ModeDefault, false}, {ModeAutoEdit, true}, {ModeYolo, false}, {ModePlan, true}, {ModePlan, false}}
	for tool, want := range tests {
		for i, col := range cols {
			c := Call{Tool: tool, Args: args[tool], Mode: col.mode, Interactive: col.interactive, Trusted: true}
			if got := e.Check(c).Decision; got != want[i] {
				t.Errorf("%s %s interactive=%v: %s, want %s", tool, col.mode, col.interactive, got, want[i])
			}
		}
	}
}
