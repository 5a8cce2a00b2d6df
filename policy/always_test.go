package policy

import (
	"errors"
	"slices"
	"testing"
)

// TestAlwaysRules: for every tool family, the rules of an "always" answer
// match the call that was answered (agentry's NUL anchors, unlike
// gemini-cli's "\\0", do match), in the call's mode and the more
// permissive ones, and not a different call.
func TestAlwaysRules(t *testing.T) {
	tests := []struct {
		name      string
		call      Call
		outcome   Outcome
		prefixes  []string // shell: the commandPrefix of each rule
		pattern   string   // the first rule's ArgsPattern, when checked
		toolName  string   // the first rule's ToolName
		prio      float64
		autoEdit  bool
		other     Call // a call the rules must not allow
		redirects bool
	}{
		{name: "shell roots", call: shell("git status && npm test"), outcome: ProceedAlways, prefixes: []string{"git", "npm"},
			toolName: "run_shell_command", prio: 3.95, other: shell("rm -rf x")},
		{name: "shell wrapper", call: shell(`bash -c "git log | head -1"`), outcome: ProceedAlways, prefixes: []string{"git", "head"},
			toolName: "run_shell_command", prio: 3.95, other: shell("gitx")},
		{name: "shell redirect saved", call: shell("npm test > out.txt"), outcome: ProceedAlwaysAndSave, prefixes: []string{"npm"},
			toolName: "run_shell_command", prio: 4.95, redirects: true, other: shell("rm x")},
		{name: "write_file", call: Call{Tool: "write_file", Args: map[string]any{"file_path": "src/a.go", "content": "x"}}, outcome: ProceedAlways,
			pattern: `\x00\"file_path\":\"src/a\.go\"\x00`, toolName: "write_file", prio: 3.95, autoEdit: true,
			other: Call{Tool: "write_file", Args: map[string]any{"file_path": "src/b.go", "content": "src/a.go"}}},
		{name: "replace saved", call: Call{Tool: "replace", Args: map[string]any{"file_path": "/w/a b.go", "old_string": "a", "new_string": "b"}}, outcome: ProceedAlwaysAndSave,
			toolName: "replace", prio: 4.95, other: Call{Tool: "replace", Args: map[string]any{"file_path": "/w/a b.gox"}}},
		{name: "read_file", call: Call{Tool: "read_file", Args: map[string]any{"file_path": "x.txt"}}, outcome: ProceedAlways,
			toolName: "read_file", prio: 3.95, other: Call{Tool: "read_file", Args: map[string]any{"file_path": "y.txt"}}},
		{name: "list_directory", call: Call{Tool: "list_directory", Args: map[string]any{"dir_path": "src"}}, outcome: ProceedAlways,
			toolName: "list_directory", prio: 3.95, other: Call{Tool: "list_directory", Args: map[string]any{"dir_path": "/"}}},
		{name: "glob", call: Call{Tool: "glob", Args: map[string]any{"pattern": "**/*.go"}}, outcome: ProceedAlways,
			toolName: "glob", prio: 3.95, other: Call{Tool: "glob", Args: map[string]any{"pattern": "**/*"}}},
		{name: "grep_search", call: Call{Tool: "grep_search", Args: map[string]any{"pattern": `a"b\c`, "dir_path": "x"}}, outcome: ProceedAlways,
			toolName: "grep_search", prio: 3.95, other: Call{Tool: "grep_search", Args: map[string]any{"pattern": "ab"}}},
		{name: "read_many_files", call: Call{Tool: "read_many_files", Args: map[string]any{"include": []any{"*.go", "*.md"}}}, outcome: ProceedAlways,
			pattern: `\x00\"include\":\[\"\*\.go\"\,\"\*\.md\"\]\x00`, toolName: "read_many_files", prio: 3.95,
			other: Call{Tool: "read_many_files", Args: map[string]any{"include": []any{"*"}}}},
		{name: "web_fetch tool-wide", call: Call{Tool: "web_fetch", Args: map[string]any{"prompt": "a"}}, outcome: ProceedAlways,
			toolName: "web_fetch", prio: 3.95, other: Call{Tool: "google_web_search", Args: map[string]any{"query": "a"}}},
		{name: "mcp tool", call: Call{Tool: "query", Server: "db", ServerTool: "query", Args: map[string]any{}}, outcome: ProceedAlwaysTool,
			toolName: "mcp_db_query", prio: 3.95, other: Call{Tool: "drop", Server: "db", ServerTool: "drop", Args: map[string]any{}}},
		{name: "mcp server", call: Call{Tool: "query", Server: "db", ServerTool: "query", Args: map[string]any{}}, outcome: ProceedAlwaysServer,
			toolName: "mcp_db_*", prio: 3.95, other: Call{Tool: "query", Server: "fs", ServerTool: "query", Args: map[string]any{}}},
		{name: "mcp saved", call: Call{Tool: "query", Server: "db", ServerTool: "query", Args: map[string]any{}}, outcome: ProceedAlwaysAndSave,
			toolName: "mcp_db_query", prio: 4.95, other: Call{Tool: "drop", Server: "db", ServerTool: "drop", Args: map[string]any{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.Mode = ModeAutoEdit
			rules, autoEdit, err := AlwaysRules(tc.call, tc.outcome)
			if err != nil {
				t.Fatal(err)
			}
			if autoEdit != tc.autoEdit {
				t.Errorf("switchToAutoEdit %v, want %v", autoEdit, tc.autoEdit)
			}
			if len(rules) == 0 {
				t.Fatal("no rules")
			}
			r := rules[0]
			if r.ToolName != tc.toolName || r.Priority != tc.prio || r.Decision != Allow || r.Source != SourceConfirmed ||
				!slices.Equal(r.Modes, []Mode{ModeAutoEdit, ModeYolo}) {
				t.Errorf("rule %+v", r)
			}
			if tc.call.Server != "" && r.MCPName != tc.call.Server {
				t.Errorf("MCPName %q", r.MCPName)
			}
			if tc.pattern != "" && r.ArgsPattern != tc.pattern {
				t.Errorf("ArgsPattern %s, want %s", r.ArgsPattern, tc.pattern)
			}
			if tc.prefixes != nil {
				var got []string
				for _, r := range rules {
					got = append(got, r.CommandPrefix)
					if r.AllowRedirection != tc.redirects {
						t.Errorf("AllowRedirection %v", r.AllowRedirection)
					}
				}
				if !slices.Equal(got, tc.prefixes) {
					t.Errorf("prefixes %q, want %q", got, tc.prefixes)
				}
			}
			// Nothing else allows: interactive default is ask.
			e, err := New(rules)
			if err != nil {
				t.Fatal(err)
			}
			call := tc.call
			call.Interactive, call.Trusted = true, true
			if got := e.Check(call).Decision; got != Allow {
				t.Errorf("the answered call: %s, want allow", got)
			}
			call.Mode = ModeDefault
			if got := e.Check(call).Decision; got == Allow {
				t.Error("the answered call in a less permissive mode: allowed")
			}
			other := tc.other
			other.Mode, other.Interactive, other.Trusted = ModeAutoEdit, true, true
			if got := e.Check(other).Decision; got == Allow {
				t.Errorf("another call %+v: allowed", other)
			}
		})
	}
}

func TestAlwaysRulesRefusals(t *testing.T) {
	if _, _, err := AlwaysRules(Call{Tool: "x"}, "proceed_once"); !errors.Is(err, ErrInvalidOutcome) {
		t.Errorf("proceed_once: %v", err)
	}
	if _, _, err := AlwaysRules(Call{Tool: "read_file", Args: map[string]any{}}, ProceedAlways); !errors.Is(err, ErrNoNarrowing) {
		t.Errorf("read_file without file_path: %v", err)
	}
	if r, _, err := AlwaysRules(Call{Tool: "glob", Args: map[string]any{"pattern": "x"}}, ProceedAlwaysServer); err != nil || r != nil {
		t.Errorf("server outcome on a built-in tool: %v, %v", r, err)
	}
	// A line that does not parse: the whole command is the prefix (a line
	// that does not parse still asks when checked, as in gemini-cli).
	r, _, err := AlwaysRules(shell(`npm "x`), ProceedAlways)
	if err != nil || len(r) != 1 || r[0].CommandPrefix != `npm "x` {
		t.Errorf("unparsable: %v %v", r, err)
	}
	r, _, err = AlwaysRules(Call{Tool: "x", Mode: ModePlan}, ProceedAlways)
	if err != nil || !slices.Equal(r[0].Modes, []Mode{ModePlan, ModeDefault, ModeAutoEdit, ModeYolo}) {
		t.Errorf("plan: %v %v", r, err)
	}
}

func shell(command string) Call {
	return Call{Tool: "run_shell_command", Args: map[string]any{"command": command}}
}
