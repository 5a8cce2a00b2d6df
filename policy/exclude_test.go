package policy

import "testing"

func TestExcluded(t *testing.T) {
	user := func(r Rule) Rule {
		r.Priority = 4 + r.Priority/1000
		r.Source = "User: test.toml"
		return r
	}
	alpha := Tool{Name: "alpha__look", Server: "alpha", ServerTool: "look", Annotations: map[string]any{"readOnlyHint": true}}
	tests := []struct {
		name        string
		rules       []Rule
		tool        Tool
		mode        Mode
		interactive bool
		want        bool
	}{
		{name: "default-headless-read-only-allowed", tool: Tool{Name: "read_file"}},
		{name: "default-headless-shell-denied", tool: Tool{Name: "run_shell_command"}, want: true},
		{name: "default-interactive-shell-kept", tool: Tool{Name: "run_shell_command"}, interactive: true},
		{name: "yolo-headless-kept", tool: Tool{Name: "run_shell_command"}, mode: ModeYolo},
		{name: "no-rule-yolo-kept", tool: Tool{Name: "unknown_tool"}, mode: ModeYolo},
		{name: "no-rule-headless", tool: Tool{Name: "unknown_tool"}, want: true},
		{name: "tool-wide-deny", rules: []Rule{user(Rule{ToolName: "read_file", Decision: Deny, Priority: 1})},
			tool: Tool{Name: "read_file"}, interactive: true, want: true},
		{name: "deny-with-args-skipped", rules: []Rule{user(Rule{ToolName: "read_file", ArgsPattern: "a", Decision: Deny, Priority: 10})},
			tool: Tool{Name: "read_file"}, interactive: true},
		{name: "deny-with-args-then-tool-wide-deny", rules: []Rule{
			user(Rule{ToolName: "read_file", ArgsPattern: "a", Decision: Deny, Priority: 10}),
			user(Rule{ToolName: "read_file", Decision: Deny, Priority: 5})},
			tool: Tool{Name: "read_file"}, interactive: true, want: true},
		{name: "allow-with-args-keeps", rules: []Rule{
			user(Rule{ToolName: "run_shell_command", CommandPrefix: "git", Decision: Allow, Priority: 10})},
			tool: Tool{Name: "run_shell_command"}},
		{name: "mode-limited-deny", rules: []Rule{user(Rule{ToolName: "read_file", Decision: Deny, Priority: 1, Modes: []Mode{ModePlan}})},
			tool: Tool{Name: "read_file"}, mode: ModeAutoEdit, interactive: true},
		{name: "mode-limited-deny-in-its-mode", rules: []Rule{user(Rule{ToolName: "read_file", Decision: Deny, Priority: 1, Modes: []Mode{ModePlan}})},
			tool: Tool{Name: "read_file"}, mode: ModePlan, interactive: true, want: true},
		{name: "subagent-rule-ignored", rules: []Rule{user(Rule{ToolName: "read_file", Decision: Deny, Priority: 1, Subagent: "scout"})},
			tool: Tool{Name: "read_file"}, interactive: true},
		{name: "mcp-server-star", rules: []Rule{user(Rule{ToolName: "mcp_alpha_*", Decision: Deny, Priority: 1})},
			tool: alpha, interactive: true, want: true},
		{name: "mcp-other-server", rules: []Rule{user(Rule{ToolName: "mcp_beta_*", Decision: Deny, Priority: 1})},
			tool: alpha, interactive: true},
		{name: "mcp-allowed-headless", rules: []Rule{user(Rule{ToolName: "mcp_alpha_look", Decision: Allow, Priority: 1})},
			tool: alpha},
		{name: "annotation-deny", rules: []Rule{user(Rule{ToolName: "*", MCPName: "*", ToolAnnotations: map[string]any{"readOnlyHint": true}, Decision: Deny, Priority: 1})},
			tool: alpha, interactive: true, want: true},
		{name: "interactive-only-rule-headless", rules: []Rule{user(Rule{ToolName: "read_file", Decision: Deny, Priority: 1, Interactive: new(true)})},
			tool: Tool{Name: "read_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(append(Defaults(), tt.rules...))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Excluded(tt.tool, tt.mode, tt.interactive); got != tt.want {
				t.Errorf("Excluded(%+v, %q, %v) = %v, want %v", tt.tool, tt.mode, tt.interactive, got, tt.want)
			}
		})
	}
}

func TestExcludedFollowsAdd(t *testing.T) {
	e, err := New(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	v := e.Version()
	shell := Tool{Name: "run_shell_command"}
	if !e.Excluded(shell, ModeDefault, false) {
		t.Fatal("shell not excluded headless by the defaults")
	}
	if err := e.Add(Rule{ToolName: "run_shell_command", Decision: Allow, Priority: 4.5}); err != nil {
		t.Fatal(err)
	}
	if e.Version() == v {
		t.Error("Version did not change after Add")
	}
	if e.Excluded(shell, ModeDefault, false) {
		t.Error("shell still excluded after an allow rule")
	}
}
