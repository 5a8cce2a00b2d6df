package policy_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentry-dev/agentry/policy"
)

func ExampleNew() {
	user, errs := policy.Parse([]byte(`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git"
decision = "allow"
priority = 100

[[rule]]
toolName = "web_fetch"
decision = "deny"
priority = 100
denyMessage = "No network from this workspace."
`), policy.TierUser, "/home/me/.gemini/policies/mine.toml")
	if len(errs) > 0 {
		fmt.Println(errs)
		return
	}
	e, err := policy.New(append(policy.Defaults(), user...))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range []policy.Call{
		{Tool: "read_file", Args: map[string]any{"file_path": "main.go"}},
		{Tool: "run_shell_command", Args: map[string]any{"command": "git commit -m wip"}},
		{Tool: "run_shell_command", Args: map[string]any{"command": "git commit -m wip && rm -rf /"}},
		{Tool: "web_fetch", Args: map[string]any{"prompt": "https://example.com"}},
		{Tool: "write_file", Args: map[string]any{"file_path": "main.go", "content": "…"}, Mode: policy.ModeAutoEdit},
	} {
		c.Interactive, c.Trusted = true, true
		r := e.Check(c)
		if r.DenyMessage != "" {
			fmt.Println(c.Tool, r.Decision, r.DenyMessage)
			continue
		}
		fmt.Println(c.Tool, r.Decision)
	}
	// Output:
	// read_file allow
	// run_shell_command allow
	// run_shell_command ask_user
	// web_fetch deny No network from this workspace.
	// write_file allow
}

func ExampleLoadPaths() {
	dir, _ := os.MkdirTemp("", "policies")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "team.toml"), []byte(`
[[rule]]
toolName = "glob"
decision = "allow"
priority = 1000
`), 0o600)
	os.WriteFile(filepath.Join(dir, "typo.toml"), []byte(`
[[rule]]
toolName = "read_fil"
decision = "deny"
priority = 10
`), 0o600)
	rules, errs := policy.LoadPaths([]string{dir, filepath.Join(dir, "missing")}, policy.TierUser)
	fmt.Println(len(rules), "rule loaded")
	for _, err := range errs {
		fmt.Println(err)
	}
	// Output:
	// 1 rule loaded
	// [USER] Policy file error in team.toml:
	//   Schema validation failed
	// Invalid policy rule (rule #1):
	//   - Field "rule.0.priority": priority must be <= 999 to prevent tier overflow. Priorities >= 1000 would jump to the next tier.
	//   Suggestion: Ensure all required fields (decision, priority) are present with correct types
	// [USER] Policy file warning in typo.toml:
	//   Unrecognized tool name
	// Rule #1: Unrecognized tool name "read_fil". Did you mean one of: "read_file", "write_file", "replace"?
}
