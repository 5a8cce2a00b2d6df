package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// bearer adds a token and the development-tool extension to every call
// of an a2a-go client.
type bearer struct {
	a2aclient.PassthroughInterceptor
	token string
}

func (b bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams["authorization"] = []string{"Bearer " + b.token}
	req.ServiceParams["a2a-extensions"] = []string{devtoolURI}
	return ctx, nil, nil
}

// pendingCall is a tool call a task waits on, as the development-tool
// extension's ToolCall gives it.
type pendingCall struct {
	ID          string `json:"tool_call_id"`
	Status      string `json:"status"`
	Tool        string `json:"tool_name"`
	Description string `json:"description"`
	Output      *struct {
		Text *string `json:"text"`
	} `json:"output"`
	Confirmation *struct {
		Execute *struct {
			Command string `json:"command"`
		} `json:"execute_details"`
	} `json:"confirmation_request"`
}

// turnLog is what a client saw of a task's streamed events.
type turnLog struct {
	task    a2a.TaskID
	context string
	state   a2a.TaskState
	pending []pendingCall // calls that wait for confirmation, in order
	calls   map[string]pendingCall
	text    strings.Builder
}

// follow reads a streamed call's events into log until it ends.
func (log *turnLog) follow(t *testing.T, events func(yield func(a2a.Event, error) bool)) {
	t.Helper()
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		info := ev.TaskInfo()
		if info.TaskID != "" {
			log.task, log.context = info.TaskID, info.ContextID
		}
		switch e := ev.(type) {
		case *a2a.Task:
			log.state = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			log.state = e.Status.State
			if e.Status.Message == nil {
				continue
			}
			kind, _ := e.Metadata[devtoolURI].(map[string]any)["kind"].(string)
			for _, p := range e.Status.Message.Parts {
				switch kind {
				case "TEXT_CONTENT":
					log.text.WriteString(p.Text())
				case "TOOL_CALL_UPDATE":
					b, _ := json.Marshal(p.Data())
					var c pendingCall
					if err := json.Unmarshal(b, &c); err != nil {
						t.Fatalf("tool call %s: %v", b, err)
					}
					log.calls[c.ID] = c
					if c.Status == "PENDING" && c.Confirmation != nil {
						log.pending = append(log.pending, c)
					}
				}
			}
		}
	}
}

// TestRemoteAgentLiveConfirmation: a parent `agentry serve` delegates to a
// remote subagent that is another `agentry serve`, reached over
// SendLiveMessage (the child's card declares bidiStreaming). The child's
// model runs a shell command that needs approval: the confirmation reaches
// the parent's A2A client as the parent's own pending call, named with the
// agent; the client's answer resumes the child, the command runs in the
// child's workspace, and the parent's model gets the child's answer.
func TestRemoteAgentLiveConfirmation(t *testing.T) {
	const childToken, parentToken = "e2e-child-token-0123456789abcdef", "e2e-parent-token-0123456789abcdef"
	model := fakegemini.New(t)
	model.Enqueue(
		fakegemini.Stream(genai.NewPartFromText("I'll run the check."),
			genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": "echo from-child > proof.txt"})),
		fakegemini.Text("The check ran; ", "proof.txt is written."),
	)
	child := newEnv(t)
	child.geminiEnv(model)
	child.set("AGENTRY_A2A_TOKEN=" + childToken)
	childSrv := child.serve("--port", "0", "-w", child.ws, "-m", "gemini-2.5-flash")

	parent := newEnv(t)
	parent.set("AGENTRY_A2A_TOKEN="+parentToken, "AGENTRY_TEST_CHILD_TOKEN="+childToken)
	parent.writeFile(filepath.Join(parent.home, ".agentry", "agents", "checker.md"), `---
kind: remote
name: checker
description: Runs checks in its own workspace.
agent_card_url: `+childSrv.url+`/.well-known/agent-card.json
auth:
  type: http
  scheme: Bearer
  token: $AGENTRY_TEST_CHILD_TOKEN
---
`)
	parentReplay := parent.replayFile(
		[]map[string]any{call("invoke_agent", map[string]any{"agent_name": "checker", "prompt": "Run the check."})},
		[]map[string]any{text("The checker is done.")},
	)
	parentSrv := parent.serve("--port", "0", "-w", parent.ws, "-m", "replay:"+parentReplay)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, parentSrv.url)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithCallInterceptors(bearer{token: parentToken}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	log := &turnLog{calls: map[string]pendingCall{}}
	log.follow(t, client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("get the check run"))}))
	answer := func(want string) pendingCall {
		t.Helper()
		if log.state != a2a.TaskStateInputRequired || len(log.pending) == 0 {
			t.Fatalf("the parent's task is %s with calls pending %+v, want one waiting for %s\nparent:\n%s\nchild:\n%s",
				log.state, log.pending, want, parentSrv.errText(), childSrv.errText())
		}
		c := log.pending[0]
		log.pending = log.pending[1:]
		if c.Tool != want {
			t.Fatalf("the parent's task waits on %+v, want %s", c, want)
		}
		msg := a2a.NewMessageForTask(a2a.MessageRoleUser, a2a.TaskInfo{TaskID: log.task, ContextID: log.context},
			a2a.NewDataPart(map[string]any{"tool_call_id": c.ID, "selected_option_id": "proceed_once"}))
		log.follow(t, client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}))
		return c
	}
	// The parent asks before the task leaves the machine, then the child
	// asks about its command through the parent.
	invoke := answer("invoke_agent")
	shell := answer("run_shell_command")
	if shell.Confirmation.Execute == nil || shell.Confirmation.Execute.Command != "echo from-child > proof.txt" ||
		!strings.HasPrefix(shell.Description, "checker › ") {
		t.Errorf("the child's call as the parent's client saw it: %+v (execute %+v)", shell, shell.Confirmation.Execute)
	}
	if log.state != a2a.TaskStateCompleted {
		t.Fatalf("the parent's task ended %s\nparent:\n%s\nchild:\n%s", log.state, parentSrv.errText(), childSrv.errText())
	}
	if b, err := os.ReadFile(filepath.Join(child.ws, "proof.txt")); err != nil || string(b) != "from-child\n" {
		t.Errorf("the child's workspace has proof.txt %q (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(parent.ws, "proof.txt")); err == nil {
		t.Error("the command ran in the parent's workspace")
	}
	// The child's model got the command's result, not a refusal.
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child's model was called %d times, want 2", len(reqs))
	}
	var ran bool
	for _, c := range reqs[1].Body.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && fr.Name == "run_shell_command" {
				b, _ := json.Marshal(fr.Response)
				ran = !strings.Contains(string(b), "denied") && !strings.Contains(string(b), "error")
			}
		}
	}
	if !ran {
		t.Errorf("the child's model did not get the command's result: %+v", reqs[1].Body.Contents)
	}
	inv := log.calls[invoke.ID]
	var out string
	if inv.Output != nil && inv.Output.Text != nil {
		out = *inv.Output.Text
	}
	want := "Subagent 'checker' finished.\nTermination Reason: GOAL\nResult:\nI'll run the check.\n\nThe check ran; proof.txt is written."
	if inv.Status != "SUCCEEDED" || out != want {
		t.Errorf("invoke_agent ended %s with %q, want %q", inv.Status, out, want)
	}
	if got := log.text.String(); !strings.Contains(got, "The checker is done.") {
		t.Errorf("the parent's answer: %q", got)
	}
}
