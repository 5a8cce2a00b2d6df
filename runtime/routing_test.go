package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/tools"
)

// TestAutoRoutingIsSequenceSticky: with an auto model the classifier (a
// utility call through the same dispatcher) picks the model once per
// prompt; the prompt's tool-call sequence stays on it, and the next prompt
// is routed afresh.
func TestAutoRoutingIsSequenceSticky(t *testing.T) {
	srv := fakegemini.New(t)
	classifier := routing.FlashLite31Model
	srv.EnqueueFor(classifier,
		fakegemini.Text(`{"reasoning": "multi-step debugging", "model_choice": "pro"}`),
		fakegemini.Text(`{"reasoning": "a simple question", "model_choice": "flash"}`),
	)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.Call("lookup", map[string]any{"key": "a"}), fakegemini.Text("pro answer"))
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("flash answer"))
	lookup := &fakeTool{ToolName: "lookup", ToolKind: tools.KindRead}
	s, _, routes := resilient{settings: settingsWith(routing.AliasAutoGemini25, nil), tools: []tools.Tool{lookup}}.start(t, srv)

	evs := run(t, s, "find the bug in the scheduler")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	evs2 := run(t, s, "what time is it?")
	if r := last(evs2).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("second prompt: reason %s", r)
	}
	want := []string{classifier, "gemini-2.5-pro", "gemini-2.5-pro", classifier, "gemini-2.5-flash"}
	reqs := srv.Requests()
	if diff := cmp.Diff(want, models(reqs)); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	// The classifier call is a unary JSON request, not a chat turn.
	if reqs[0].Method != fakegemini.MethodGenerate || reqs[0].Body.GenerationConfig == nil ||
		reqs[0].Body.GenerationConfig.ResponseMIMEType != "application/json" {
		t.Errorf("classifier request = %s %+v", reqs[0].Method, reqs[0].Body.GenerationConfig)
	}
	if diff := cmp.Diff([]string{routing.AliasAutoGemini25, "gemini-2.5-pro"}, sessionModels(evs)); diff != "" {
		t.Errorf("first prompt's session_update models (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{routing.AliasAutoGemini25, "gemini-2.5-flash"}, sessionModels(evs2)); diff != "" {
		t.Errorf("second prompt's session_update models (-want +got):\n%s", diff)
	}
	if routes.Model() != routing.AliasAutoGemini25 {
		t.Errorf("configured model changed to %q", routes.Model())
	}
}

// TestRoutingHonoursTerminalModels: a model already known to be out of
// quota is skipped before any request is made.
func TestRoutingHonoursTerminalModels(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("flash"))
	s, _, routes := resilient{settings: settingsWith("gemini-2.5-pro", promptChain)}.start(t, srv)
	routes.Availability().MarkTerminal("gemini-2.5-pro", routing.ReasonQuota)
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if diff := cmp.Diff([]string{"gemini-2.5-flash"}, models(srv.Requests())); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

// TestAliasReportsTheModelItCalls: a session configured with "flash" by an
// account with preview access reports gemini-3-flash-preview from its
// first session_update, the model routing calls, and never the stable
// Flash another alias table would have named.
func TestAliasReportsTheModelItCalls(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor(routing.PreviewFlashModel, fakegemini.Text("hi"))
	settings := settingsWith(routing.AliasFlash, func(s *config.Settings) { s.Model.PreviewAccess = true })
	s, _, _ := resilient{settings: settings}.start(t, srv)
	evs := run(t, s, "hello")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if diff := cmp.Diff([]string{routing.PreviewFlashModel}, models(srv.Requests())); diff != "" {
		t.Errorf("models called (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{routing.PreviewFlashModel}, sessionModels(evs)); diff != "" {
		t.Errorf("session_update models (-want +got):\n%s", diff)
	}
}
