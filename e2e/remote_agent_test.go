package e2e

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// reviewAgent is a remote A2A agent that reviews whatever it is asked to:
// a working status, an artifact, then completed.
type reviewAgent struct {
	mu      sync.Mutex
	prompts []string
	auth    []string
}

func (a *reviewAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		var text strings.Builder
		for _, p := range ec.Message.Parts {
			text.WriteString(p.Text())
		}
		auth, _ := ec.ServiceParams.Get("Authorization")
		a.mu.Lock()
		a.prompts = append(a.prompts, text.String())
		a.auth = append(a.auth, strings.Join(auth, ","))
		a.mu.Unlock()
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		working := a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("Looks good.")))
		art := a2a.NewArtifactEvent(ec, a2a.NewTextPart("No issues found."))
		art.Artifact.Name = "review"
		_ = yield(working, nil) && yield(art, nil) && yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (a *reviewAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// TestRemoteAgentFromDefinition: a user-level definition of kind remote
// points at an A2A agent's card; a replayed parent delegates to it in yolo
// mode, and its tool result carries the remote agent's answer. The Bearer
// token comes from the environment the definition names.
func TestRemoteAgentFromDefinition(t *testing.T) {
	agent := &reviewAgent{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	mux.Handle("/a2a", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent)))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name: "Reviewer", Description: "Reviews code.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/a2a", a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "review", Name: "Review", Description: "Reviews code.", Tags: []string{"code"}}},
	}))

	e := newEnv(t)
	e.set("AGENTRY_TEST_REVIEW_TOKEN=tok-42")
	e.writeFile(filepath.Join(e.home, ".agentry", "agents", "reviewer.md"), `---
kind: remote
name: reviewer
description: Reviews code changes.
agent_card_url: `+srv.URL+a2asrv.WellKnownAgentCardPath+`
auth:
  type: http
  scheme: Bearer
  token: $AGENTRY_TEST_REVIEW_TOKEN
---
`)
	replay := e.replayFile(
		[]map[string]any{call("invoke_agent", map[string]any{"agent_name": "reviewer", "prompt": "Review the change to main.go"})},
		[]map[string]any{text("The reviewer found no issues.")},
	)
	r := e.run("", "run", "--yolo", "-m", "replay:"+replay, "-o", "stream-json", "-p", "get main.go reviewed")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var outputs []string
	for _, l := range ofType(lines(t, r.stdout), "tool_result") {
		if out, _ := l["output"].(string); l["status"] == "success" {
			outputs = append(outputs, out)
		}
	}
	want := "Subagent 'reviewer' finished.\nTermination Reason: GOAL\nResult:\nLooks good.\n\nArtifact (review):\nNo issues found."
	if !slices.Contains(outputs, want) {
		t.Errorf("tool results %q, want one with %q\nstdout:\n%s\nstderr:\n%s", outputs, want, r.stdout, r.stderr)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if !slices.Equal(agent.prompts, []string{"Review the change to main.go"}) || !slices.Equal(agent.auth, []string{"Bearer tok-42"}) {
		t.Errorf("the remote agent got prompts %q with Authorization %q", agent.prompts, agent.auth)
	}
}
