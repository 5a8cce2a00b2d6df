package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// updatePolicyParity rewrites testdata/policy_parity.json from gemini-cli's
// observed outcomes: go test ./e2e -run TestPolicyParity -update-policy-parity
var updatePolicyParity = flag.Bool("update-policy-parity", false,
	"rewrite testdata/policy_parity.json from gemini-cli 0.61.0's outcomes")

// policyCall is one tool call the fake model makes. Tool is a built-in
// tool's name or "mcp:<server>:<tool>" for a tool of the parity MCP server
// (each side calls it by the name it declared to the model).
type policyCall struct {
	Tool string
	Args map[string]any
}

// policyCase is one headless run: policy files (each passed with
// --policy), admin policy files (--admin-policy), an approval mode, an
// optional --allowed-tools list, and the calls of one model response.
type policyCase struct {
	name    string
	user    []string // TOML contents, each its own --policy file
	admin   []string // TOML contents, each its own --admin-policy file
	mode    string   // --approval-mode; "" leaves it out (default)
	allowed []string // --allowed-tools
	// files are written before the run: "~/<path>" under the home,
	// anything else under the workspace.
	files map[string]string
	calls []policyCall
}

// policyOutcome is how one call ended, as the next model request shows it.
type policyOutcome struct {
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"` // allow, deny, ask, error, undeclared, missing
	// Message is the function response's error text for deny, ask and
	// error (empty for allow).
	Message string `json:"message,omitempty"`
}

// policyRow is a case's golden row.
type policyRow struct {
	Case  string          `json:"case"`
	Calls []policyOutcome `json:"calls"`
	// Warnings are the policy file errors the run printed: each
	// "[TIER] Policy file error in <file>:" line with the next one (what
	// failed), once each.
	Warnings []string `json:"warnings,omitempty"`
}

func shell(cmd string) policyCall {
	return policyCall{Tool: "run_shell_command", Args: map[string]any{"command": cmd}}
}

func mcpCall(server, tool, text string) policyCall {
	return policyCall{Tool: "mcp:" + server + ":" + tool, Args: map[string]any{"text": text}}
}

func readFile(path string) policyCall {
	return policyCall{Tool: "read_file", Args: map[string]any{"file_path": path}}
}

func writeFileCall(path string) policyCall {
	return policyCall{Tool: "write_file", Args: map[string]any{"file_path": path, "content": "written\n"}}
}

// policyCases is the parity table. Commands are harmless: echo, ls, git
// status in the run's own repository; rm -rf only on a file of the run's
// workspace, in cases that expect it refused.
var policyCases = []policyCase{
	// No policy file: the bundled defaults, headless, per mode.
	{name: "defaults/default", calls: []policyCall{readFile("a.txt"), shell("echo hi"), writeFileCall("new.txt"), mcpCall("alpha", "look", "x")}},
	{name: "defaults/auto_edit", mode: "auto_edit", calls: []policyCall{readFile("a.txt"), shell("echo hi"), writeFileCall("new.txt"), mcpCall("alpha", "look", "x")}},
	{name: "defaults/yolo", mode: "yolo", calls: []policyCall{readFile("a.txt"), shell("echo hi"), writeFileCall("new.txt"), mcpCall("alpha", "touch", "x")}},
	{name: "defaults/plan", mode: "plan", calls: []policyCall{readFile("a.txt"), shell("echo hi"), writeFileCall("new.txt"), mcpCall("alpha", "look", "x")}},

	// Tiers and priorities.
	{name: "tier/user-deny-over-default-allow", user: []string{`
[[rule]]
toolName = "read_file"
decision = "deny"
priority = 1
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "tier/admin-deny-over-user-allow", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 999
`}, admin: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "deny"
priority = 1
denyMessage = "Admins forbid echo."
`}, calls: []policyCall{shell("echo hi"), shell("ls")}},
	{name: "tier/admin-tool-wide-deny", admin: []string{`
[[rule]]
toolName = "read_file"
decision = "deny"
priority = 1
`}, user: []string{`
[[rule]]
toolName = "read_file"
decision = "allow"
priority = 999
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "priority/higher-wins", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 100

[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 200
`}, calls: []policyCall{shell("echo hi")}},
	{name: "priority/equal-first-wins", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 100
denyMessage = "first"

[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 100
`}, calls: []policyCall{shell("echo hi")}},
	{name: "priority/equal-first-wins-reversed", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 100
denyMessage = "second"
`}, calls: []policyCall{shell("echo hi")}},

	// toolName wildcards and mcpName.
	{name: "wildcard/star-deny", user: []string{`
[[rule]]
toolName = "*"
decision = "deny"
priority = 10
denyMessage = "Nothing today."
`}, calls: []policyCall{readFile("a.txt"), mcpCall("alpha", "look", "x")}},
	{name: "wildcard/mcp-star-allow", user: []string{`
[[rule]]
toolName = "mcp_*"
decision = "allow"
priority = 10
`}, calls: []policyCall{mcpCall("alpha", "touch", "x"), mcpCall("beta", "touch", "y"), shell("echo hi")}},
	{name: "wildcard/mcp-server-star", user: []string{`
[[rule]]
toolName = "mcp_alpha_*"
decision = "allow"
priority = 10
`}, calls: []policyCall{mcpCall("alpha", "touch", "x"), mcpCall("beta", "touch", "y")}},
	{name: "wildcard/literal-star-in-name", user: []string{`
[[rule]]
toolName = "read_*"
decision = "deny"
priority = 10
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "mcpName/server-and-tool", user: []string{`
[[rule]]
mcpName = "beta"
toolName = "touch"
decision = "allow"
priority = 10
`}, calls: []policyCall{mcpCall("alpha", "touch", "x"), mcpCall("beta", "touch", "y")}},
	{name: "mcpName/any-server", user: []string{`
[[rule]]
mcpName = "*"
toolName = "*"
decision = "allow"
priority = 10
`}, calls: []policyCall{mcpCall("alpha", "touch", "x"), mcpCall("beta", "touch", "y"), shell("echo hi")}},
	{name: "mcp/full-name", user: []string{`
[[rule]]
toolName = "mcp_beta_look"
decision = "deny"
priority = 10
denyMessage = "Not beta."
`, `
[[rule]]
toolName = "mcp_*"
decision = "allow"
priority = 5
`}, calls: []policyCall{mcpCall("alpha", "look", "x"), mcpCall("beta", "look", "y")}},

	// argsPattern on the stable args JSON.
	{name: "argsPattern/nul-anchored", user: []string{`
[[rule]]
toolName = "mcp_*"
argsPattern = '\x00"text":"ok"\x00'
decision = "allow"
priority = 10
`}, calls: []policyCall{mcpCall("alpha", "touch", "ok"), mcpCall("alpha", "touch", "ok2")}},
	{name: "argsPattern/substring", user: []string{`
[[rule]]
toolName = "read_file"
argsPattern = 'secret'
decision = "deny"
priority = 10
denyMessage = "No secrets."
`}, calls: []policyCall{readFile("secret.txt"), readFile("a.txt")}},
	{name: "argsPattern/backslash-zero-never-matches", user: []string{`
# gemini-cli's always-allow rules are saved with this pattern: a literal
# backslash and 0, not NUL, so they never match.
[[rule]]
toolName = "read_file"
argsPattern = '\\0"file_path":"a\.txt"\\0'
decision = "deny"
priority = 10

# The intended pattern, with NUL anchors.
[[rule]]
toolName = "read_file"
argsPattern = '\x00"file_path":"secret\.txt"\x00'
decision = "deny"
priority = 10
`}, calls: []policyCall{readFile("a.txt"), readFile("secret.txt")}},
	{name: "argsPattern/shell-skips-heuristics", user: []string{`
[[rule]]
toolName = "run_shell_command"
argsPattern = '"command":"rm '
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("rm -rf victim.txt")}},

	// commandPrefix and commandRegex.
	{name: "commandPrefix/git", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git"
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("git status"), shell("gitx status"), shell("echo hi")}},
	{name: "commandPrefix/list", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["echo", "ls -l"]
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("echo hi"), shell("ls -l"), shell("ls -la")}},
	{name: "commandRegex/echo", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandRegex = 'echo [a-z]+"'
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("echo hi"), shell("echo 42")}},

	// modes and interactive.
	{name: "modes/only-yolo-rule-in-default", user: []string{`
[[rule]]
toolName = "read_file"
decision = "deny"
priority = 10
modes = ["yolo"]
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "modes/autoEdit-rule-in-auto_edit", mode: "auto_edit", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
modes = ["autoEdit"]
`}, calls: []policyCall{shell("echo hi")}},
	{name: "modes/user-deny-in-yolo", mode: "yolo", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 10
denyMessage = "Even in yolo."
`}, calls: []policyCall{shell("echo hi"), readFile("a.txt")}},
	{name: "modes/plan-user-allow", mode: "plan", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
modes = ["plan"]
`}, calls: []policyCall{shell("echo hi"), writeFileCall("new.txt")}},
	{name: "interactive/true-rule-ignored", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
interactive = true
`}, calls: []policyCall{shell("echo hi")}},
	{name: "interactive/false-rule-applies", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
interactive = false
`}, calls: []policyCall{shell("echo hi")}},

	// toolAnnotations.
	{name: "toolAnnotations/readOnlyHint", user: []string{`
[[rule]]
toolName = "mcp_*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 10
`}, calls: []policyCall{mcpCall("alpha", "look", "x"), mcpCall("alpha", "touch", "x")}},
	{name: "toolAnnotations/plan-readonly-mcp", mode: "plan", calls: []policyCall{mcpCall("alpha", "look", "x"), mcpCall("alpha", "touch", "x")}},

	// ask_user rules headless, and the shell heuristics.
	{name: "ask_user/headless", user: []string{`
[[rule]]
toolName = "read_file"
decision = "ask_user"
priority = 10
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "ask_user/display-names", user: []string{`
[[rule]]
toolName = "*"
mcpName = "*"
decision = "ask_user"
priority = 10

[[rule]]
toolName = "*"
decision = "ask_user"
priority = 10
`}, calls: []policyCall{writeFileCall("new.txt"), policyCall{Tool: "list_directory", Args: map[string]any{"dir_path": "."}},
		policyCall{Tool: "glob", Args: map[string]any{"pattern": "*.txt"}}, mcpCall("alpha", "look", "x"), shell("touch new.txt")}},
	{name: "shell/ask-rule-safe-commands", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "ask_user"
priority = 10
`}, calls: []policyCall{shell("echo hi"), shell("ls"), shell("git status"), shell("touch new.txt")}},
	{name: "shell/allow-rule-rm-rf", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("rm -rf victim.txt"), shell("rm victim2.txt")}},
	{name: "shell/pipeline-and-chain", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("echo hi | wc -c"), shell("echo a && echo b"), shell("echo a && touch new.txt"), shell("echo $(touch new.txt)")}},
	{name: "shell/chain-with-deny", user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10

[[rule]]
toolName = "run_shell_command"
commandPrefix = "touch"
decision = "deny"
priority = 20
denyMessage = "No touching."
`}, calls: []policyCall{shell("echo a; touch new.txt"), shell("bash -c 'touch new.txt'")}},
	{name: "shell/redirect-downgrades-allow", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("echo hi > out.txt"), shell("echo hi")}},
	{name: "shell/redirect-auto_edit", mode: "auto_edit", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 10
`}, calls: []policyCall{shell("echo hi > out.txt")}},
	{name: "shell/allowRedirection", user: []string{`
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 10
allowRedirection = true
`}, calls: []policyCall{shell("echo hi > out.txt")}},

	// --allowed-tools.
	{name: "allowed-tools/shell-git", allowed: []string{"run_shell_command(git)"}, calls: []policyCall{shell("git status"), shell("echo hi"), shell("gitx status")}},
	{name: "allowed-tools/tool-wide", allowed: []string{"write_file"}, calls: []policyCall{writeFileCall("new.txt"), shell("echo hi")}},
	{name: "allowed-tools/under-user-deny", allowed: []string{"run_shell_command"}, user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 500
denyMessage = "User says no."
`}, calls: []policyCall{shell("echo hi")}},

	// Policy directories: the user's (replaced by --policy) and the
	// workspace's.
	{name: "dirs/user-policies", files: map[string]string{"~/.gemini/policies/mine.toml": policyDenyA}, calls: []policyCall{readFile("a.txt"), readFile("secret.txt")}},
	{name: "dirs/user-policies-replaced-by-flag", files: map[string]string{"~/.gemini/policies/mine.toml": policyDenyA}, user: []string{`
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
`}, calls: []policyCall{readFile("a.txt"), shell("echo hi")}},
	{name: "dirs/workspace-policies", files: map[string]string{".gemini/policies/ws.toml": policyDenyA}, calls: []policyCall{readFile("a.txt")}},

	// denyMessage spelling, errors in files.
	{name: "denyMessage/snake-case", user: []string{`
[[rule]]
toolName = "read_file"
argsPattern = '"file_path":"a\.txt"'
decision = "deny"
priority = 10
deny_message = "Snake says no."
`}, calls: []policyCall{readFile("a.txt"), readFile("secret.txt")}},
	{name: "denyMessage/tool-wide-deny-undeclared", user: []string{`
[[rule]]
toolName = "read_file"
decision = "deny"
priority = 10
denyMessage = "Never read."
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "denyMessage/wildcard-with-args", user: []string{`
[[rule]]
toolName = "*"
argsPattern = 'victim'
decision = "deny"
priority = 10
denyMessage = "Leave the victim alone."

[[rule]]
toolName = "*"
decision = "allow"
priority = 5
`}, calls: []policyCall{readFile("victim.txt"), mcpCall("alpha", "touch", "victim"), shell("ls victim.txt"), readFile("a.txt")}},
	{name: "errors/bad-regex-drops-rule", user: []string{`
[[rule]]
toolName = "read_file"
argsPattern = '('
decision = "deny"
priority = 10

[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
`}, calls: []policyCall{readFile("a.txt"), shell("echo hi")}},
	{name: "errors/malformed-file-skipped", user: []string{`
[[rule]
toolName = "read_file"
decision = "deny"
priority = 10
`, `
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 10
`}, calls: []policyCall{readFile("a.txt"), shell("echo hi")}},
	{name: "errors/priority-over-999-skips-file", user: []string{`
[[rule]]
toolName = "read_file"
decision = "deny"
priority = 1000
`}, calls: []policyCall{readFile("a.txt")}},
	{name: "errors/unknown-keys-ignored", user: []string{`
[[rule]]
name = "named"
toolName = "read_file"
decision = "deny"
priority = 10
colour = "blue"
`}, calls: []policyCall{readFile("a.txt")}},
}

// policyDenyA denies reading a.txt (by argsPattern, so that read_file
// stays declared).
const policyDenyA = `
[[rule]]
toolName = "read_file"
argsPattern = '"file_path":"a\.txt"'
decision = "deny"
priority = 10
denyMessage = "Not a.txt."
`

// policyDifferences lists the rows where agentry differs from gemini-cli
// on purpose, with the reason; every other row must match the golden.
// Not a row's difference: gemini-cli 0.61.0 declares MCP tools to the
// model as mcp_<server>_<tool> (generateValidName), agentry as
// <server>__<tool>; each side's calls use the name it declared
// (declaredName) and the outcomes and texts compared are otherwise equal
// (docs/policy.md, "Differences from gemini-cli").
var policyDifferences = map[string]string{
	"dirs/workspace-policies": "gemini-cli 0.61.0 never loads the workspace tier (disableWorkspacePolicies is hard-coded " +
		"in cli/config/policy.ts); agentry loads <workspace>/.gemini/policies and .agentry/policies in a trusted workspace",
}

// policyRun is what a side needs to build its command: the case's
// workspace and home, and the fake model's URL.
type policyRun struct {
	ws, home, url string
	mcpServer     string // the parity MCP server's binary, "" when the case calls none
}

// TestPolicyParity runs every case headless through gemini-cli 0.61.0
// and through agentry run, each with a fresh home, a trusted workspace
// (a git repository with a few files), the fake Gemini server as its
// model, the same --policy, --admin-policy, --approval-mode and
// --allowed-tools flags, and the parity MCP server as alpha and beta
// (without "trust", which would allow their tools). The fake model answers the prompt with the case's calls
// in one response; each call's outcome is read from what the side sent
// its model: left out of the tool declarations (undeclared), or the
// function response of the next request (ran, denied by policy with its
// message, or refused as needing confirmation). gemini-cli's outcomes
// must still be testdata/policy_parity.json's (-update-policy-parity
// rewrites it); agentry's must equal them, but for the rows of
// policyDifferences.
func TestPolicyParity(t *testing.T) {
	golden := filepath.Join(repoRoot, "e2e", "testdata", "policy_parity.json")
	if *updatePolicyParity {
		geminiCLI(t)
	}
	mcpServer := buildPolicyMCPServer(t)

	var want map[string]policyRow
	if !*updatePolicyParity {
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		var rows []policyRow
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		want = map[string]policyRow{}
		for _, r := range rows {
			want[r.Case] = r
		}
		for _, c := range policyCases {
			if _, ok := want[c.name]; !ok {
				t.Errorf("case %s has no golden row: run with -update-policy-parity", c.name)
			}
		}
	}

	var mu sync.Mutex
	var observed []policyRow
	t.Run("gemini-cli", func(t *testing.T) {
		// Without gemini-cli (outside CI) agentry is still checked
		// against the golden rows.
		gemini := geminiCLI(t)
		for _, c := range policyCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				got, _ := runPolicyCase(t, c, mcpServer, func(r *policyRun, args []string) *exec.Cmd {
					return geminiPolicyCmd(t, gemini, r, args)
				})
				mu.Lock()
				observed = append(observed, got)
				mu.Unlock()
				if want != nil {
					if diff := cmp.Diff(want[c.name], got); diff != "" {
						t.Errorf("gemini-cli no longer gives the golden outcomes (-golden +gemini-cli):\n%s", diff)
					}
				}
			})
		}
	})
	if *updatePolicyParity {
		if t.Failed() {
			t.Fatal("gemini-cli's outcomes are incomplete: the golden file is left as it was")
		}
		// Rows of cases not run this time (-run) are kept.
		if b, err := os.ReadFile(golden); err == nil {
			var old []policyRow
			if err := json.Unmarshal(b, &old); err != nil {
				t.Fatal(err)
			}
			for _, r := range old {
				if slices.ContainsFunc(policyCases, func(c policyCase) bool { return c.name == r.Case }) &&
					!slices.ContainsFunc(observed, func(o policyRow) bool { return o.Case == r.Case }) {
					observed = append(observed, r)
				}
			}
		}
		slices.SortFunc(observed, func(a, b policyRow) int { return strings.Compare(a.Case, b.Case) })
		b, err := json.MarshalIndent(observed, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}

	t.Run("agentry", func(t *testing.T) {
		for _, c := range policyCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				got, stderr := runPolicyCase(t, c, mcpServer, func(r *policyRun, args []string) *exec.Cmd {
					return agentryPolicyCmd(t, r, args)
				})
				diff := cmp.Diff(want[c.name], got)
				why, differs := policyDifferences[c.name]
				switch {
				case diff != "" && !differs:
					t.Errorf("agentry differs from gemini-cli (-gemini-cli +agentry):\n%s\nagentry's stderr:\n%s", diff, lastLines(stderr, 20))
				case diff == "" && differs:
					t.Errorf("agentry now matches gemini-cli: remove the difference %q", why)
				}
			})
		}
	})
}

// buildPolicyMCPServer builds testdata/policymcp.
func buildPolicyMCPServer(t *testing.T) string {
	t.Helper()
	server := filepath.Join(t.TempDir(), "policymcp")
	build := exec.Command("go", "build", "-o", server, "./e2e/testdata/policymcp")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	return server
}

// policyPrompt is the user's prompt in every run.
const policyPrompt = "Make the calls of the policy parity case."

// runPolicyCase runs case c through one side, whose command mk builds
// from the run's directories and the policy flags, and classifies each
// call from the function responses of the next model request. It returns
// the row and the side's stderr.
func runPolicyCase(t *testing.T, c policyCase, mcpServer string, mk func(*policyRun, []string) *exec.Cmd) (policyRow, string) {
	t.Helper()
	r := &policyRun{ws: t.TempDir(), home: t.TempDir()}
	for _, f := range []string{"a.txt", "secret.txt", "victim.txt", "victim2.txt"} {
		if err := os.WriteFile(filepath.Join(r.ws, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", r.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, content := range c.files {
		p := filepath.Join(r.ws, name)
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			p = filepath.Join(r.home, rest)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, call := range c.calls {
		if strings.HasPrefix(call.Tool, "mcp:") {
			r.mcpServer = mcpServer
		}
	}
	var args []string
	dir := t.TempDir()
	for i, p := range c.user {
		f := filepath.Join(dir, fmt.Sprintf("user-%d.toml", i))
		if err := os.WriteFile(f, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--policy", f)
	}
	for i, p := range c.admin {
		f := filepath.Join(dir, fmt.Sprintf("admin-%d.toml", i))
		if err := os.WriteFile(f, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--admin-policy", f)
	}
	if c.mode != "" {
		args = append(args, "--approval-mode", c.mode)
	}
	if len(c.allowed) > 0 {
		args = append(args, "--allowed-tools", strings.Join(c.allowed, ","))
	}

	fake := fakegemini.New(t, fakegemini.WithResponder(func(req *fakegemini.Request) (fakegemini.Step, bool) {
		if req.Body == nil {
			return fakegemini.Step{}, false
		}
		for _, content := range req.Body.Contents {
			for _, p := range content.Parts {
				if p.FunctionResponse != nil {
					return fakegemini.Text("Done."), true
				}
			}
		}
		if req.LastUserText() != policyPrompt && !strings.Contains(req.LastUserText(), policyPrompt) {
			// Anything else gemini-cli asks its model (none is expected
			// with a named model) gets a plain answer.
			return fakegemini.Text("{}"), true
		}
		declared := map[string]bool{}
		for _, tool := range req.Body.Tools {
			for _, d := range tool.FunctionDeclarations {
				declared[d.Name] = true
			}
		}
		parts := make([]*genai.Part, len(c.calls))
		for i, call := range c.calls {
			parts[i] = &genai.Part{
				FunctionCall:     &genai.FunctionCall{ID: fmt.Sprintf("call-%d", i), Name: declaredName(call.Tool, declared), Args: call.Args},
				ThoughtSignature: []byte("signature"),
			}
		}
		return fakegemini.Parts(parts...), true
	}))
	r.url = fake.URL

	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	cmd := mk(r, args)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s hung; stderr:\n%s", cmd.Path, stderr.String())
	}
	reqs := fake.Requests()
	t.Logf("%s ran in %v (CPU %v), %d model requests", filepath.Base(cmd.Path), time.Since(start).Round(time.Millisecond),
		(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Round(time.Millisecond), len(reqs))

	out := stdout.String() + stderr.String()
	row := policyRow{Case: c.name}
	// The tools declared with the prompt (none when the policy denies
	// every tool).
	declared := map[string]bool{}
	prompted := false
	for _, req := range reqs {
		if req.Body == nil || !strings.Contains(req.LastUserText(), policyPrompt) {
			continue
		}
		for _, tool := range req.Body.Tools {
			for _, d := range tool.FunctionDeclarations {
				declared[d.Name] = true
			}
		}
		prompted = true
		break
	}
	if !prompted {
		t.Fatalf("%s %q never sent the prompt to its model (%d requests); output:\n%s",
			filepath.Base(cmd.Path), cmd.Args[1:], len(reqs), lastLines(out, 30))
	}

	responses := lastFunctionResponses(reqs)
	for i, call := range c.calls {
		o := policyOutcome{Tool: call.Tool, Outcome: "missing"}
		switch resp := responseFor(responses, i); {
		case !declared[declaredName(call.Tool, declared)]:
			// Not offered to the model at all: gemini-cli leaves out the
			// tools its policy denies outright.
			o.Outcome = "undeclared"
		case resp != nil:
			o = classifyPolicyResponse(call.Tool, resp, r)
		}
		row.Calls = append(row.Calls, o)
	}
	row.Warnings = policyFileErrors(out)
	return row, out
}

// policyFileErrors are the policy file errors in a run's output: each
// header line with the line after it, once each, in order.
func policyFileErrors(out string) []string {
	var errs []string
	ls := strings.Split(out, "\n")
	for i, l := range ls {
		if !policyFileErrorLine.MatchString(l) || i+1 == len(ls) {
			continue
		}
		e := strings.TrimPrefix(strings.TrimSpace(l), "[WARNING] ") + " " + strings.TrimSpace(ls[i+1])
		if !slices.Contains(errs, e) {
			errs = append(errs, e)
		}
	}
	return errs
}

// policyFileErrorLine is the first line of gemini-cli's policy file error
// (agentry prints it as a warning, after "[WARNING] ").
var policyFileErrorLine = regexp.MustCompile(`^\s*(?:\[WARNING\] )?\[[A-Z]+\] Policy file error in .*:$`)

// declaredName is the name a side declared for tool: a built-in's own,
// and for "mcp:<server>:<tool>" gemini-cli's mcp_<server>_<tool> or
// whatever declared name ends in the tool's name.
func declaredName(tool string, declared map[string]bool) string {
	server, name, ok := strings.Cut(strings.TrimPrefix(tool, "mcp:"), ":")
	if !strings.HasPrefix(tool, "mcp:") || !ok {
		return tool
	}
	for _, n := range []string{"mcp_" + server + "_" + name, server + "__" + name, server + "_" + name, name} {
		if declared[n] {
			return n
		}
	}
	return "mcp_" + server + "_" + name
}

// lastFunctionResponses are the function responses of the last model
// request that holds any, in order.
func lastFunctionResponses(reqs []fakegemini.Request) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, req := range reqs {
		if req.Body == nil {
			continue
		}
		var these []*genai.FunctionResponse
		for _, content := range req.Body.Contents {
			for _, p := range content.Parts {
				if p.FunctionResponse != nil {
					these = append(these, p.FunctionResponse)
				}
			}
		}
		if len(these) > 0 {
			out = these
		}
	}
	return out
}

// responseFor is the response to call i: by its id, else by position.
func responseFor(responses []*genai.FunctionResponse, i int) *genai.FunctionResponse {
	id := fmt.Sprintf("call-%d", i)
	for _, r := range responses {
		if r.ID == id {
			return r
		}
	}
	if i < len(responses) && responses[i].ID == "" {
		return responses[i]
	}
	return nil
}

const (
	policyDeniedPrefix = "Tool execution denied by policy."
	policyAskSuffix    = "requires user confirmation, which is not supported in non-interactive mode."
)

// classifyPolicyResponse reads one function response: denied by policy,
// refused as needing confirmation, another error, or allowed (it ran).
func classifyPolicyResponse(tool string, resp *genai.FunctionResponse, r *policyRun) policyOutcome {
	o := policyOutcome{Tool: tool, Outcome: "allow"}
	errText, isErr := resp.Response["error"].(string)
	if !isErr {
		return o
	}
	msg := strings.ReplaceAll(strings.ReplaceAll(errText, r.ws, "$WS"), r.home, "$HOME")
	o.Message = msg
	switch {
	case strings.Contains(msg, policyAskSuffix):
		o.Outcome = "ask"
	case strings.HasPrefix(msg, policyDeniedPrefix):
		o.Outcome = "deny"
	default:
		o.Outcome = "error"
	}
	return o
}

// policyMCPServers is the mcpServers setting of both sides: the parity
// server twice, as alpha and beta, neither trusted.
func policyMCPServers(r *policyRun) map[string]any {
	if r.mcpServer == "" {
		return nil
	}
	return map[string]any{
		"alpha": map[string]any{"command": r.mcpServer},
		"beta":  map[string]any{"command": r.mcpServer},
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// geminiPolicyCmd is gemini-cli headless on the case: a fresh home whose
// settings select the Gemini API (the fake, through
// GOOGLE_GEMINI_BASE_URL), send nothing elsewhere and name the MCP
// servers; the workspace trusted through the environment, so that the
// approval mode is not forced to default; a named model, so that no
// router classifier is asked.
func geminiPolicyCmd(t *testing.T, gemini string, r *policyRun, args []string) *exec.Cmd {
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	if s := policyMCPServers(r); s != nil {
		settings["mcpServers"] = s
	}
	writeJSONFile(t, filepath.Join(r.home, ".gemini", "settings.json"), settings)
	c := exec.Command(gemini, append([]string{"-m", "gemini-2.5-flash", "-p", policyPrompt}, args...)...)
	c.Dir = r.ws
	c.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + r.home,
		"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + r.url,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		// One process: gemini-cli otherwise starts itself again as a
		// child with a larger heap, which costs a second start-up.
		"GEMINI_CLI_NO_RELAUNCH=true",
	}
	return c
}

// agentryPolicyCmd is agentry run on the case the same way: a fresh home
// with the MCP servers in its settings, the workspace trusted, the same
// policy flags.
func agentryPolicyCmd(t *testing.T, r *policyRun, args []string) *exec.Cmd {
	if s := policyMCPServers(r); s != nil {
		writeJSONFile(t, filepath.Join(r.home, ".agentry", "settings.json"), map[string]any{"mcpServers": s})
	}
	c := exec.Command(binary, append([]string{"run", "-m", "gemini-2.5-flash", "--trust-workspace", "-p", policyPrompt}, args...)...)
	c.Dir = r.ws
	c.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + r.home,
		"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + r.url,
	}
	return c
}

// lastLines is the end of s, n lines at most.
func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
