package policy

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestNewRefuses(t *testing.T) {
	for name, r := range map[string]Rule{
		"no tool":       {Decision: Allow},
		"no decision":   {ToolName: "x"},
		"lookahead":     {ToolName: "x", Decision: Allow, ArgsPattern: `a(?=b)`},
		"backreference": {ToolName: "x", Decision: Allow, ArgsPattern: `(a)\1`},
		"bad regexp":    {ToolName: "x", Decision: Allow, ArgsPattern: `(a`},
	} {
		if _, err := New([]Rule{r}); !errors.Is(err, ErrInvalidRule) {
			t.Errorf("%s: %v, want ErrInvalidRule", name, err)
		}
	}
	_, err := New([]Rule{{ToolName: "x", Decision: Allow, ArgsPattern: `(?<=a)b`}})
	if !errors.Is(err, ErrUnsupportedRegex) {
		t.Errorf("lookbehind: %v, want ErrUnsupportedRegex", err)
	}
}

func TestOrderAndAdd(t *testing.T) {
	e, err := New([]Rule{
		{ToolName: "t", Decision: Deny, Priority: 1.5, Source: "a"},
		{ToolName: "t", Decision: Allow, Priority: 2, Source: "b"},
		{ToolName: "t", Decision: AskUser, Priority: 2, Source: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srcs := func() string {
		s := ""
		for _, r := range e.Rules() {
			s += r.Source
		}
		return s
	}
	if got := srcs(); got != "bca" {
		t.Fatalf("order %q, want bca (priority, then given order)", got)
	}
	if r := e.Check(Call{Tool: "t", Interactive: true}); r.Decision != Allow || r.Rule.Source != "b" {
		t.Errorf("first match: %+v", r)
	}
	if err := e.Add(Rule{ToolName: "t", Decision: Deny, Priority: 2, Source: "d"}, Rule{ToolName: "t", Decision: Deny, Priority: 3.95, Source: "e"}); err != nil {
		t.Fatal(err)
	}
	if got := srcs(); got != "ebcda" {
		t.Errorf("after Add %q, want ebcda", got)
	}
	if err := e.Add(Rule{}); !errors.Is(err, ErrInvalidRule) {
		t.Errorf("Add of an invalid rule: %v", err)
	}
	rs := e.Rules()
	rs[0].ToolName = "changed"
	if e.Rules()[0].ToolName != "t" {
		t.Error("Rules returned the engine's own rules")
	}
}

func TestDefaultDecision(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode        Mode
		interactive bool
		want        Decision
	}{
		{ModeDefault, true, AskUser}, {ModeDefault, false, Deny}, {ModeYolo, false, Allow}, {ModePlan, true, AskUser}, {"", false, Deny},
	} {
		r := e.Check(Call{Tool: "x", Mode: tc.mode, Interactive: tc.interactive})
		if r.Decision != tc.want || r.Rule != nil {
			t.Errorf("%s interactive=%v: %+v, want %s and no rule", tc.mode, tc.interactive, r, tc.want)
		}
	}
}

func TestWithoutAlwaysAllow(t *testing.T) {
	rules := []Rule{
		{ToolName: "glob", Decision: Allow, Priority: 4.95},
		{ToolName: "glob", Decision: Allow, Priority: 3.95},
		{ToolName: "glob", Decision: Deny, Priority: 1.05},
	}
	for _, tc := range []struct {
		opts []Option
		want Decision
	}{{nil, Allow}, {[]Option{WithoutAlwaysAllow()}, Deny}} {
		e, err := New(rules, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Check(Call{Tool: "glob", Interactive: true}).Decision; got != tc.want {
			t.Errorf("options %d: %s, want %s", len(tc.opts), got, tc.want)
		}
	}
}

// TestMatching covers each field of a rule on its own.
func TestMatching(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		rule Rule
		call Call
		want bool
	}{
		{"exact", Rule{ToolName: "read_file"}, Call{Tool: "read_file"}, true},
		{"other tool", Rule{ToolName: "read_file"}, Call{Tool: "glob"}, false},
		{"star", Rule{ToolName: "*"}, Call{Tool: "anything"}, true},
		{"literal star", Rule{ToolName: "read_*"}, Call{Tool: "read_file"}, false},
		{"literal star itself", Rule{ToolName: "read_*"}, Call{Tool: "read_*"}, true},
		{"mcp_* built-in", Rule{ToolName: "mcp_*"}, Call{Tool: "read_file"}, false},
		{"mcp_* mcp", Rule{ToolName: "mcp_*"}, Call{Tool: "q", Server: "db", ServerTool: "q"}, true},
		{"server wildcard", Rule{ToolName: "mcp_db_*"}, Call{Tool: "q", Server: "db", ServerTool: "q"}, true},
		{"server wildcard other", Rule{ToolName: "mcp_db_*"}, Call{Tool: "q", Server: "dbx", ServerTool: "q"}, false},
		{"server from name", Rule{ToolName: "mcp_db_*"}, Call{Tool: "mcp_db_q"}, true},
		{"full name", Rule{ToolName: "mcp_db_q"}, Call{Tool: "q", Server: "db", ServerTool: "q"}, true},
		{"short name + mcpName", Rule{ToolName: "q", MCPName: "db"}, Call{Tool: "q", Server: "db", ServerTool: "q"}, true},
		{"mcpName other server", Rule{ToolName: "q", MCPName: "db"}, Call{Tool: "q", Server: "fs", ServerTool: "q"}, false},
		{"mcpName any", Rule{ToolName: "*", MCPName: "*"}, Call{Tool: "q", Server: "fs", ServerTool: "q"}, true},
		{"mcpName any built-in", Rule{ToolName: "*", MCPName: "*"}, Call{Tool: "glob"}, false},
		{"server from annotations", Rule{ToolName: "*", MCPName: "fs"}, Call{Tool: "q", Annotations: map[string]any{"_serverName": "fs"}}, true},
		{"declared name differs", Rule{ToolName: "mcp_db_q"}, Call{Tool: "db__q", Server: "db", ServerTool: "q"}, true},
		{"alias legacy→current", Rule{ToolName: "grep_search"}, Call{Tool: "search_file_content"}, true},
		{"alias current→legacy", Rule{ToolName: "search_file_content"}, Call{Tool: "grep_search"}, true},
		{"agent name", Rule{ToolName: "helper"}, Call{Tool: "invoke_agent", Args: map[string]any{"agent_name": "helper"}}, true},
		{"agent name other tool", Rule{ToolName: "helper"}, Call{Tool: "run", Args: map[string]any{"agent_name": "helper"}}, false},
		{"mode in", Rule{ToolName: "x", Modes: []Mode{ModeAutoEdit, ModeYolo}}, Call{Tool: "x", Mode: ModeYolo}, true},
		{"mode out", Rule{ToolName: "x", Modes: []Mode{ModeAutoEdit}}, Call{Tool: "x", Mode: ModeDefault}, false},
		{"modes empty", Rule{ToolName: "x", Modes: []Mode{}}, Call{Tool: "x", Mode: ModePlan}, true},
		{"subagent", Rule{ToolName: "x", Subagent: "scout"}, Call{Tool: "x", Subagent: "scout"}, true},
		{"subagent main", Rule{ToolName: "x", Subagent: "scout"}, Call{Tool: "x"}, false},
		{"annotations equal", Rule{ToolName: "*", ToolAnnotations: map[string]any{"readOnlyHint": true, "n": 1.0}}, Call{Tool: "x", Annotations: map[string]any{"readOnlyHint": true, "n": 1}}, true},
		{"annotations differ", Rule{ToolName: "*", ToolAnnotations: map[string]any{"readOnlyHint": true}}, Call{Tool: "x", Annotations: map[string]any{"readOnlyHint": "true"}}, false},
		{"annotations missing", Rule{ToolName: "*", ToolAnnotations: map[string]any{}}, Call{Tool: "x"}, false},
		{"annotation objects never equal", Rule{ToolName: "*", ToolAnnotations: map[string]any{"o": map[string]any{}}}, Call{Tool: "x", Annotations: map[string]any{"o": map[string]any{}}}, false},
		{"args pattern", Rule{ToolName: "x", ArgsPattern: `"a":1`}, Call{Tool: "x", Args: map[string]any{"a": 1}}, true},
		{"args pattern no args", Rule{ToolName: "x", ArgsPattern: `.*`}, Call{Tool: "x"}, false},
		{"args pattern empty args", Rule{ToolName: "x", ArgsPattern: `^\{\}$`}, Call{Tool: "x", Args: map[string]any{}}, true},
		{"args NUL anchor top level", Rule{ToolName: "x", ArgsPattern: `\x00"p":"v"\x00`}, Call{Tool: "x", Args: map[string]any{"p": "v"}}, true},
		{"args NUL anchor nested", Rule{ToolName: "x", ArgsPattern: `\x00"p":"v"\x00`}, Call{Tool: "x", Args: map[string]any{"o": map[string]any{"p": "v"}}}, false},
		{"interactive only", Rule{ToolName: "x", Interactive: &yes}, Call{Tool: "x", Interactive: false}, false},
		{"headless only", Rule{ToolName: "x", Interactive: &no}, Call{Tool: "x", Interactive: false}, true},
	}
	for _, tc := range tests {
		tc.rule.Decision = Deny
		tc.rule.Priority = 2
		e, err := New([]Rule{tc.rule})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		tc.call.Interactive = tc.call.Interactive || tc.rule.Interactive == nil
		got := e.Check(tc.call).Rule != nil
		if got != tc.want {
			t.Errorf("%s: matched=%v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseModeAndNames(t *testing.T) {
	for in, want := range map[string]Mode{"default": ModeDefault, "autoEdit": ModeAutoEdit, "auto_edit": ModeAutoEdit, "yolo": ModeYolo, "plan": ModePlan} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("auto-edit"); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("ParseMode(auto-edit): %v", err)
	}
	if got := fmt.Sprint(Allow, AskUser, Deny, Decision(0)); got != "allow ask_user deny Decision(0)" {
		t.Errorf("decisions print %q", got)
	}
	if got := fmt.Sprint(TierDefault, TierExtension, TierWorkspace, TierUser, TierAdmin); got != "Default Extension Workspace User Admin" {
		t.Errorf("tiers print %q", got)
	}
	if _, err := ParseDecision("yes"); !errors.Is(err, ErrInvalidDecision) {
		t.Errorf("ParseDecision(yes): %v", err)
	}
}

// TestConcurrentCheckAndAdd runs Check while rules are added (run with -race).
func TestConcurrentCheckAndAdd(t *testing.T) {
	e, err := New(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				e.Check(Call{Tool: "run_shell_command", Args: map[string]any{"command": "git status && ls"}, Interactive: true, Trusted: true})
				if i == 0 {
					if err := e.Add(Rule{ToolName: fmt.Sprintf("t%d", j), Decision: Allow, Priority: 3.95}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if got := e.Check(Call{Tool: "t49", Interactive: true}).Decision; got != Allow {
		t.Errorf("added rule: %s", got)
	}
}

func TestCommandPrefixOnly(t *testing.T) {
	e, err := New([]Rule{{ToolName: "run_shell_command", CommandPrefix: "git", Decision: Allow, Priority: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if p := e.Rules()[0].ArgsPattern; p != CommandPrefixPattern("git") {
		t.Errorf("ArgsPattern %q", p)
	}
	for cmd, want := range map[string]Decision{"git status": Allow, "npm test": AskUser} {
		if got := e.Check(Call{Tool: "run_shell_command", Args: map[string]any{"command": cmd}, Interactive: true, Trusted: true}).Decision; got != want {
			t.Errorf("%q: %s, want %s", cmd, got, want)
		}
	}
}

func TestModeSpellings(t *testing.T) {
	e, err := New([]Rule{{ToolName: "x", Decision: Allow, Priority: 1, Modes: []Mode{ModeAutoEdit}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Check(Call{Tool: "x", Mode: "auto_edit"}).Decision; got != Allow {
		t.Errorf("auto_edit: %s", got)
	}
	r, _, err := AlwaysRules(Call{Tool: "x", Mode: "auto_edit"}, ProceedAlways)
	if err != nil || len(r[0].Modes) != 2 {
		t.Errorf("AlwaysRules auto_edit: %v %v", r, err)
	}
}
