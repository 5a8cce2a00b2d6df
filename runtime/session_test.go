package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

func TestToolLoopEvents(t *testing.T) {
	b := newScript(
		turn{Chunks: append(textTurn("Let me ", "look.").Chunks[:1], callTurn("look.", fc("c1", "echo", map[string]any{"text": "hi"})).Chunks...)},
		textTurn("Done: ", "hi"),
	)
	echo := &fakeTool{ToolName: "echo", ToolKind: tools.KindRead, Run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		c.Output("live output")
		return tools.Result{LLMContent: "echoed hi", Display: "hi"}, nil
	}}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{echo}, Workspace: "/ws"})
	evs := run(t, s, "say hi")

	want := []EventType{
		EventInitialize, EventMessage, EventAgentStart, EventSessionUpdate,
		EventMessage, EventMessage, EventToolRequest, EventUsage, EventToolUpdate, EventToolResponse,
		EventMessage, EventMessage, EventUsage, EventAgentEnd,
	}
	if diff := cmp.Diff(want, types(evs)); diff != "" {
		t.Fatalf("event types (-want +got):\n%s", diff)
	}
	for i, ev := range evs {
		if ev.ID != fmt.Sprintf("%s-%d", ev.StreamID, i) || ev.StreamID != evs[0].StreamID {
			t.Errorf("event %d id %q, stream %q: want <stream>-%d", i, ev.ID, ev.StreamID, i)
		}
	}
	if ini := evs[0].Initialize; ini.SessionID != s.ID() || ini.Workspace != "/ws" || ini.AgentID != "agentry" {
		t.Errorf("initialize = %+v", ini)
	}
	if u := evs[1].Message; u.Role != RoleUser || u.Content[0].Text != "say hi" {
		t.Errorf("user message = %+v", u)
	}
	if m := evs[3].SessionUpdate.Model; m != "gemini-2.5-flash" {
		t.Errorf("session_update model = %q", m)
	}
	// Deltas are messages; the complete response does not repeat them.
	var text []string
	for _, ev := range find(evs, EventMessage)[1:] {
		text = append(text, ev.Message.Content[0].Text)
	}
	if diff := cmp.Diff([]string{"Let me ", "look.", "Done: ", "hi"}, text); diff != "" {
		t.Errorf("agent text (-want +got):\n%s", diff)
	}
	req := find(evs, EventToolRequest)[0].ToolRequest
	if req.RequestID != "c1" || req.Name != "echo" || req.Args["text"] != "hi" || req.Display.Name != "Fake echo" {
		t.Errorf("tool_request = %+v", req)
	}
	if up := find(evs, EventToolUpdate)[0].ToolUpdate; up.RequestID != "c1" || up.Content[0].Text != "live output" {
		t.Errorf("tool_update = %+v", up)
	}
	resp := find(evs, EventToolResponse)[0].ToolResponse
	if resp.RequestID != "c1" || resp.IsError || resp.Content[0].Text != "echoed hi" || resp.Display.Result.Text != "hi" || resp.Data["decision"] != "accept" {
		t.Errorf("tool_response = %+v", resp)
	}
	usage := find(evs, EventUsage)
	if u := usage[1].Usage; u.Model != "gemini-2.5-flash" || *u.InputTokens != 10 || *u.OutputTokens != 3 {
		t.Errorf("usage = %+v", u)
	}
	if end := last(evs).AgentEnd; end.Reason != EndCompleted {
		t.Errorf("agent_end = %+v", end)
	}
	// The second request carried the tool's output back to the model.
	reqs := b.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	frs := functionResponses(reqs[1])
	if len(frs) != 1 || frs[0].ID != "c1" || frs[0].Response["output"] != "echoed hi" {
		t.Errorf("function responses sent back = %+v", frs)
	}
	if echo.Calls() != 1 {
		t.Errorf("tool ran %d times", echo.Calls())
	}
}

func TestSessionUpdateComesBeforeModelOutput(t *testing.T) {
	// The model fails before any output: session_update{model} is already out.
	b := newScript(turn{Err: errors.New("backend down")})
	s := newTestSession(t, b, Config{})
	evs := run(t, s, "hi")
	want := []EventType{EventInitialize, EventMessage, EventAgentStart, EventSessionUpdate, EventError, EventAgentEnd}
	if diff := cmp.Diff(want, types(evs)); diff != "" {
		t.Fatalf("event types (-want +got):\n%s", diff)
	}
	if e := evs[4].Error; !e.Fatal || e.Status != "INTERNAL" || !strings.Contains(e.Message, "backend down") {
		t.Errorf("error = %+v", e)
	}
	if last(evs).AgentEnd.Reason != EndFailed {
		t.Errorf("reason = %s, want failed", last(evs).AgentEnd.Reason)
	}
}

func TestResolveErrorsCarryExitCodes(t *testing.T) {
	tests := []struct {
		err      error
		status   string
		exitCode int
	}{
		{fmt.Errorf("model %q: %w", "gemini-2.5-flash", llm.ErrNoCredentials), "UNAUTHENTICATED", ExitAuth},
		{fmt.Errorf("%w: x.jsonl:3: bad", llm.ErrBadReplayFile), "INVALID_ARGUMENT", ExitConfig},
	}
	for _, tc := range tests {
		s := newTestSession(t, nil, Config{Resolver: fixedResolver{Err: tc.err}})
		evs := run(t, s, "hi")
		errs := find(evs, EventError)
		if len(errs) != 1 || errs[0].Error.Status != tc.status || errs[0].Meta["exitCode"] != tc.exitCode {
			t.Errorf("%v: error events = %+v", tc.err, errs)
		}
		if last(evs).AgentEnd.Reason != EndFailed {
			t.Errorf("%v: reason %s", tc.err, last(evs).AgentEnd.Reason)
		}
	}
}

func TestAPIErrorStatus(t *testing.T) {
	// A 403 is not retried: the one attempt's error is the stream's.
	b := newScript(turn{Err: genai.APIError{Code: 403, Status: "PERMISSION_DENIED", Message: "no access"}})
	s := newTestSession(t, b, Config{})
	evs := run(t, s, "hi")
	e := find(evs, EventError)[0]
	if e.Error.Status != "PERMISSION_DENIED" || e.Meta["status"] != 403 || e.Meta["errorName"] != "ApiError" {
		t.Errorf("error event = %+v meta %v", e.Error, e.Meta)
	}
}

// TestFinishReasons: a finish reason with an answer ends the stream as
// gemini-cli's mapFinishReason says; an answerless one is an invalid
// stream (geminiChat.ts processStreamResponse), retried three times and
// then a fatal INVALID_STREAM error.
func TestFinishReasons(t *testing.T) {
	tests := []struct {
		finish  genai.FinishReason
		parts   []*genai.Part
		reason  EndReason
		invalid string // the error's kind, when the stream is invalid
		shown   bool   // answer text reached the user: no retry
	}{
		{genai.FinishReasonStop, []*genai.Part{{Text: "ok"}}, EndCompleted, "", false},
		{genai.FinishReasonMaxTokens, []*genai.Part{{Text: "trunc"}}, EndMaxBudget, "", false},
		{genai.FinishReasonSafety, []*genai.Part{{Text: "partly"}}, EndRefusal, "", false},
		{genai.FinishReasonSafety, nil, EndFailed, llm.InvalidSafetyBlocked, false},
		{genai.FinishReasonRecitation, nil, EndFailed, llm.InvalidRecitationBlocked, false},
		{genai.FinishReasonMaxTokens, nil, EndFailed, llm.InvalidMaxTokens, false},
		{genai.FinishReasonOther, nil, EndFailed, llm.InvalidOtherBlocked, false},
		{genai.FinishReasonProhibitedContent, nil, EndFailed, llm.InvalidNoResponseText, false},
		{genai.FinishReasonMalformedFunctionCall, nil, EndFailed, llm.InvalidMalformedCall, false},
		{genai.FinishReasonMalformedFunctionCall, []*genai.Part{{Text: "x"}}, EndFailed, llm.InvalidMalformedCall, true},
		{genai.FinishReasonOther, []*genai.Part{{Text: "?"}}, EndFailed, "", false},
		{"", []*genai.Part{{Thought: true, Text: "hmm"}}, EndFailed, llm.InvalidNoFinishReason, false},
		{genai.FinishReasonStop, []*genai.Part{{Thought: true, Text: "hmm"}}, EndFailed, llm.InvalidThinkingOnlyResponse, false},
		{genai.FinishReasonStop, []*genai.Part{{Text: "\u200b<!-- x -->"}}, EndFailed, llm.InvalidNoResponseText, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.finish)+"/"+tc.invalid, func(t *testing.T) {
			var turns []turn
			for range 4 {
				turns = append(turns, turn{Chunks: []*genai.GenerateContentResponse{{Candidates: []*genai.Candidate{{
					Content: &genai.Content{Role: genai.RoleModel, Parts: tc.parts}, FinishReason: tc.finish,
				}}}}})
			}
			b := newScript(turns...)
			tm := &timers{}
			s := newTestSession(t, b, Config{Retry: RetryConfig{NewTimer: tm.New}})
			evs := run(t, s, "hi")
			if r := last(evs).AgentEnd.Reason; r != tc.reason {
				t.Errorf("reason = %s, want %s", r, tc.reason)
			}
			errs := find(evs, EventError)
			if (tc.invalid != "") != (len(errs) == 1) {
				t.Fatalf("error events = %+v, want one: %v", errs, tc.invalid != "")
			}
			if tc.invalid != "" {
				if m := errs[0].Meta; m["code"] != "INVALID_STREAM" || m["errorType"] != tc.invalid || !errs[0].Error.Fatal {
					t.Errorf("error = %+v, meta %v", errs[0].Error, m)
				}
			}
			wantRequests := 1
			if tc.invalid != "" && !tc.shown {
				wantRequests = 4
				if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, tm.Delays()); diff != "" {
					t.Errorf("retry delays (-want +got):\n%s", diff)
				}
			}
			if n := len(b.Requests()); n != wantRequests {
				t.Errorf("%d model requests, want %d", n, wantRequests)
			}
		})
	}
}

// TestSendsRunOneAtATime sends from many goroutines at once: every stream
// runs whole, its events contiguous, in the order its Send was accepted.
func TestSendsRunOneAtATime(t *testing.T) {
	const n = 12
	b := newScript()
	for range n {
		b.Add(callTurn("", fc("", "echo", nil)), textTurn("a", "b"))
	}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{&fakeTool{ToolName: "echo", ToolKind: tools.KindRead}}})
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			id, err := s.Send(t.Context(), TextMessage("go"))
			if err != nil {
				t.Error(err)
				return
			}
			ids <- id
		})
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		collectStream(t, s, id)
	}
	evs := s.Events()
	active := ""
	ended := map[string]bool{}
	for _, ev := range evs {
		if ended[ev.StreamID] {
			t.Fatalf("event %s after its stream ended", ev.ID)
		}
		switch {
		case active == "":
			active = ev.StreamID
		case ev.StreamID != active:
			t.Fatalf("stream %s interleaves with %s at %s", ev.StreamID, active, ev.ID)
		}
		if ev.Type == EventAgentEnd {
			if ev.AgentEnd.Reason != EndCompleted {
				t.Errorf("stream %s ended %s", ev.StreamID, ev.AgentEnd.Reason)
			}
			ended[ev.StreamID] = true
			active = ""
		}
	}
	if len(ended) != n {
		t.Errorf("%d streams ended, want %d", len(ended), n)
	}
	if got := len(find(evs, EventInitialize)); got != 1 {
		t.Errorf("%d initialize events, want 1", got)
	}
}

// TestStreamReplaysFinishedStream: Stream called after a stream has ended
// still yields all of its events, from the first, and nothing else.
func TestStreamReplaysFinishedStream(t *testing.T) {
	b := newScript(textTurn("one"), textTurn("two"))
	s := newTestSession(t, b, Config{})
	ended := make(chan string, 2)
	unsub := s.Subscribe(func(ev Event) {
		if ev.Type == EventAgentEnd {
			ended <- ev.StreamID
		}
	})
	defer unsub()
	first, err := s.Send(t.Context(), TextMessage("a"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Send(t.Context(), TextMessage("b"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			t.Fatal("streams did not end")
		}
	}
	for i, id := range []string{first, second} {
		evs := collectStream(t, s, id)
		want := []EventType{EventMessage, EventAgentStart, EventSessionUpdate, EventMessage, EventUsage, EventAgentEnd}
		if i == 0 {
			want = append([]EventType{EventInitialize}, want...)
		}
		if diff := cmp.Diff(want, types(evs)); diff != "" {
			t.Errorf("stream %d replay (-want +got):\n%s", i, diff)
		}
		for j, ev := range evs {
			if ev.StreamID != id || ev.ID != fmt.Sprintf("%s-%d", id, j) {
				t.Errorf("stream %d event %d: id %q stream %q", i, j, ev.ID, ev.StreamID)
			}
		}
	}
}

func TestAbortMidModelStream(t *testing.T) {
	b := newScript(turn{Chunks: textTurn("partial ").Chunks[:1], Block: true}, textTurn("second answer"))
	s := newTestSession(t, b, Config{})
	evs := abortOnFirstDelta(t, s, "first")
	if r := last(evs).AgentEnd.Reason; r != EndAborted {
		t.Fatalf("reason = %s, want aborted; events %v", r, types(evs))
	}
	if len(find(evs, EventError)) != 0 {
		t.Errorf("an abort is not an error: %v", find(evs, EventError))
	}
	// The session is usable, and the cut-off answer is not in its history.
	evs = run(t, s, "second")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("second stream reason = %s", r)
	}
	second := b.Requests()[1]
	for _, c := range second.Contents {
		for _, p := range c.Parts {
			if strings.Contains(p.Text, "partial") {
				t.Errorf("aborted partial text reached the next request: %+v", c)
			}
		}
	}
}

func TestAbortDuringToolAnswersTheCall(t *testing.T) {
	started := make(chan struct{})
	slow := &fakeTool{ToolName: "slow", ToolKind: tools.KindRead, Run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		close(started)
		<-ctx.Done()
		return tools.Result{}, context.Cause(ctx)
	}}
	b := newScript(callTurn("working", fc("c1", "slow", nil)), textTurn("recovered"))
	s := newTestSession(t, b, Config{Tools: []tools.Tool{slow}})
	id, err := s.Send(t.Context(), TextMessage("go"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		s.Abort(nil)
	}()
	evs := collectStream(t, s, id)
	if r := last(evs).AgentEnd.Reason; r != EndAborted {
		t.Fatalf("reason = %s; events %v", r, types(evs))
	}
	resp := find(evs, EventToolResponse)
	if len(resp) != 1 || !resp[0].ToolResponse.IsError || resp[0].ToolResponse.Data["errorType"] != string(tools.ErrCancelled) {
		t.Fatalf("tool_response after abort = %+v", resp)
	}
	// The next request answers the cut-off call, so Gemini accepts it.
	evs = run(t, s, "again")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("second reason = %s", r)
	}
	requireCallClosed(t, b, 1, "c1")
}

func TestAbortStopsQueuedStreams(t *testing.T) {
	b := newScript(turn{Block: true, Chunks: textTurn("a").Chunks[:0]})
	s := newTestSession(t, b, Config{})
	first, _ := s.Send(t.Context(), TextMessage("one"))
	second, _ := s.Send(t.Context(), TextMessage("two"))
	<-b.Started
	s.Abort(errors.New("user pressed stop"))
	for _, id := range []string{first, second} {
		evs := collectStream(t, s, id)
		if r := last(evs).AgentEnd.Reason; r != EndAborted {
			t.Errorf("stream %s reason = %s", id, r)
		}
	}
	if n := len(b.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (the queued stream must not call the model)", n)
	}
}

func TestMaxTurns(t *testing.T) {
	b := newScript()
	for range 5 {
		b.Add(callTurn("", fc("", "echo", nil)))
	}
	s := newTestSession(t, b, Config{MaxTurns: 2, Tools: []tools.Tool{&fakeTool{ToolName: "echo", ToolKind: tools.KindRead}}})
	evs := run(t, s, "loop")
	end := last(evs).AgentEnd
	if end.Reason != EndMaxTurns || end.Data["code"] != "MAX_TURNS_EXCEEDED" || end.Data["maxTurns"] != 2 || end.Data["turnCount"] != 2 {
		t.Fatalf("agent_end = %+v", end)
	}
	if n := len(b.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}

func TestDeniedCallReachesModelAsError(t *testing.T) {
	edit := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}
	// An argsPattern deny rule keeps write_file offered: the call is
	// decided, and denied with the rule's message.
	p := engineFor(t, ApprovalDefault, "[[rule]]\ntoolName = \"write_file\"\nargsPattern = 'secret'\ndecision = \"deny\"\npriority = 10\ndenyMessage = \"No secrets.\"\n"+
		"[[rule]]\ntoolName = \"write_file\"\ndecision = \"allow\"\npriority = 5\n")
	b := newScript(callTurn("", fc("w1", "write_file", map[string]any{"file_path": "secret"})), textTurn("ok, I cannot"))
	s := newTestSession(t, b, Config{Tools: []tools.Tool{edit}, Policy: p})
	evs := run(t, s, "write")
	if edit.Calls() != 0 {
		t.Fatal("a denied tool ran")
	}
	resp := find(evs, EventToolResponse)[0].ToolResponse
	// gemini-cli's sentence and the rule's message. No one decided:
	// gemini-cli's statistics count no decision for it.
	const wantMsg = `Tool execution denied by policy. No secrets.`
	if !resp.IsError || resp.Content[0].Text != wantMsg || resp.Data["errorType"] != "policy_violation" || resp.Data["decision"] != nil {
		t.Errorf("tool_response = %+v", resp)
	}
	frs := functionResponses(b.Requests()[1])
	if len(frs) != 1 || frs[0].Response["error"] != wantMsg {
		t.Errorf("the model got %+v, want the denial as the call's error", frs)
	}
	if last(evs).AgentEnd.Reason != EndCompleted {
		t.Errorf("a denial does not end the run: %s", last(evs).AgentEnd.Reason)
	}
}

// TestExcludedToolNotOffered: in a run without a human, the default policy
// denies every write_file call, so the model is not offered write_file
// (gemini-cli's getExcludedTools); a call of it gets gemini-cli's "not
// found" with the offered tools as suggestions, and the user, once, what
// would allow it.
func TestExcludedToolNotOffered(t *testing.T) {
	edit := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}
	read := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead}
	b := newScript(
		callTurn("", fc("w1", "write_file", map[string]any{"file_path": "a"}), fc("w2", "write_file", map[string]any{"file_path": "b"})),
		textTurn("ok, I cannot"))
	s := newTestSession(t, b, Config{Tools: []tools.Tool{edit, read}})
	evs := run(t, s, "write")
	if edit.Calls() != 0 {
		t.Fatal("an excluded tool ran")
	}
	for i, req := range b.Requests() {
		if got := declaredNames(req); !slices.Equal(got, []string{"read_file"}) {
			t.Errorf("request %d declares %q, want only read_file", i, got)
		}
	}
	const wantMsg = `Tool "write_file" not found. Did you mean "read_file"?`
	for _, ev := range find(evs, EventToolResponse) {
		resp := ev.ToolResponse
		if !resp.IsError || resp.Content[0].Text != wantMsg || resp.Data["errorType"] != "tool_not_registered" {
			t.Errorf("tool_response = %+v", resp)
		}
	}
	var hints []string
	for _, ev := range find(evs, EventError) {
		if ev.Meta["code"] == "POLICY_HINT" {
			hints = append(hints, ev.Error.Message)
		}
	}
	const wantHint = `write_file was refused: To allow it, run with --allowed-tools write_file or --approval-mode auto_edit, or add "write_file" to tools.allowed in settings.json.`
	if len(hints) != 1 || hints[0] != wantHint {
		t.Errorf("hints %q, want once %q", hints, wantHint)
	}
}

type approverFunc func(context.Context, ApprovalRequest) (Outcome, error)

func (f approverFunc) Approve(ctx context.Context, r ApprovalRequest) (Outcome, error) {
	return f(ctx, r)
}

func TestApproverDecides(t *testing.T) {
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	var asked []string
	approver := approverFunc(func(_ context.Context, r ApprovalRequest) (Outcome, error) {
		asked = append(asked, r.Args["command"].(string))
		if strings.HasPrefix(r.Args["command"].(string), "rm") {
			return Cancel, nil
		}
		return ProceedAlways, nil
	})
	b := newScript(
		callTurn("", fc("a", "run_shell_command", map[string]any{"command": "git status"})),
		callTurn("", fc("b", "run_shell_command", map[string]any{"command": "git status --short"})),
		callTurn("", fc("c", "run_shell_command", map[string]any{"command": "rm -rf x"})),
		textTurn("done"),
	)
	s := newTestSession(t, b, Config{Tools: []tools.Tool{shell}, Approver: approver})
	evs := run(t, s, "go")
	// proceed_always on "git status" allowed the root command "git" after.
	if diff := cmp.Diff([]string{"git status", "rm -rf x"}, asked); diff != "" {
		t.Errorf("approver asked (-want +got):\n%s", diff)
	}
	resps := find(evs, EventToolResponse)
	if resps[0].ToolResponse.Data["decision"] != "auto_accept" || resps[2].ToolResponse.Content[0].Text != "User denied execution." {
		t.Errorf("responses: %+v / %+v", resps[0].ToolResponse, resps[2].ToolResponse)
	}
	if shell.Calls() != 2 {
		t.Errorf("shell ran %d times, want 2", shell.Calls())
	}
}

func TestFatalToolErrorEndsTheRun(t *testing.T) {
	disk := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit, Run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{}, tools.Errorf(tools.ErrNoSpaceLeft, "no space left on device")
	}}
	b := newScript(callTurn("", fc("w", "write_file", nil)))
	s := newTestSession(t, b, Config{Tools: []tools.Tool{disk}, Policy: mustPolicy(t, "yolo")})
	evs := run(t, s, "write")
	errs := find(evs, EventError)
	if len(errs) != 1 || errs[0].Meta["exitCode"] != ExitFatalTool || errs[0].Meta["errorName"] != "FatalToolExecutionError" {
		t.Fatalf("error events = %+v", errs)
	}
	if r := last(evs).AgentEnd.Reason; r != EndFailed {
		t.Errorf("reason = %s", r)
	}
	if n := len(b.Requests()); n != 1 {
		t.Errorf("the model was called %d times after a fatal tool error", n)
	}
}

func mustPolicy(t testing.TB, mode string, allowed ...string) *Policy {
	t.Helper()
	p, err := NewPolicy(ApprovalMode(mode), allowed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUpdateChangesModel(t *testing.T) {
	b := newScript(textTurn("a"))
	s := newTestSession(t, b, Config{})
	if id, err := s.Send(t.Context(), Send{Update: &SessionUpdate{Model: "pro"}}); err != nil || id != "" {
		t.Fatalf("update: %q, %v", id, err)
	}
	evs := run(t, s, "hi")
	if m := find(evs, EventSessionUpdate)[0].SessionUpdate.Model; m != "gemini-2.5-pro" {
		t.Errorf("model = %q, want gemini-2.5-pro", m)
	}
	if got := b.Requests()[0].Model; got != "gemini-2.5-pro" {
		t.Errorf("backend got model %q", got)
	}
	if _, err := s.Send(t.Context(), Send{Update: &SessionUpdate{Model: "gpt-4"}}); !errors.Is(err, ErrInvalidSend) || !errors.Is(err, llm.ErrUnknownModel) {
		t.Errorf("bad model update: err = %v", err)
	}
}

func TestInvalidSends(t *testing.T) {
	s := newTestSession(t, newScript(), Config{})
	for name, p := range map[string]Send{
		"empty":         {},
		"both":          {Message: &SendMessage{Content: []ContentPart{TextPart("x")}}, Update: &SessionUpdate{}},
		"blank message": {Message: &SendMessage{Content: []ContentPart{TextPart("  ")}}},
		"bad part":      {Message: &SendMessage{Content: []ContentPart{{Type: "video"}}}},
	} {
		if _, err := s.Send(t.Context(), p); !errors.Is(err, ErrInvalidSend) {
			t.Errorf("%s: err = %v, want ErrInvalidSend", name, err)
		}
	}
	for _, err := range s.Stream(t.Context(), "nope") {
		if !errors.Is(err, ErrUnknownStream) {
			t.Errorf("unknown stream: err = %v", err)
		}
	}
}

func TestCloseAbortsAndRejects(t *testing.T) {
	b := newScript(turn{Block: true})
	s := newTestSession(t, b, Config{})
	id, _ := s.Send(t.Context(), TextMessage("hang"))
	<-b.Started
	done := make(chan error)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	evs := collectStream(t, s, id)
	if r := last(evs).AgentEnd.Reason; r != EndAborted {
		t.Errorf("reason = %s", r)
	}
	if _, err := s.Send(t.Context(), TextMessage("after")); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
}

// declaredNames are the function declarations' names of a request.
func declaredNames(r modeltest.Request) []string {
	var names []string
	if r.Config == nil {
		return nil
	}
	for _, t := range r.Config.Tools {
		for _, d := range t.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	return names
}
