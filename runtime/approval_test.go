package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/tools"
)

// serverTool is a tool of the MCP server named server, whose name for
// it is the tool's own.
type serverTool struct {
	fakeTool
	server string
}

func (m *serverTool) MCP() (string, string, bool) { return m.server, m.ToolName, false }

func newServerTool(server, name string) *serverTool {
	return &serverTool{fakeTool: fakeTool{ToolName: name, ToolKind: tools.KindOther}, server: server}
}

// TestPolicySetMode: the mode changes the decisions made after it; an
// unknown mode is refused and leaves the mode as it was.
func TestPolicySetMode(t *testing.T) {
	edit := &fakeWriter{fakeTool: fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}}
	args := map[string]any{"file_path": "/w/main.go"}
	p := mustPolicy(t, "default")
	for _, tc := range []struct {
		mode ApprovalMode
		want Decision
	}{
		{ApprovalAutoEdit, Allow}, {ApprovalPlan, Deny}, {ApprovalYolo, Allow}, {ApprovalDefault, Ask},
	} {
		if err := p.SetMode(tc.mode); err != nil {
			t.Fatal(err)
		}
		if got := p.Mode(); got != tc.mode {
			t.Errorf("Mode() = %s after SetMode(%s)", got, tc.mode)
		}
		if got, _ := p.Decide(edit, args); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.mode, got, tc.want)
		}
	}
	err := p.SetMode("reckless")
	if !errors.Is(err, ErrUnknownApprovalMode) || err.Error() != `unknown approval mode "reckless" (want plan, default, auto_edit or yolo)` {
		t.Errorf("SetMode(reckless) = %v", err)
	}
	if p.Mode() != ApprovalDefault {
		t.Errorf("a refused mode changed the mode to %s", p.Mode())
	}
	if _, err := NewPolicy("reckless", nil); !errors.Is(err, ErrUnknownApprovalMode) {
		t.Errorf("NewPolicy(reckless) = %v", err)
	}
}

// TestPolicySetModeRace changes the mode while calls are decided: run
// with -race, it fails on unguarded reads of the mode.
func TestPolicySetModeRace(t *testing.T) {
	p := mustPolicy(t, "default", "run_shell_command(git)")
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	edit := &fakeWriter{fakeTool: fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}}
	modes := []ApprovalMode{ApprovalPlan, ApprovalDefault, ApprovalAutoEdit, ApprovalYolo}
	read := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(3)
		go func() {
			// Decisions that take no lock but the mode's.
			defer wg.Done()
			for range 500 {
				p.Decide(read, nil)
				_ = p.Mode()
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 500 {
				if err := p.SetMode(modes[(g+i)%len(modes)]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 200 {
				p.Decide(edit, map[string]any{"file_path": fmt.Sprintf("/w/%d.go", i)})
				p.Decide(shell, map[string]any{"command": "npm test"})
				p.AllowAlways("run_shell_command", map[string]any{"command": "make"})
				p.AllowServer("docs")
				_ = p.Mode()
			}
		}()
	}
	wg.Wait()
	// Whatever the interleaving, a user's rule holds in every mode.
	if err := p.SetMode(ApprovalPlan); err != nil {
		t.Fatal(err)
	}
	if d, _ := p.Decide(shell, map[string]any{"command": "git status"}); d != Allow {
		t.Errorf("the user's rule in plan mode: %v, want allow", d)
	}
}

// TestPolicySessionRulesFollowMode: an "always" answer holds in the mode
// it was given in and the more permissive ones, as in gemini-cli, not in
// a stricter mode the session switches to; a user's rule holds in all.
func TestPolicySessionRulesFollowMode(t *testing.T) {
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	deploy := &fakeTool{ToolName: "deploy", ToolKind: tools.KindOther}
	docs := newServerTool("docs", "search")
	npm := map[string]any{"command": "npm test"}
	p := mustPolicy(t, "default", "deploy")
	p.AllowAlways("run_shell_command", npm)
	p.AllowServer("docs")
	for _, tc := range []struct {
		mode               ApprovalMode
		npm, deploy, docs_ Decision
	}{
		{ApprovalDefault, Allow, Allow, Allow},
		{ApprovalAutoEdit, Allow, Allow, Allow},
		{ApprovalPlan, Deny, Allow, Deny},
	} {
		if err := p.SetMode(tc.mode); err != nil {
			t.Fatal(err)
		}
		got := []Decision{first(p.Decide(shell, npm)), first(p.Decide(deploy, nil)), first(p.Decide(docs, nil))}
		if want := []Decision{tc.npm, tc.deploy, tc.docs_}; !slices.Equal(got, want) {
			t.Errorf("%s: npm, deploy, docs = %v, want %v", tc.mode, got, want)
		}
	}
	// An answer given in auto_edit does not hold back in default.
	p = mustPolicy(t, "auto_edit")
	p.AllowAlways("run_shell_command", npm)
	if err := p.SetMode(ApprovalDefault); err != nil {
		t.Fatal(err)
	}
	if d, _ := p.Decide(shell, npm); d != Ask {
		t.Errorf("an auto_edit answer in default mode: %v, want ask", d)
	}
}

func first(d Decision, _ string) Decision { return d }

// TestPolicyAllowServer: a server rule allows every tool of that server,
// not another server's, and not a protected path.
func TestPolicyAllowServer(t *testing.T) {
	p := mustPolicy(t, "default")
	a, b, other := newServerTool("gh", "issues"), newServerTool("gh", "pulls"), newServerTool("fs", "read")
	p.AllowServer("gh")
	for tool, want := range map[tools.Tool]Decision{a: Allow, b: Allow, other: Ask} {
		if got, _ := p.Decide(tool, nil); got != want {
			t.Errorf("%s: %v, want %v", tool.Name(), got, want)
		}
	}
	// A built-in tool of the same name is no tool of the server.
	if got, _ := p.Decide(&fakeTool{ToolName: "issues", ToolKind: tools.KindOther}, nil); got != Ask {
		t.Errorf("a tool of no server named like the server's: %v, want ask", got)
	}
}

// TestOutcomeAlwaysVariants runs each "always" answer through the
// scheduler: which later calls it lets run without asking.
func TestOutcomeAlwaysVariants(t *testing.T) {
	tests := []struct {
		outcome Outcome
		calls   []string // tool names, each call's command is "npm test" / "npx x"
		asked   []string
	}{
		// The MCP tool for the session: its own calls run, the server's
		// other tool asks.
		{ProceedAlwaysTool, []string{"issues", "issues", "pulls"}, []string{"issues", "pulls"}},
		// Every tool of the server: only the other server's asks.
		{ProceedAlwaysServer, []string{"issues", "pulls", "read"}, []string{"issues", "read"}},
		// proceed_always keeps its meaning for an MCP tool: the tool.
		{ProceedAlways, []string{"issues", "issues", "pulls"}, []string{"issues", "pulls"}},
		// For the shell, the server and tool answers are proceed_always:
		// the command's first word, not every command.
		{ProceedAlwaysServer, []string{"run_shell_command", "run_shell_command", "run_shell_command:npx"}, []string{"run_shell_command", "run_shell_command:npx"}},
		{ProceedAlwaysTool, []string{"run_shell_command", "run_shell_command", "run_shell_command:npx"}, []string{"run_shell_command", "run_shell_command:npx"}},
		{ProceedOnce, []string{"issues", "issues"}, []string{"issues", "issues"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %v", tc.outcome, tc.calls), func(t *testing.T) {
			var asked []string
			approver := approverFunc(func(_ context.Context, r ApprovalRequest) (Outcome, error) {
				name := r.Tool
				if r.Args["command"] == "npx x" {
					name += ":npx"
				}
				asked = append(asked, name)
				return tc.outcome, nil
			})
			var turns []turn
			for i, c := range tc.calls {
				name, args := c, map[string]any{"command": "npm test"}
				if c == "run_shell_command:npx" {
					name, args = "run_shell_command", map[string]any{"command": "npx x"}
				}
				turns = append(turns, callTurn("", fc(fmt.Sprintf("c%d", i), name, args)))
			}
			b := newScript(append(turns, textTurn("done"))...)
			shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
			ts := []tools.Tool{newServerTool("gh", "issues"), newServerTool("gh", "pulls"), newServerTool("fs", "read"), shell}
			s := newTestSession(t, b, Config{Tools: ts, Approver: approver})
			evs := run(t, s, "go")
			if d := cmp.Diff(tc.asked, asked); d != "" {
				t.Errorf("asked (-want +got):\n%s", d)
			}
			resps := find(evs, EventToolResponse)
			if len(resps) != len(tc.calls) {
				t.Fatalf("%d tool responses, want %d", len(resps), len(tc.calls))
			}
			// The answered call counts as gemini-cli's auto_accept for an
			// "always" answer; a call a session rule allowed proceeds once.
			want := "auto_accept"
			if tc.outcome == ProceedOnce {
				want = "accept"
			}
			for i, r := range resps {
				if r.ToolResponse.IsError {
					t.Errorf("call %d (%s) did not run: %+v", i, r.ToolResponse.Name, r.ToolResponse.Content)
				}
			}
			if got := resps[0].ToolResponse.Data["decision"]; got != want {
				t.Errorf("decision of the answered call = %v, want %s", got, want)
			}
		})
	}
}

// TestSessionApprovalMode: the session's mode is its policy's, and a
// change applies to the next call.
func TestSessionApprovalMode(t *testing.T) {
	edit := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}
	b := newScript(
		callTurn("", fc("a", "write_file", nil)), textTurn("refused"),
		callTurn("", fc("b", "write_file", nil)), textTurn("written"),
	)
	s := newTestSession(t, b, Config{Tools: []tools.Tool{edit}, Policy: mustPolicy(t, "plan")})
	if s.ApprovalMode() != ApprovalPlan {
		t.Fatalf("ApprovalMode() = %s, want plan", s.ApprovalMode())
	}
	run(t, s, "write")
	if edit.Calls() != 0 {
		t.Fatal("plan mode ran an edit")
	}
	if err := s.SetApprovalMode("sideways"); !errors.Is(err, ErrUnknownApprovalMode) {
		t.Errorf("SetApprovalMode(sideways) = %v", err)
	}
	if err := s.SetApprovalMode(ApprovalYolo); err != nil {
		t.Fatal(err)
	}
	if s.ApprovalMode() != ApprovalYolo {
		t.Errorf("ApprovalMode() = %s after SetApprovalMode(yolo)", s.ApprovalMode())
	}
	run(t, s, "write again")
	if edit.Calls() != 1 {
		t.Errorf("after yolo the edit ran %d times, want 1", edit.Calls())
	}
}

// TestSessionToolsAndAgents: Tools names the MCP server of a tool, and
// Agents lists what the agent tools can run.
func TestSessionToolsAndAgents(t *testing.T) {
	lister := &agentTool{fakeTool: fakeTool{ToolName: "invoke_agent", ToolKind: tools.KindAgent},
		agents: []AgentInfo{{Name: "reviewer", Description: "Reviews"}, {Name: "helper", Description: "Helps", Remote: true}}}
	s := newTestSession(t, nil, Config{Tools: []tools.Tool{newServerTool("gh", "issues"), &fakeTool{ToolName: "read_file"}, lister}, Workspace: "/ws"})
	var got []string
	for _, ti := range s.Tools() {
		got = append(got, ti.Name+"@"+ti.MCPServer+"/"+ti.MCPTool)
	}
	if d := cmp.Diff([]string{"invoke_agent@/", "issues@gh/issues", "read_file@/"}, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	want := []AgentInfo{{Name: "helper", Description: "Helps", Remote: true}, {Name: "reviewer", Description: "Reviews"}}
	if d := cmp.Diff(want, s.Agents()); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if s.Workspace() != "/ws" {
		t.Errorf("Workspace() = %q", s.Workspace())
	}
}

type agentTool struct {
	fakeTool
	agents []AgentInfo
}

func (a *agentTool) Agents() []AgentInfo { return a.agents }
