package subagents

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// childFactory builds child sessions the way FromSettings does, over the
// parent's backend (so a script serves both), with the definition's tools.
func childFactory(t *testing.T, b *script, all []tools.Tool) Factory {
	return func(ctx context.Context, def agents.Definition, id string, extra []tools.Tool, approver runtime.Approver) (Child, error) {
		var ts []tools.Tool
		for _, tl := range all {
			if def.AllowsTool(tl.Name()) {
				ts = append(ts, tl)
			}
		}
		maxTurns := def.MaxTurns
		if maxTurns <= 0 {
			maxTurns = DefaultMaxTurns
		}
		return runtime.New(ctx, runtime.Config{
			SessionID: id, Model: "gemini-2.5-flash", Resolver: fixedResolver{B: b},
			Instruction: def.SystemPrompt + Rules, Tools: append(ts, extra...),
			Approver: approver, MaxTurns: maxTurns, Retry: runtime.RetryConfig{NewTimer: (&timers{}).New},
		})
	}
}

func readerDef(maxTurns int) agents.Definition {
	return agents.Definition{Name: "reader", Kind: agents.KindLocal, Description: "Reads files.",
		SystemPrompt: "You read files.", Tools: []string{"read"}, MaxTurns: maxTurns}
}

func subagentResult(t *testing.T, b *script, id string) string {
	t.Helper()
	out, _ := toolOutput(t, b, id)["output"].(string)
	return out
}

// TestSubagentCompletesTask: the parent hands a task to a child that reads
// a file and calls complete_task; the child's events reach the parent as
// tool_updates with its thread id and the parent gets the result.
func TestSubagentCompletesTask(t *testing.T) {
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "what is in a.go?"})),
		callTurn("", fc("k1", "read", map[string]any{"path": "a.go"})),
		callTurn("", fc("k2", CompleteTaskToolName, map[string]any{"result": "a.go declares package a"})),
		textTurn("The reader says a.go declares package a."),
	)
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	sub := newSubagentTool([]agents.Definition{readerDef(0)}, childFactory(t, b, []tools.Tool{read}), nil)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
	evs := run(t, s, "ask the reader")
	if last(evs).AgentEnd.Reason != runtime.EndCompleted {
		t.Fatalf("parent ended %+v", last(evs).AgentEnd)
	}
	if read.Calls() != 1 {
		t.Errorf("the child's read ran %d times, want 1", read.Calls())
	}
	want := "Subagent 'reader' finished.\nTermination Reason: GOAL\nResult:\na.go declares package a"
	if got := subagentResult(t, b, "p1"); got != want {
		t.Errorf("parent got %q, want %q", got, want)
	}
	var threads int
	for _, ev := range find(evs, runtime.EventToolUpdate) {
		if ev.ToolUpdate.RequestID == "p1" && strings.HasSuffix(ev.ToolUpdate.Data["threadId"].(string), ".reader.p1") {
			threads++
		}
	}
	if threads == 0 {
		t.Error("no tool_update carried the child's events and thread id")
	}
	if len(b.Requests()) != 4 {
		t.Errorf("%d model requests, want 4: complete_task must end the child's loop", len(b.Requests()))
	}
}

// TestSubagentThoughtsForwarded: a child's thoughts reach the parent's
// stream as the text of its tool_updates, as its answer text does.
func TestSubagentThoughtsForwarded(t *testing.T) {
	thinking := callTurn("", fc("k1", CompleteTaskToolName, map[string]any{"result": "done"}))
	thinking.Chunks[0].Candidates[0].Content.Parts = append([]*genai.Part{{Text: "**Plan** read nothing", Thought: true}}, thinking.Chunks[0].Candidates[0].Content.Parts...)
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "think"})),
		thinking,
		textTurn("Thought about."),
	)
	sub := newSubagentTool([]agents.Definition{readerDef(0)}, childFactory(t, b, nil), nil)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
	evs := run(t, s, "ask the reader")
	var texts []string
	for _, ev := range find(evs, runtime.EventToolUpdate) {
		for _, p := range ev.ToolUpdate.Content {
			texts = append(texts, p.Text)
		}
	}
	if !slices.Contains(texts, "**Plan** read nothing") {
		t.Errorf("the child's thought was not forwarded; tool_update texts %q", texts)
	}
}

// TestSubagentWithoutCompleteTask: a child that stops without
// complete_task gets gemini-cli's grace turn, then the parent gets a clear
// failure.
func TestSubagentWithoutCompleteTask(t *testing.T) {
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "read a.go"})),
		textTurn("It looks fine to me."),
		textTurn("Still fine."),
		textTurn("The reader gave up."),
	)
	sub := newSubagentTool([]agents.Definition{readerDef(0)}, childFactory(t, b, nil), nil)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
	run(t, s, "ask the reader")
	got := subagentResult(t, b, "p1")
	if !strings.Contains(got, "Termination Reason: ERROR_NO_COMPLETE_TASK_CALL") ||
		!strings.Contains(got, "Agent stopped calling tools but did not call 'complete_task'.") {
		t.Errorf("parent got %q", got)
	}
	if grace := lastUserText(b.Requests()[2]); !strings.HasPrefix(grace, "You have stopped calling tools without finishing. You have one final chance") {
		t.Errorf("the grace turn was prompted %q", grace)
	}
}

// TestSubagentMaxTurnsThenGrace: a child at its turn limit gets the grace
// turn, in which complete_task still succeeds.
func TestSubagentMaxTurnsThenGrace(t *testing.T) {
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "read everything"})),
		callTurn("", fc("k1", "read", map[string]any{"path": "a"})),
		callTurn("", fc("k2", "read", map[string]any{"path": "b"})),
		callTurn("", fc("k3", CompleteTaskToolName, map[string]any{"result": "read a and b"})),
		textTurn("ok"),
	)
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	sub := newSubagentTool([]agents.Definition{readerDef(2)}, childFactory(t, b, []tools.Tool{read}), nil)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
	run(t, s, "go")
	got := subagentResult(t, b, "p1")
	if !strings.Contains(got, "Termination Reason: GOAL") || !strings.Contains(got, "read a and b") {
		t.Errorf("parent got %q", got)
	}
	if grace := lastUserText(b.Requests()[3]); !strings.HasPrefix(grace, "You have exceeded the maximum number of turns.") {
		t.Errorf("the grace turn was prompted %q", grace)
	}
}

// TestSubagentAbortStopsTheChild: aborting the parent aborts the child's
// running tool call, and the parent's call ends cancelled.
func TestSubagentAbortStopsTheChild(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	slow := &fakeTool{ToolName: "read", ToolKind: tools.KindRead, Run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return tools.Result{}, context.Cause(ctx)
	}}
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "read forever"})),
		callTurn("", fc("k1", "read", map[string]any{"path": "a"})),
	)
	sub := newSubagentTool([]agents.Definition{readerDef(0)}, childFactory(t, b, []tools.Tool{slow}), nil)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
	id, err := s.Send(t.Context(), runtime.TextMessage("go"))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	s.Abort(runtime.ErrAborted)
	select {
	case cause := <-stopped:
		if cause == nil {
			t.Error("the child's tool stopped without a cause")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the child's tool was not stopped by the parent's abort")
	}
	evs := collectStream(t, s, id)
	if last(evs).AgentEnd.Reason != runtime.EndAborted {
		t.Errorf("parent ended %+v, want aborted", last(evs).AgentEnd)
	}
}

// TestSubagentConfirmationReachesParent: a call inside the child that
// needs approval is asked of the parent's approver, naming the agent, and
// the answer goes back into the child.
func TestSubagentConfirmationReachesParent(t *testing.T) {
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "writer", "prompt": "edit a"})),
		callTurn("", fc("k1", "edit", map[string]any{"path": "a"})),
		callTurn("", fc("k2", CompleteTaskToolName, map[string]any{"result": "edited"})),
		textTurn("ok"),
	)
	edit := &fakeTool{ToolName: "edit", ToolKind: tools.KindEdit}
	var asked []string
	approver := approverFunc(func(_ context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
		asked = append(asked, r.DisplayName)
		return runtime.ProceedOnce, nil
	})
	def := agents.Definition{Name: "writer", Kind: agents.KindLocal, Description: "Edits.", SystemPrompt: "You edit.", Tools: []string{"edit"}}
	sub := newSubagentTool([]agents.Definition{def}, childFactory(t, b, []tools.Tool{edit}), approver)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}, Approver: approver})
	run(t, s, "go")
	if len(asked) != 1 || asked[0] != "writer › Fake edit" || edit.Calls() != 1 {
		t.Errorf("asked %q, edit ran %d times; want one question naming the agent, then the edit", asked, edit.Calls())
	}
}

// TestSubagentTimeout: a child still working at its time limit is
// stopped and gets gemini-cli's time-limit grace turn; when that turn
// does not complete the task either, the parent gets the timeout.
func TestSubagentTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace turn
		want  string
	}{
		{"completed in the grace turn", callTurn("", fc("k2", CompleteTaskToolName, map[string]any{"result": "partial answer"})),
			"Termination Reason: GOAL\nResult:\npartial answer"},
		{"not even then", textTurn("sorry"), "Termination Reason: TIMEOUT\nResult:\nAgent timed out after 20ms."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stuck := &fakeTool{ToolName: "read", ToolKind: tools.KindRead, Run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
				<-ctx.Done()
				return tools.Result{}, context.Cause(ctx)
			}}
			b := newScript(
				callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "read forever"})),
				callTurn("", fc("k1", "read", map[string]any{"path": "a"})),
				tc.grace,
				textTurn("ok"),
			)
			sub := newSubagentTool([]agents.Definition{readerDef(0)}, childFactory(t, b, []tools.Tool{stuck}), nil)
			sub.timeout = 20 * time.Millisecond
			s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
			run(t, s, "go")
			if got := subagentResult(t, b, "p1"); !strings.HasSuffix(got, tc.want) {
				t.Errorf("parent got %q, want …%q", got, tc.want)
			}
			if grace := lastUserText(b.Requests()[2]); !strings.HasPrefix(grace, "You have exceeded the time limit. You have one final chance") {
				t.Errorf("the grace turn was prompted %q", grace)
			}
		})
	}
}

// TestSubagentDeadlinePausesForConfirmation: the time a human takes to
// answer a child's confirmation does not count against its limit.
func TestSubagentDeadlinePausesForConfirmation(t *testing.T) {
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "writer", "prompt": "edit a"})),
		callTurn("", fc("k1", "edit", map[string]any{"path": "a"})),
		callTurn("", fc("k2", CompleteTaskToolName, map[string]any{"result": "edited"})),
		textTurn("ok"),
	)
	edit := &fakeTool{ToolName: "edit", ToolKind: tools.KindEdit}
	const limit = 200 * time.Millisecond
	slowHuman := approverFunc(func(context.Context, runtime.ApprovalRequest) (runtime.Outcome, error) {
		time.Sleep(5 * limit) // well past the limit, had it kept running
		return runtime.ProceedOnce, nil
	})
	def := agents.Definition{Name: "writer", Kind: agents.KindLocal, Description: "Edits.", Tools: []string{"edit"}}
	sub := newSubagentTool([]agents.Definition{def}, childFactory(t, b, []tools.Tool{edit}), slowHuman)
	sub.timeout = limit
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}, Approver: slowHuman})
	run(t, s, "go")
	if got := subagentResult(t, b, "p1"); !strings.Contains(got, "Termination Reason: GOAL") || edit.Calls() != 1 {
		t.Errorf("parent got %q, edit ran %d times", got, edit.Calls())
	}
	if n := len(b.Requests()); n != 4 {
		t.Errorf("%d model requests, want 4 (no grace turn)", n)
	}
}

func TestDeadline(t *testing.T) {
	fired := make(chan struct{}, 4)
	var d Deadline
	d.Pause() // before start: the limit starts paused
	d.Start(10*time.Millisecond, func() { fired <- struct{}{} })
	time.Sleep(30 * time.Millisecond)
	select {
	case <-fired:
		t.Fatal("fired while paused")
	default:
	}
	d.Resume()
	<-fired // hang guard: the test's own timeout
	d.Pause()
	d.Resume() // a used-up limit is not armed again
	d.Stop()
	time.Sleep(30 * time.Millisecond)
	if len(fired) != 0 {
		t.Errorf("fired %d more times", len(fired))
	}
}

// TestSubagentMaxTurnsFails: a child at its turn limit that does not
// complete the task in its grace turn either gives the parent gemini-cli's
// max-turns failure.
func TestSubagentMaxTurnsFails(t *testing.T) {
	b := newScript(
		callTurn("", fc("p1", InvokeAgentToolName, map[string]any{"agent_name": "reader", "prompt": "read everything"})),
		callTurn("", fc("k1", "read", map[string]any{"path": "a"})),
		callTurn("", fc("k2", "read", map[string]any{"path": "b"})),
		textTurn("still reading"),
		textTurn("ok"),
	)
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	sub := newSubagentTool([]agents.Definition{readerDef(2)}, childFactory(t, b, []tools.Tool{read}), nil)
	s := newTestSession(t, b, runtime.Config{Tools: []tools.Tool{sub}})
	run(t, s, "go")
	want := "Subagent 'reader' finished.\nTermination Reason: MAX_TURNS\nResult:\nAgent reached max turns limit (2)."
	if got := subagentResult(t, b, "p1"); got != want {
		t.Errorf("parent got %q, want %q", got, want)
	}
	if read.Calls() != 2 {
		t.Errorf("read ran %d times, want 2", read.Calls())
	}
}

// TestToolListsAgents: the tool lists the agents a call can name, sorted,
// remote ones marked; a local definition without a child factory is not
// one of them.
func TestToolListsAgents(t *testing.T) {
	defs := []agents.Definition{
		{Name: "zeta", Kind: agents.KindRemote, Description: "Far away."},
		{Name: "alpha", Kind: agents.KindLocal, Description: "Close by."},
	}
	tool, closeTool := NewTool(ToolConfig{Agents: defs, NewChild: childFactory(t, newScript(), nil)})
	t.Cleanup(func() { closeTool() })
	want := []runtime.AgentInfo{{Name: "alpha", Description: "Close by."}, {Name: "zeta", Description: "Far away.", Remote: true}}
	if d := cmp.Diff(want, tool.(runtime.AgentLister).Agents()); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	remoteOnly, closeRemote := NewTool(ToolConfig{Agents: defs})
	t.Cleanup(func() { closeRemote() })
	if got := remoteOnly.(runtime.AgentLister).Agents(); len(got) != 1 || got[0].Name != "zeta" {
		t.Errorf("without a child factory: %+v, want zeta alone", got)
	}
}

// fakeClock is a Deadline's AfterFunc that records the timers started and
// stopped, and fires only when the test says so.
type fakeClock struct {
	log   []string
	fires []func()
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.log = append(c.log, "start")
	c.fires = append(c.fires, f)
	stopped := false
	return func() bool {
		c.log = append(c.log, "stop")
		was := !stopped
		stopped = true
		return was
	}
}

// editingParent is a parent approver whose human modifies the call.
type editingParent struct {
	asked     []runtime.ApprovalRequest
	clockSeen []string // the clock's log when the parent was asked
	clock     *fakeClock
	executing []string
}

func (p *editingParent) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := p.ApproveEdit(ctx, r)
	return o, err
}

func (p *editingParent) ApproveEdit(_ context.Context, r runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	p.asked = append(p.asked, r)
	p.clockSeen = slices.Clone(p.clock.log)
	return runtime.ProceedOnce, map[string]any{"content": "mine"}, nil
}

func (p *editingParent) Executing(_ context.Context, id string) {
	p.executing = append(p.executing, id)
}

// TestChildApprover: a child's call reaches the parent named with the
// agent, with the child's clock paused while the parent decides; the
// parent's modified arguments and the call's start pass through; without
// a parent the call is declined.
func TestChildApprover(t *testing.T) {
	clock := &fakeClock{}
	d := &Deadline{AfterFunc: clock.AfterFunc}
	d.Start(time.Minute, func() {})
	parent := &editingParent{clock: clock}
	a := ChildApprover(parent, "Writer", d)
	o, args, err := a.ApproveEdit(t.Context(), runtime.ApprovalRequest{CallID: "c1", Tool: "write_file", DisplayName: "WriteFile"})
	if err != nil || o != runtime.ProceedOnce || args["content"] != "mine" {
		t.Errorf("ApproveEdit = %s, %v, %v", o, args, err)
	}
	if len(parent.asked) != 1 || parent.asked[0].DisplayName != "Writer › WriteFile" {
		t.Errorf("parent asked %+v", parent.asked)
	}
	if want := []string{"start", "stop"}; !slices.Equal(parent.clockSeen, want) {
		t.Errorf("clock while the parent decided: %q, want %q", parent.clockSeen, want)
	}
	if want := []string{"start", "stop", "start"}; !slices.Equal(clock.log, want) {
		t.Errorf("clock after: %q, want %q (running again)", clock.log, want)
	}
	a.(runtime.ExecutionObserver).Executing(t.Context(), "c1")
	if !slices.Equal(parent.executing, []string{"c1"}) {
		t.Errorf("executing %q", parent.executing)
	}
	// A parent that cannot edit: Approve's outcome, no arguments.
	plain := ChildApprover(approverFunc(func(_ context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
		return runtime.ProceedAlways, nil
	}), "Writer", nil)
	if o, args, err := plain.ApproveEdit(t.Context(), runtime.ApprovalRequest{}); o != runtime.ProceedAlways || args != nil || err != nil {
		t.Errorf("plain parent: %s, %v, %v", o, args, err)
	}
	if o, err := ChildApprover(nil, "Writer", d).Approve(t.Context(), runtime.ApprovalRequest{}); o != runtime.Cancel || err != nil {
		t.Errorf("no parent: %s, %v", o, err)
	}
}
