package policy

import (
	"fmt"
	"slices"
	"testing"
)

func TestSettingsRules(t *testing.T) {
	rules, err := SettingsRules(Settings{
		ToolsExclude:           []string{"web_fetch"},
		ToolsAllowed:           []string{"run_shell_command(git)", "ShellTool(npm test)", "read_file(x)", "glob"},
		ToolsCore:              []string{"read_file", "ShellTool"},
		ConfirmationRequired:   []string{"ShellTool"},
		MCPExcluded:            []string{"bad"},
		MCPAllowed:             []string{"good"},
		TrustedServers:         []string{"mine"},
		MCPServers:             []string{"good", "mine", "other"},
		MCPAutoAllowInHeadless: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, fmt.Sprintf("%s %s %s %.2f %s %v %s", r.ToolName, r.MCPName, r.Decision, r.Priority, r.CommandPrefix, r.Modes, r.Source))
	}
	want := []string{
		"mcp_bad_* bad deny 4.90  [] Settings (MCP Excluded)",
		"web_fetch  deny 4.40  [] Settings (Tools Excluded)",
		"ask_user  deny 4.40  [] Settings (Tools Excluded)",
		"run_shell_command  allow 4.30 git [] Settings (Tools Allowed)",
		"run_shell_command  allow 4.30 npm test [] Settings (Tools Allowed)",
		"read_file  allow 4.30  [] Settings (Tools Allowed)",
		"glob  allow 4.30  [] Settings (Tools Allowed)",
		"run_shell_command  deny 4.29  [] Settings (Tools Allowed) (Narrowing Enforcement)",
		"run_shell_command  ask_user 4.35  [] Settings (Confirmation Required)",
		"read_file  allow 4.25  [default autoEdit yolo] Settings (Core Tools)",
		"run_shell_command  allow 4.25  [default autoEdit yolo] Settings (Core Tools)",
		"*  deny 4.24  [default autoEdit yolo] Settings (Core Tools Allowlist Enforcement)",
		"mcp_mine_* mine allow 4.20  [default autoEdit yolo] Settings (MCP Trusted)",
		"mcp_good_* good allow 4.10  [default autoEdit yolo] Settings (MCP Allowed)",
		"mcp_other_* other allow 4.10  [default autoEdit yolo] Settings (Headless MCP Auto-Allow)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// tools.allowed run_shell_command(git): git allowed, other commands denied.
	rules, err = SettingsRules(Settings{ToolsAllowed: []string{"run_shell_command(git)", "ShellTool(npm test)"}, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(append(rules, Defaults()...))
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]Decision{"git status": Allow, "npm test": Allow, "ls": Deny, "git push && rm x": Deny} {
		c := shell(cmd)
		c.Interactive, c.Trusted = true, true
		if got := e.Check(c).Decision; got != want {
			t.Errorf("%q: %s, want %s", cmd, got, want)
		}
	}
	// Interactive: ask_user is not excluded.
	rules, _ = SettingsRules(Settings{Interactive: true})
	if len(rules) != 0 {
		t.Errorf("interactive, no settings: %v", rules)
	}
}
