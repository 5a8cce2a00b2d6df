package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/tools"
)

// engineFor returns a policy over the bundled defaults and the rules of a
// user-tier policy file holding toml.
func engineFor(t *testing.T, mode ApprovalMode, toml string, opts ...PolicyOption) *Policy {
	t.Helper()
	rules := policy.Defaults()
	if toml != "" {
		user, errs := policy.Parse([]byte(toml), policy.TierUser, "test.toml")
		if len(errs) > 0 {
			t.Fatalf("policy file: %v", errs)
		}
		rules = append(rules, user...)
	}
	engine, err := policy.New(rules)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicyWith(mode, engine, append([]PolicyOption{WithTrusted(true)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// remoteAgentTool is an invoke_agent tool with a local agent "near" and a
// remote one "far".
type remoteAgentTool struct{ fakeTool }

func (a *remoteAgentTool) Agents() []AgentInfo {
	return []AgentInfo{{Name: "near"}, {Name: "far", Remote: true}}
}

// trustedTool is a tool of an MCP server with trust: true.
type trustedTool struct{ serverTool }

func (m *trustedTool) MCP() (string, string, bool) { return m.server, m.ToolName, true }

// TestEngineDecisionsThroughScheduler runs one call per row through a
// session whose policy is the engine's: whether a human was asked, whether
// the call ran, and what the model read when it did not.
func TestEngineDecisionsThroughScheduler(t *testing.T) {
	const headlessAsk = ` requires user confirmation, which is not supported in non-interactive mode.`
	shell := func() tools.Tool { return &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute} }
	write := func() tools.Tool {
		return &fakeWriter{fakeTool: fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}}
	}
	read := func() tools.Tool { return &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead} }
	agent := func() tools.Tool {
		return &remoteAgentTool{fakeTool{ToolName: "invoke_agent", ToolKind: tools.KindAgent}}
	}
	trusted := func() tools.Tool {
		return &trustedTool{serverTool{fakeTool: fakeTool{ToolName: "issues", ToolKind: tools.KindOther}, server: "gh"}}
	}
	tests := []struct {
		name        string
		mode        ApprovalMode
		toml        string
		subagent    string // the policy is ForSubagent(subagent)
		tool        func() tools.Tool
		args        map[string]any
		interactive bool
		asked, ran  bool
		msg         string // the model's error, a prefix, when the call did not run
		undeclared  bool   // the tool is not offered: the call is one to an unknown tool
		hint        string // the user's warning, a prefix; "": none
	}{
		{name: "user deny rule with its message", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"npm\"\ndecision = \"deny\"\npriority = 100\ndenyMessage = \"No shell here.\"\n",
			tool: shell, args: map[string]any{"command": "npm test"},
			msg: "Tool execution denied by policy. No shell here.\x00"},
		{name: "tool-wide deny rule: not offered", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 100\ndenyMessage = \"No shell here.\"\n",
			tool: shell, args: map[string]any{"command": "npm test"},
			undeclared: true, msg: `Tool "run_shell_command" not found.` + "\x00"},
		{name: "user deny rule without a human: no hint", mode: ApprovalDefault,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"npm\"\ndecision = \"deny\"\npriority = 100\n" +
				"[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"ls\"\ndecision = \"allow\"\npriority = 90\n",
			tool: shell, args: map[string]any{"command": "npm test"},
			msg: "Tool execution denied by policy.\x00"},
		{name: "default policy without a human: the hint", mode: ApprovalDefault,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"ls\"\ndecision = \"allow\"\npriority = 100\n",
			tool: shell, args: map[string]any{"command": "npm test"},
			msg:  "Tool execution denied by policy.\x00",
			hint: "run_shell_command was refused: To allow it, run with --allowed-tools 'run_shell_command(npm)'"},
		{name: "default policy without a human: not offered, the hint", mode: ApprovalDefault,
			tool: shell, args: map[string]any{"command": "npm test"},
			undeclared: true, msg: `Tool "run_shell_command" not found.` + "\x00",
			hint: "run_shell_command was refused: To allow it, run with --allowed-tools 'run_shell_command(npm)'"},
		{name: "ask rule without a human", mode: ApprovalDefault,
			toml: "[[rule]]\ntoolName = \"read_file\"\ndecision = \"ask_user\"\npriority = 100\n",
			tool: read, args: map[string]any{"file_path": "a"},
			msg:  `Tool execution for "Fake read_file"` + headlessAsk + "\x00",
			hint: "read_file was refused: To allow it, run with --allowed-tools read_file or --approval-mode yolo"},
		{name: "ask rule with a human", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"read_file\"\ndecision = \"ask_user\"\npriority = 100\n",
			tool: read, args: map[string]any{"file_path": "a"}, asked: true, ran: true},
		{name: "user allow rule by command prefix", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"make\"\ndecision = \"allow\"\npriority = 100\n",
			tool: shell, args: map[string]any{"command": "make build"}, ran: true},
		{name: "command outside the prefix asks", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"make\"\ndecision = \"allow\"\npriority = 100\n",
			tool: shell, args: map[string]any{"command": "npm test"}, asked: true, ran: true},
		{name: "plan mode refuses an edit with gemini-cli's message", mode: ApprovalPlan, interactive: true,
			tool: write, args: map[string]any{"file_path": "/w/main.go", "content": "x"},
			msg: "Tool execution denied by policy. You are in Plan Mode"},
		{name: "auto_edit runs an edit", mode: ApprovalAutoEdit, interactive: true,
			tool: write, args: map[string]any{"file_path": "/w/main.go", "content": "x"}, ran: true},
		{name: "protected path asks in auto_edit", mode: ApprovalAutoEdit, interactive: true,
			tool: write, args: map[string]any{"file_path": "/w/.git/config", "content": "x"}, asked: true, ran: true},
		{name: "protected path asks whatever the rules", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"write_file\"\ndecision = \"allow\"\npriority = 100\n",
			tool: write, args: map[string]any{"file_path": "/w/.git/hooks/pre-commit", "content": "x"}, asked: true, ran: true},
		{name: "local agent runs", mode: ApprovalDefault, interactive: true,
			tool: agent, args: map[string]any{"agent_name": "near", "prompt": "p"}, ran: true},
		{name: "remote agent asks", mode: ApprovalDefault, interactive: true,
			tool: agent, args: map[string]any{"agent_name": "far", "prompt": "p"}, asked: true, ran: true},
		{name: "remote agent without a human", mode: ApprovalDefault,
			tool: agent, args: map[string]any{"agent_name": "far", "prompt": "p"},
			msg:  `Tool execution for "Fake invoke_agent"` + headlessAsk + "\x00",
			hint: "invoke_agent was refused: To allow it, run with --allowed-tools invoke_agent"},
		{name: "remote agent in yolo", mode: ApprovalYolo,
			tool: agent, args: map[string]any{"agent_name": "far", "prompt": "p"}, ran: true},
		{name: "a user rule allows the remote agent", mode: ApprovalDefault,
			toml: "[[rule]]\ntoolName = \"invoke_agent\"\ndecision = \"allow\"\npriority = 100\n",
			tool: agent, args: map[string]any{"agent_name": "far", "prompt": "p"}, ran: true},
		{name: "trusted MCP server runs", mode: ApprovalDefault,
			tool: trusted, args: map[string]any{}, ran: true},
		{name: "trusted MCP server in plan mode: not offered", mode: ApprovalPlan, interactive: true,
			tool: trusted, args: map[string]any{}, undeclared: true, msg: `Tool "issues" not found.` + "\x00"},
		// As in gemini-cli, a rule with a subagent key does not keep a
		// tool offered: with a human to ask, the shell is.
		{name: "a subagent's rule holds for it", mode: ApprovalDefault, subagent: "helper", interactive: true,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\nsubagent = \"helper\"\ndecision = \"allow\"\npriority = 100\n",
			tool: shell, args: map[string]any{"command": "npm test"}, ran: true},
		{name: "a subagent's rule does not hold for the main agent", mode: ApprovalDefault, interactive: true,
			toml: "[[rule]]\ntoolName = \"run_shell_command\"\nsubagent = \"helper\"\ndecision = \"allow\"\npriority = 100\n",
			tool: shell, args: map[string]any{"command": "npm test"}, asked: true, ran: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := engineFor(t, tc.mode, tc.toml)
			if tc.subagent != "" {
				p = p.ForSubagent(tc.subagent)
			}
			tool := tc.tool()
			asked := false
			cfg := Config{Tools: []tools.Tool{tool}, Policy: p}
			if tc.interactive {
				cfg.Approver = approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) {
					asked = true
					return ProceedOnce, nil
				})
			}
			b := newScript(callTurn("", fc("c1", tool.Name(), tc.args)), textTurn("done"))
			evs := runGo(t, newTestSession(t, b, cfg))
			if asked != tc.asked {
				t.Errorf("asked = %v, want %v", asked, tc.asked)
			}
			resp := find(evs, EventToolResponse)[0].ToolResponse
			if ran := !resp.IsError; ran != tc.ran {
				t.Fatalf("ran = %v, want %v (%+v)", ran, tc.ran, resp.Content)
			}
			if tc.ran {
				return
			}
			got := resp.Content[0].Text + "\x00"
			if !strings.HasPrefix(got, tc.msg) {
				t.Errorf("the model read %q, want it to start with %q", got, tc.msg)
			}
			wantType := "policy_violation"
			if tc.undeclared {
				wantType = "tool_not_registered"
			}
			if resp.Data["errorType"] != wantType {
				t.Errorf("errorType = %v, want %s", resp.Data["errorType"], wantType)
			}
			var hints []string
			for _, ev := range find(evs, EventError) {
				if ev.Meta["code"] == "POLICY_HINT" {
					hints = append(hints, ev.Error.Message)
				}
			}
			switch {
			case tc.hint == "" && len(hints) > 0:
				t.Errorf("hints %q, want none", hints)
			case tc.hint != "" && (len(hints) != 1 || !strings.HasPrefix(hints[0], tc.hint)):
				t.Errorf("hints %q, want one starting with %q", hints, tc.hint)
			}
		})
	}
}

// run is the package's run with the prompt fixed.
func runGo(t *testing.T, s *Session) []Event { return run(t, s, "go") }

// TestAlwaysAndSave: proceed_always_and_save allows the next calls of the
// session without asking and saves a rule that a new engine, loaded from
// the file as the user tier, applies without a human.
func TestAlwaysAndSave(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "policies", "auto-saved.toml")
	p := engineFor(t, ApprovalDefault, "", WithSaver(policy.NewSaver(saved)))
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	var asked int
	approver := approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) {
		asked++
		return ProceedAlwaysAndSave, nil
	})
	b := newScript(
		callTurn("", fc("c1", "run_shell_command", map[string]any{"command": "npm test"})),
		callTurn("", fc("c2", "run_shell_command", map[string]any{"command": "npm run build"})),
		textTurn("done"))
	evs := runGo(t, newTestSession(t, b, Config{Tools: []tools.Tool{shell}, Policy: p, Approver: approver}))
	if asked != 1 || shell.Calls() != 2 {
		t.Fatalf("asked %d times, %d calls ran; want 1 and 2", asked, shell.Calls())
	}
	if resp := find(evs, EventToolResponse)[0].ToolResponse; resp.Data["decision"] != "auto_accept" {
		t.Errorf("decision = %v, want auto_accept", resp.Data["decision"])
	}
	data, err := os.ReadFile(saved)
	if err != nil || !strings.Contains(string(data), "npm") {
		t.Fatalf("saved file: %q, %v", data, err)
	}
	// A new run, without a human, honours the saved rule.
	rules, errs := policy.LoadPaths([]string{filepath.Dir(saved)}, policy.TierUser)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	engine, err := policy.New(append(policy.Defaults(), rules...))
	if err != nil {
		t.Fatal(err)
	}
	next, err := NewPolicyWith(ApprovalDefault, engine)
	if err != nil {
		t.Fatal(err)
	}
	headless := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	b = newScript(callTurn("", fc("c1", "run_shell_command", map[string]any{"command": "npm test"})), textTurn("done"))
	runGo(t, newTestSession(t, b, Config{Tools: []tools.Tool{headless}, Policy: next}))
	if headless.Calls() != 1 {
		t.Error("the saved rule did not allow the call in a run without a human")
	}
}

// TestAlwaysSaveFailureIsAWarning: a rule that cannot be saved is a
// warning with gemini-cli's text; the session rule still holds.
func TestAlwaysSaveFailureIsAWarning(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The saver's directory would be below a regular file.
	p := engineFor(t, ApprovalDefault, "", WithSaver(policy.NewSaver(filepath.Join(blocker, "policies", "auto-saved.toml"))))
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	var asked int
	approver := approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) {
		asked++
		return ProceedAlwaysAndSave, nil
	})
	b := newScript(
		callTurn("", fc("c1", "run_shell_command", map[string]any{"command": "npm test"})),
		callTurn("", fc("c2", "run_shell_command", map[string]any{"command": "npm test"})),
		textTurn("done"))
	evs := runGo(t, newTestSession(t, b, Config{Tools: []tools.Tool{shell}, Policy: p, Approver: approver}))
	if asked != 1 || shell.Calls() != 2 {
		t.Errorf("asked %d times, %d calls ran; want 1 and 2", asked, shell.Calls())
	}
	var warned bool
	for _, ev := range find(evs, EventError) {
		if strings.HasPrefix(ev.Error.Message, "Failed to persist policy for run_shell_command: ") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no save warning in %v", types(evs))
	}
}

// TestAlwaysOnEditSwitchesToAutoEdit: proceed_always on write_file
// switches the session to auto_edit, as gemini-cli does.
func TestAlwaysOnEditSwitchesToAutoEdit(t *testing.T) {
	for _, tc := range []struct {
		outcome Outcome
		want    ApprovalMode
	}{{ProceedAlways, ApprovalAutoEdit}, {ProceedOnce, ApprovalDefault}} {
		p := engineFor(t, ApprovalDefault, "")
		edit := &fakeWriter{fakeTool: fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}}
		approver := approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) { return tc.outcome, nil })
		b := newScript(callTurn("", fc("c1", "write_file", map[string]any{"file_path": "/w/a.go", "content": "x"})), textTurn("done"))
		s := newTestSession(t, b, Config{Tools: []tools.Tool{edit}, Policy: p, Approver: approver})
		runGo(t, s)
		if got := s.ApprovalMode(); got != tc.want {
			t.Errorf("%s: mode %s, want %s", tc.outcome, got, tc.want)
		}
	}
}

// TestAlwaysOptionsHidden: security.disableAlwaysAllow marks every
// request so that no driver offers the always answers.
func TestAlwaysOptionsHidden(t *testing.T) {
	for _, hide := range []bool{false, true} {
		var opts []PolicyOption
		if hide {
			opts = append(opts, WithoutAlwaysOptions())
		}
		p := engineFor(t, ApprovalDefault, "", opts...)
		var got ApprovalRequest
		approver := approverFunc(func(_ context.Context, r ApprovalRequest) (Outcome, error) {
			got = r
			return ProceedOnce, nil
		})
		shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
		b := newScript(callTurn("", fc("c1", "run_shell_command", map[string]any{"command": "npm test"})), textTurn("done"))
		runGo(t, newTestSession(t, b, Config{Tools: []tools.Tool{shell}, Policy: p, Approver: approver}))
		if got.AlwaysHidden != hide {
			t.Errorf("hidden %v: request's AlwaysHidden = %v", hide, got.AlwaysHidden)
		}
	}
}

// BenchmarkPolicyDecide is one decision through the engine, as the
// scheduler asks it for every call: a read, and a shell line of two
// commands under a user's prefix rule.
func BenchmarkPolicyDecide(b *testing.B) {
	p, err := NewPolicy(ApprovalDefault, []string{"run_shell_command(git)", "run_shell_command(npm)"})
	if err != nil {
		b.Fatal(err)
	}
	read := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead}
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	for _, bc := range []struct {
		name string
		tool tools.Tool
		args map[string]any
	}{
		{"read_file", read, map[string]any{"file_path": "main.go"}},
		{"shell", shell, map[string]any{"command": "git status && npm test"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.decide(bc.tool, bc.args, false)
			}
		})
	}
}
