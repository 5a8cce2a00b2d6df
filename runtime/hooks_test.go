package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/hooks"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/tools"
)

// hookScript writes an executable sh script and returns the command.
func hookScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hookRunner returns a runner with one command per event.
func hookRunner(t *testing.T, defs map[hooks.Event]hooks.Definition) *hooks.Runner {
	t.Helper()
	st := hooks.Settings{Hooks: map[hooks.Event][]hooks.Definition{}}
	for ev, d := range defs {
		st.Hooks[ev] = []hooks.Definition{d}
	}
	r, err := hooks.New(hooks.Config{Settings: st, ProjectDir: t.TempDir(), SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func cmd(command string) hooks.Definition {
	return hooks.Definition{Hooks: []hooks.Command{{Type: "command", Command: command}}}
}

// toolOutput returns the function response the model got for call id.
func toolOutput(t *testing.T, b *script, id string) map[string]any {
	t.Helper()
	for _, r := range b.Requests() {
		for _, fr := range functionResponses(r) {
			if fr.ID == id {
				return fr.Response
			}
		}
	}
	t.Fatalf("no function response for %s", id)
	return nil
}

func hookWarnings(evs []Event) []string {
	var out []string
	for _, e := range find(evs, EventError) {
		if !e.Error.Fatal {
			out = append(out, e.Error.Message)
		}
	}
	return out
}

func TestHookBeforeToolBlocks(t *testing.T) {
	b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("ok"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeTool: cmd(hookScript(t, `echo "reading is off today" >&2; exit 2`))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Hooks: r})
	run(t, s, "go")
	if read.Calls() != 0 {
		t.Error("a blocked tool ran")
	}
	if got := toolOutput(t, b, "c1"); !strings.Contains(got["error"].(string), "Tool execution blocked: reading is off today") {
		t.Errorf("the model got %v, want gemini-cli's blocked message with the hook's reason", got)
	}
}

func TestHookBeforeToolRewritesInput(t *testing.T) {
	b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a", "n": 1})), textTurn("ok"))
	var got map[string]any
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead, Run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		got = c.Args
		return tools.Result{LLMContent: "read"}, nil
	}}
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeTool: cmd(hookScript(t,
		`echo '{"decision":"allow","hookSpecificOutput":{"tool_input":{"path":"b.go"}}}'`))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Hooks: r})
	run(t, s, "go")
	if got["path"] != "b.go" || got["n"] != float64(1) && got["n"] != 1 {
		t.Errorf("the tool got %v, want path rewritten to b.go and n kept", got)
	}
}

func TestHookAfterToolAddsContext(t *testing.T) {
	b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("ok"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.AfterTool: cmd(hookScript(t,
		`echo '{"hookSpecificOutput":{"additionalContext":"the file is generated <do not edit>"}}'`))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Hooks: r})
	run(t, s, "go")
	out, _ := toolOutput(t, b, "c1")["output"].(string)
	if !strings.HasPrefix(out, "ok read") || !strings.Contains(out, "<hook_context>the file is generated &lt;do not edit&gt;</hook_context>") {
		t.Errorf("the model got %q, want the result then the escaped hook context", out)
	}
}

// TestHookFailuresNeverFailTheRun: a hook that times out, one that
// prints plain text and one that cannot start are reported as warnings,
// and the default decision (allow) lets the tool run.
func TestHookFailuresNeverFailTheRun(t *testing.T) {
	for name, def := range map[string]hooks.Definition{
		"timeout":   {Hooks: []hooks.Command{{Type: "command", Command: hookScript(t, "sleep 30"), Timeout: 300}}},
		"crash":     cmd(hookScript(t, "kill -SEGV $$")),
		"not found": cmd("/nonexistent/hook"),
	} {
		t.Run(name, func(t *testing.T) {
			b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("ok"))
			read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
			s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Hooks: hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeTool: def})})
			evs := run(t, s, "go")
			if read.Calls() != 1 || last(evs).AgentEnd.Reason != EndCompleted {
				t.Fatalf("tool calls %d, end %+v: a failed hook must not stop the run", read.Calls(), last(evs).AgentEnd)
			}
			if w := hookWarnings(evs); len(w) != 1 || !strings.Contains(w[0], "failed") {
				t.Errorf("warnings %q, want one reporting the failed hook", w)
			}
		})
	}
	// Plain text on exit 0 is an allow with a message for the user.
	b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("ok"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Hooks: hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeTool: cmd(hookScript(t, "echo not json"))})})
	evs := run(t, s, "go")
	if read.Calls() != 1 || !slicesContain(hookWarnings(evs), "not json") {
		t.Errorf("tool calls %d, warnings %q; want the tool run and the text shown", read.Calls(), hookWarnings(evs))
	}
}

func slicesContain(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestHooksRunAfterTheProcessorChain: a BeforeModel hook sees the request
// the chain rewrote.
func TestHooksRunAfterTheProcessorChain(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "request.json")
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeModel: cmd(hookScript(t, "cat > "+dump))})
	stamp := stampProcessor{}
	b := newScript(textTurn("ok"))
	s := newTestSession(t, b, Config{Hooks: r, Chain: processors.NewChain(stamp)})
	run(t, s, "go")
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Event      string `json:"hook_event_name"`
		LLMRequest struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		} `json:"llm_request"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Event != "BeforeModel" || in.LLMRequest.Model != "gemini-2.5-flash" {
		t.Fatalf("hook input %s", data)
	}
	var stamped bool
	for _, m := range in.LLMRequest.Messages {
		stamped = stamped || strings.Contains(m.Content, "stamped by the chain")
	}
	if !stamped {
		t.Errorf("the BeforeModel hook did not see the chain's rewrite: %s", data)
	}
}

type stampProcessor struct{}

func (stampProcessor) Name() string { return "stamp" }
func (stampProcessor) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	req.Contents = append(req.Contents, genai.NewContentFromText("stamped by the chain", genai.RoleUser))
	return nil
}

// TestHookBeforeAgentBlocks: the prompt is not run and the stream ends
// with the hook's reason as a warning; the session answers the next one.
func TestHookBeforeAgentBlocks(t *testing.T) {
	b := newScript(textTurn("answered"))
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeAgent: cmd(hookScript(t,
		`grep -q forbidden && { echo '{"decision":"block","reason":"no forbidden prompts"}'; exit 0; }; exit 0`))})
	s := newTestSession(t, b, Config{Hooks: r})
	evs := run(t, s, "something forbidden")
	if len(b.Requests()) != 0 || !slicesContain(hookWarnings(evs), "no forbidden prompts") {
		t.Fatalf("requests %d, warnings %q: want no model call and the reason shown", len(b.Requests()), hookWarnings(evs))
	}
	if evs := run(t, s, "something fine"); last(evs).AgentEnd.Reason != EndCompleted || len(b.Requests()) != 1 {
		t.Fatalf("the next prompt: %+v, %d requests", last(evs).AgentEnd, len(b.Requests()))
	}
}

// TestHookAfterAgentAsksForAnotherTurn: a blocking AfterAgent hook gets
// another turn with its reason as the prompt, then sees
// stop_hook_active and lets the run end.
func TestHookAfterAgentAsksForAnotherTurn(t *testing.T) {
	b := newScript(textTurn("first answer"), textTurn("second answer"))
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.AfterAgent: cmd(hookScript(t,
		`grep -q '"stop_hook_active":true' && exit 0; echo "run the tests too" >&2; exit 2`))})
	s := newTestSession(t, b, Config{Hooks: r})
	evs := run(t, s, "fix it")
	reqs := b.Requests()
	if len(reqs) != 2 || lastUserText(reqs[1]) != "run the tests too" {
		t.Fatalf("%d requests, want a second turn prompted with the hook's reason", len(reqs))
	}
	if last(evs).AgentEnd.Reason != EndCompleted {
		t.Fatalf("ended %+v", last(evs).AgentEnd)
	}
}

// TestHookBeforeToolSelection: the hook's allowed names restrict both the
// declarations the model sees and the tools that can run.
func TestHookBeforeToolSelection(t *testing.T) {
	b := newScript(callTurn("", fc("c1", "write", map[string]any{})), textTurn("ok"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	write := &fakeTool{ToolName: "write", ToolKind: tools.KindRead}
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeToolSelection: cmd(hookScript(t,
		`echo '{"hookSpecificOutput":{"toolConfig":{"mode":"ANY","allowedFunctionNames":["read"]}}}'`))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read, write}, Hooks: r})
	run(t, s, "go")
	var names []string
	for _, tl := range b.Requests()[0].Config.Tools {
		for _, d := range tl.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	if len(names) != 1 || names[0] != "read" {
		t.Errorf("the model was offered %v, want only read", names)
	}
	if write.Calls() != 0 {
		t.Error("a tool the hook filtered out ran")
	}
}

// TestHookNotification: a call that awaits approval fires Notification.
func TestHookNotification(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "notification.json")
	b := newScript(callTurn("", fc("c1", "edit", map[string]any{"path": "a"})), textTurn("ok"))
	edit := &fakeTool{ToolName: "edit", ToolKind: tools.KindEdit}
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.Notification: cmd(hookScript(t, "cat > "+dump))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{edit}, Hooks: r, Approver: approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) { return ProceedOnce, nil })})
	run(t, s, "go")
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("no Notification hook ran: %v", err)
	}
	if !strings.Contains(string(data), `"notification_type":"ToolPermission"`) || !strings.Contains(string(data), `"tool_name":"edit"`) {
		t.Errorf("notification input %s", data)
	}
}

// TestHookAskForcesConfirmation: a read-only call the policy would allow
// goes to the approver when a BeforeTool hook answers ask.
func TestHookAskForcesConfirmation(t *testing.T) {
	b := newScript(callTurn("", fc("c1", "read", map[string]any{"path": "a"})), textTurn("ok"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	var asked int
	approver := approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) { asked++; return Cancel, nil })
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.BeforeTool: cmd(hookScript(t, `echo '{"decision":"ask"}'`))})
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Hooks: r, Approver: approver})
	run(t, s, "go")
	if asked != 1 || read.Calls() != 0 {
		t.Errorf("asked %d times, tool ran %d times; want one question and, denied, no run", asked, read.Calls())
	}
}

// TestHookAfterModelReplacesResponse: an AfterModel hook's llm_response
// replaces what the model said.
func TestHookAfterModelReplacesResponse(t *testing.T) {
	b := newScript(textTurn("the secret is 42"))
	r := hookRunner(t, map[hooks.Event]hooks.Definition{hooks.AfterModel: cmd(hookScript(t,
		`echo '{"hookSpecificOutput":{"llm_response":{"candidates":[{"content":{"role":"model","parts":["[redacted]"]}}]}}}'`))})
	s := newTestSession(t, b, Config{Hooks: r})
	run(t, s, "tell me")
	b.Add(textTurn("ok"))
	run(t, s, "again")
	var history []string
	for _, c := range b.Requests()[1].Contents {
		if c.Role == genai.RoleModel {
			history = append(history, handle.PromptText(c))
		}
	}
	if len(history) != 1 || history[0] != "[redacted]" {
		t.Errorf("the stored model turn is %q, want the hook's replacement", history)
	}
}
