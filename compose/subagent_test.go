package compose

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/subagents"
)

// TestSubagentAbortKillsChildShell: a session built from settings hands a
// task to a local agent whose real shell command runs a long sleep;
// aborting the parent kills the command's whole process group, the
// parent's stream ends aborted, and the parent takes the next prompt.
func TestSubagentAbortKillsChildShell(t *testing.T) {
	s := childTestSettings(t, config.Defaults())
	s.General.DefaultApprovalMode = config.ApprovalYolo
	b := newScript(
		callTurn("", fc("p1", subagents.InvokeAgentToolName, map[string]any{"agent_name": "runner", "prompt": "sleep"})),
		callTurn("", fc("k1", "run_shell_command", map[string]any{"command": "sleep 300 & echo $! > sleep.pid; wait"})),
		textTurn("back"),
	)
	def := agents.Definition{Name: "runner", Kind: agents.KindLocal, Description: "Runs commands.", Tools: []string{"run_shell_command"}}
	parent, err := FromSettings(t.Context(), &s, Options{Resolver: fixedResolver{B: b}, Agents: []agents.Definition{def},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close() })
	id, err := parent.Send(t.Context(), runtime.TextMessage("go"))
	if err != nil {
		t.Fatal(err)
	}
	pid := runningPID(t, filepath.Join(s.Workspace, "sleep.pid"))
	parent.Abort(nil)
	evs := collectStream(t, parent, id)
	if r := last(evs).AgentEnd.Reason; r != runtime.EndAborted {
		t.Fatalf("parent ended %s; events %v", r, types(evs))
	}
	proctest.Eventually(t, "the child's sleep to die", func() bool { return !proctest.Running(pid) })
	resp := find(evs, runtime.EventToolResponse)
	if len(resp) != 1 || resp[0].ToolResponse.RequestID != "p1" || !resp[0].ToolResponse.IsError {
		t.Fatalf("the parent's invoke_agent answer: %+v", resp)
	}
	if evs := run(t, parent, "and now?"); last(evs).AgentEnd.Reason != runtime.EndCompleted {
		t.Fatalf("next prompt ended %+v", last(evs).AgentEnd)
	}
}

// TestSubagentFromSettings: a session built from settings gives a local
// agent its definition's prompt with the subagent rules, only the tools
// it allows plus complete_task, and gemini-cli's sampling for markdown
// agents (its temperature, topP 0.95); the parent's calls keep theirs.
func TestSubagentFromSettings(t *testing.T) {
	s := childTestSettings(t, config.Defaults())
	b := newScript(
		callTurn("", fc("p1", subagents.InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "look"})),
		callTurn("", fc("k1", subagents.CompleteTaskToolName, map[string]any{"result": "seen"})),
		textTurn("done"),
	)
	temp := 0.25
	def := agents.Definition{Name: "reader", Kind: agents.KindLocal, Description: "Reads.", SystemPrompt: "You are the reader.",
		Tools: []string{"read_file", "glob"}, Temperature: &temp}
	parent, err := FromSettings(t.Context(), &s, Options{Resolver: fixedResolver{B: b}, Agents: []agents.Definition{def},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close() })
	run(t, parent, "go")
	reqs := b.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	child := reqs[1].Config
	if child.Temperature == nil || *child.Temperature != 0.25 || child.TopP == nil || *child.TopP != 0.95 {
		t.Errorf("child sampling: temperature %v topP %v", child.Temperature, child.TopP)
	}
	if p := reqs[0].Config; p.Temperature != nil && *p.Temperature == 0.25 {
		t.Error("the parent's call got the child's temperature")
	}
	var names []string
	for _, tl := range child.Tools {
		for _, d := range tl.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"complete_task", "glob", "read_file"}; !slices.Equal(names, want) {
		t.Errorf("child tools %v, want %v", names, want)
	}
	sys := ""
	for _, p := range child.SystemInstruction.Parts {
		sys += p.Text
	}
	if !strings.HasPrefix(sys, "You are the reader.") || !strings.Contains(sys, "you MUST call the `complete_task` tool") {
		t.Errorf("child system prompt:\n%s", sys)
	}
}

// TestSubagentSharesAvailability: parent and child share one model
// availability. The child finds Pro out of daily quota and falls back to
// Flash; the parent's next call goes straight to Flash, without trying Pro
// again.
func TestSubagentSharesAvailability(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro",
		fakegemini.Call(subagents.InvokeAgentToolName, map[string]any{"agent_name": "helper", "prompt": "help"}), // parent
		fakegemini.RateLimitPerDay(), // child
	)
	srv.EnqueueFor("gemini-2.5-flash",
		fakegemini.Call(subagents.CompleteTaskToolName, map[string]any{"result": "helped"}), // child, after its fallback
		fakegemini.Text("thanks"), // parent
	)
	s := childTestSettings(t, settingsWith("gemini-2.5-pro", silentChain))
	s.Credentials.GeminiAPIKey = fakegemini.DefaultAPIKey
	s.Gemini.BaseURL = srv.URL
	def := agents.Definition{Name: "helper", Kind: agents.KindLocal, Description: "Helps."}
	parent, err := FromSettings(t.Context(), &s, Options{Agents: []agents.Definition{def}, Logger: slog.New(slog.DiscardHandler),
		Retry: runtime.RetryConfig{NewTimer: (&timers{}).New}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close() })
	evs := run(t, parent, "go")
	if last(evs).AgentEnd.Reason != runtime.EndCompleted {
		t.Fatalf("parent ended %+v", last(evs).AgentEnd)
	}
	var models []string
	for _, r := range srv.Requests() {
		models = append(models, r.Model)
	}
	want := []string{"gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash"}
	if !slices.Equal(models, want) {
		t.Errorf("requests went to %v, want %v", models, want)
	}
}

// TestRemoteAgentsNeedAnInvoker: a session built without
// Options.RemoteAgents cannot reach remote agents, so it leaves their
// definitions out of invoke_agent, with a warning naming each, and keeps
// the local ones.
func TestRemoteAgentsNeedAnInvoker(t *testing.T) {
	s := childTestSettings(t, config.Defaults())
	var logs bytes.Buffer
	remoteDef := agents.Definition{Name: "helper", Kind: agents.KindRemote, Description: "Answers.", AgentCardURL: "http://127.0.0.1:1/card"}
	defs := []agents.Definition{remoteDef, readerDef(0)}
	parent, err := FromSettings(t.Context(), &s, Options{Resolver: fixedResolver{B: newScript()}, Agents: defs,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close() })
	var decl string
	for _, tl := range parent.Tools() {
		if tl.Name == subagents.InvokeAgentToolName {
			decl = tl.Description
		}
	}
	if !strings.Contains(decl, "- reader:") || strings.Contains(decl, "helper") {
		t.Errorf("invoke_agent offers:\n%s\nwant the local agent only", decl)
	}
	if !strings.Contains(logs.String(), "remote agent left out") || !strings.Contains(logs.String(), "agent=helper") {
		t.Errorf("logs %q, want a warning naming the remote agent", logs.String())
	}
}

// TestSubagentFollowsApprovalMode: a child session runs in the approval
// mode its parent is in when the child starts, not the settings' mode:
// after the parent switches to yolo, the child's write runs without a
// human; after it switches to plan, the child's write is refused.
func TestSubagentFollowsApprovalMode(t *testing.T) {
	for _, tc := range []struct {
		settings, switchTo string
		written            bool
	}{
		{config.ApprovalDefault, "yolo", true},
		{config.ApprovalYolo, "plan", false},
		{config.ApprovalYolo, "", true},
	} {
		t.Run(tc.settings+"→"+tc.switchTo, func(t *testing.T) {
			s := childTestSettings(t, config.Defaults())
			s.General.DefaultApprovalMode = tc.settings
			b := newScript(
				callTurn("", fc("p1", subagents.InvokeAgentToolName, map[string]any{"agent_name": "writer", "prompt": "write"})),
				callTurn("", fc("w1", "write_file", map[string]any{"file_path": "out.txt", "content": "hi\n"})),
				callTurn("", fc("k1", subagents.CompleteTaskToolName, map[string]any{"result": "done"})),
				textTurn("back"),
			)
			def := agents.Definition{Name: "writer", Kind: agents.KindLocal, Description: "Writes.", Tools: []string{"write_file"}}
			parent, err := FromSettings(t.Context(), &s, Options{Resolver: fixedResolver{B: b}, Agents: []agents.Definition{def},
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { parent.Close() })
			if tc.switchTo != "" {
				if err := parent.SetApprovalMode(runtime.ApprovalMode(tc.switchTo)); err != nil {
					t.Fatal(err)
				}
			}
			run(t, parent, "go")
			_, err = os.Stat(filepath.Join(s.Workspace, "out.txt"))
			if written := err == nil; written != tc.written {
				t.Errorf("the child's write ran: %v, want %v", written, tc.written)
			}
		})
	}
}
