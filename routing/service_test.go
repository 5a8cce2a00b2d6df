package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/llm"
)

var (
	errTerminal  = &llm.TerminalQuotaError{Message: "daily quota"}
	errTransient = &llm.RetryableQuotaError{Message: "slow down"}
	errNotFound  = &llm.ModelNotFoundError{Message: "no such model"}
	errOther     = errors.New("connection reset")
)

// chainOf builds a user chain; the last model is the last resort, and
// every action is act.
func chainOf(act Action, models ...string) Chain {
	c := make(Chain, len(models))
	for i, m := range models {
		c[i] = Policy{Model: m, LastResort: i == len(models)-1}
		if act != "" {
			c[i].Actions = map[FailureKind]Action{FailureTerminal: act, FailureTransient: act, FailureNotFound: act, FailureUnknown: act}
		}
	}
	return c
}

func newTestService(t *testing.T, cfg ServiceConfig, chains ...Chain) *Service {
	t.Helper()
	cat, err := NewCatalog(CatalogConfig{Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Catalog = cat
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.Router == nil {
		// No classifier calls in these tests: override then default.
		cfg.Router = NewRouter(FallbackStrategy(), OverrideStrategy(), DefaultStrategy())
	}
	s, err := NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHandleFallback covers every branch of gemini-cli's handleFallback.
func TestHandleFallback(t *testing.T) {
	const pro, flash, lite = "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"
	tests := []struct {
		name       string
		chain      Chain
		configured string
		active     string // set by a selection before the failure
		down       []string
		failed     string
		err        error
		handler    Intent // "" = no handler
		handlerErr error
		plan       bool

		want       Fallback
		wantAsked  bool
		wantModel  string // the session's configured model afterwards
		wantHealth map[string]Status
	}{
		{
			name: "silent policy falls back and switches the session", chain: chainOf(ActionSilent, pro, flash),
			configured: pro, active: pro, failed: pro, err: errTerminal,
			want:      Fallback{Retry: true, Intent: IntentRetryAlways, Failed: pro, Model: flash, Kind: FailureTerminal},
			wantModel: flash, wantHealth: map[string]Status{pro: StatusTerminal, flash: StatusHealthy},
		},
		{
			name: "prompt policy without a handler gives up and leaves state", chain: chainOf("", pro, flash),
			configured: pro, active: pro, failed: pro, err: errTerminal,
			want:      Fallback{Failed: pro, Kind: FailureTerminal},
			wantModel: pro, wantHealth: map[string]Status{pro: StatusHealthy},
		},
		{
			name: "plan mode makes a prompt policy silent", chain: chainOf("", pro, flash), plan: true,
			configured: pro, active: pro, failed: pro, err: errTransient,
			want:      Fallback{Retry: true, Intent: IntentRetryAlways, Failed: pro, Model: flash, Kind: FailureTransient},
			wantModel: flash, wantHealth: map[string]Status{pro: StatusTerminal},
		},
		{
			name: "handler retry_once keeps the session's model", chain: chainOf("", pro, flash), handler: IntentRetryOnce,
			configured: pro, active: pro, failed: pro, err: errTerminal, wantAsked: true,
			want:      Fallback{Retry: true, Intent: IntentRetryOnce, Failed: pro, Model: flash, Kind: FailureTerminal},
			wantModel: pro, wantHealth: map[string]Status{pro: StatusTerminal},
		},
		{
			name: "handler retry_with_credits leaves availability", chain: chainOf("", pro, flash), handler: IntentRetryWithCredits,
			configured: pro, active: pro, failed: pro, err: errTerminal, wantAsked: true,
			want:      Fallback{Retry: true, Intent: IntentRetryWithCredits, Failed: pro, Model: flash, Kind: FailureTerminal},
			wantModel: pro, wantHealth: map[string]Status{pro: StatusHealthy},
		},
		{
			name: "handler stop", chain: chainOf("", pro, flash), handler: IntentStop,
			configured: pro, active: pro, failed: pro, err: errTerminal, wantAsked: true,
			want:      Fallback{Intent: IntentStop, Failed: pro, Model: flash, Kind: FailureTerminal},
			wantModel: pro, wantHealth: map[string]Status{pro: StatusHealthy},
		},
		{
			name: "handler error gives up", chain: chainOf("", pro, flash), handlerErr: errors.New("dialog closed"),
			configured: pro, active: pro, failed: pro, err: errTerminal, wantAsked: true,
			want:      Fallback{Failed: pro, Kind: FailureTerminal},
			wantModel: pro, wantHealth: map[string]Status{pro: StatusHealthy},
		},
		{
			name: "handler's unknown intent gives up", chain: chainOf("", pro, flash), handler: Intent("maybe"),
			configured: pro, active: pro, failed: pro, err: errTerminal, wantAsked: true,
			want:      Fallback{Failed: pro, Model: flash, Kind: FailureTerminal},
			wantModel: pro, wantHealth: map[string]Status{pro: StatusHealthy},
		},
		{
			name: "every candidate down: the last resort is chosen", chain: chainOf(ActionSilent, pro, lite, flash),
			configured: pro, active: pro, down: []string{lite, flash}, failed: pro, err: errNotFound,
			want:      Fallback{Retry: true, Intent: IntentRetryAlways, Failed: pro, Model: flash, Kind: FailureNotFound},
			wantModel: flash,
		},
		{
			name: "the last model failing has no candidate", chain: chainOf(ActionSilent, pro, flash),
			configured: flash, active: flash, down: []string{pro}, failed: flash, err: errTerminal,
			want:      Fallback{Failed: flash, Kind: FailureTerminal},
			wantModel: flash, wantHealth: map[string]Status{flash: StatusHealthy},
		},
		{
			name: "a single chain asks the handler with the failed model", configured: "openai:llama", active: "openai:llama",
			handler: IntentRetryLater, failed: "openai:llama", err: errOther, wantAsked: true,
			want:      Fallback{Intent: IntentRetryLater, Failed: "openai:llama", Model: "openai:llama", Kind: FailureUnknown},
			wantModel: "openai:llama",
		},
		{
			name: "a failed utility model falls back to the active model", configured: pro, active: pro,
			failed: "openai:classifier", err: errTransient,
			want:      Fallback{Retry: true, Intent: IntentRetryAlways, Failed: "openai:classifier", Model: pro, Kind: FailureTransient},
			wantModel: pro,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chains []Chain
			if tt.chain != nil {
				chains = append(chains, tt.chain)
			}
			mode := "default"
			if tt.plan {
				mode = "plan"
			}
			asked := false
			cfg := ServiceConfig{Model: tt.configured, ApprovalMode: mode}
			if tt.handler != "" || tt.handlerErr != nil {
				cfg.Handler = func(_ context.Context, q FallbackQuestion) (Intent, error) {
					asked = true
					if q.Failed != tt.failed || q.Kind != tt.want.Kind || q.Err != tt.err {
						t.Errorf("question = %+v", q)
					}
					return tt.handler, tt.handlerErr
				}
			}
			s := newTestService(t, cfg, chains...)
			for _, m := range tt.down {
				s.Availability().MarkTerminal(m, ReasonQuota)
			}
			s.active = tt.active
			got := s.HandleFallback(t.Context(), tt.failed, tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fallback (-want +got):\n%s", diff)
			}
			if asked != tt.wantAsked {
				t.Errorf("handler asked = %v", asked)
			}
			if m := s.Model(); m != tt.wantModel {
				t.Errorf("model = %q, want %q", m, tt.wantModel)
			}
			for m, st := range tt.wantHealth {
				if h := s.Availability().Health(m); h.Status != st {
					t.Errorf("%s: %+v, want %s", m, h, st)
				}
			}
		})
	}
}

// TestFallbackOverrides: a failed utility model is routed to the fallback
// from then on, and older overrides pointing at it are re-pointed.
func TestFallbackOverrides(t *testing.T) {
	s := newTestService(t, ServiceConfig{Model: "gemini-2.5-pro"})
	s.active = "gemini-2.5-pro"
	s.activateFallbackMode("gemini-2.5-pro", "A")
	s.activateFallbackMode("C", "gemini-2.5-pro")
	if diff := cmp.Diff(map[string]string{"A": "C", "gemini-2.5-pro": "C"}, s.overrides); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	req := &model.LLMRequest{Model: "A"}
	if sel := s.Select(req); sel.Model != "C" || req.Model != "C" {
		t.Errorf("selection = %+v, req.Model %q", sel, req.Model)
	}
}

// TestRouteSequence: the sequence's model is kept within a prompt, routed
// afresh for a new prompt, and forgotten on a model change or an approval
// mode change into or out of plan or yolo.
func TestRouteSequence(t *testing.T) {
	s := newTestService(t, ServiceConfig{Model: "gemini-2.5-pro"}, chainOf(ActionSilent, "gemini-2.5-pro", "gemini-2.5-flash"))
	route := func(prompt string) Routed {
		return s.Route(t.Context(), &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}}, prompt)
	}
	if r := route("p1"); r.Decision == nil || r.Model != "gemini-2.5-pro" {
		t.Fatalf("first call: %+v", r)
	}
	if r := route("p1"); r.Decision != nil || r.Model != "gemini-2.5-pro" {
		t.Errorf("same prompt was routed again: %+v", r)
	}
	// Pro goes down mid-sequence: the sticky model is re-selected through
	// availability, as applyModelSelection does.
	s.Availability().MarkTerminal("gemini-2.5-pro", ReasonCapacity)
	if r := route("p1"); r.Decision != nil || r.Model != "gemini-2.5-flash" {
		t.Errorf("after pro went down: %+v", r)
	}
	if r := route("p2"); r.Decision == nil {
		t.Errorf("a new prompt was not routed: %+v", r)
	}
	s.SetApprovalMode("auto_edit")
	if r := route("p2"); r.Decision != nil {
		t.Errorf("default → auto_edit ended the sequence: %+v", r)
	}
	s.SetApprovalMode("plan")
	if r := route("p2"); r.Decision == nil {
		t.Errorf("entering plan mode kept the sequence: %+v", r)
	}
	s.SetModel("gemini-2.5-flash")
	if ok, _ := s.Availability().Available("gemini-2.5-pro"); !ok {
		t.Error("SetModel did not reset availability")
	}
	if r := route("p2"); r.Decision == nil || r.Model != "gemini-2.5-flash" {
		t.Errorf("after SetModel: %+v", r)
	}
}

// TestRouteResetsStickyEachTurn: a sticky_retry model is usable once per
// turn; every routed call is a new turn.
func TestRouteResetsStickyEachTurn(t *testing.T) {
	s := newTestService(t, ServiceConfig{Model: "gemini-2.5-pro"}, chainOf(ActionSilent, "gemini-2.5-pro", "gemini-2.5-flash"))
	a := s.Availability()
	a.MarkRetryOncePerTurn("gemini-2.5-pro", 3)
	a.ConsumeStickyAttempt("gemini-2.5-pro")
	req := &model.LLMRequest{}
	r := s.Route(t.Context(), req, "p")
	if r.Model != "gemini-2.5-pro" {
		t.Fatalf("a consumed sticky model was not reset at the turn: %+v", r)
	}
	// The dispatcher's selection consumes the attempt and reports the
	// sticky state's attempt budget.
	if sel := s.Select(req); sel.Model != "gemini-2.5-pro" || sel.MaxAttempts != 3 {
		t.Errorf("selection = %+v", sel)
	}
	if h := a.Health("gemini-2.5-pro"); !h.Consumed {
		t.Errorf("attempt not consumed: %+v", h)
	}
	if sel := s.Select(req); sel.Model != "gemini-2.5-flash" {
		t.Errorf("second selection in the same turn = %+v", sel)
	}
}

func TestNewServiceNeedsAModel(t *testing.T) {
	if _, err := NewService(ServiceConfig{}); !errors.Is(err, errNoModel) {
		t.Errorf("err = %v", err)
	}
}

// BenchmarkRoutingDecision measures what availability and routing add to
// one model call: the routing processor's Route (a new prompt runs the
// router; within a sequence the sticky model is reused) and the
// dispatcher's Select, on a healthy concrete model.
//
// pro-down is "auto" with Pro out of quota: the fallback strategy decides
// and selection walks the chain to Flash.
func BenchmarkRoutingDecision(b *testing.B) {
	cases := []struct {
		name, model, want string
		sticky, proDown   bool
	}{
		{"new-sequence", "gemini-2.5-flash", "gemini-2.5-flash", false, false},
		{"sticky", "gemini-2.5-flash", "gemini-2.5-flash", true, false},
		{"pro-down", AliasAutoGemini25, "gemini-2.5-flash", false, true},
	}
	for _, c := range cases {
		sticky := c.sticky
		b.Run(c.name, func(b *testing.B) {
			s, err := NewService(ServiceConfig{Model: c.model, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			if c.proDown {
				s.Availability().MarkTerminal(DefaultProModel, ReasonQuota)
			}
			contents := []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}
			cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("sys", genai.RoleUser)}
			prompts := []string{"p1", "p2"}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				req := &model.LLMRequest{Model: c.model, Contents: contents, Config: cfg}
				prompt := prompts[0]
				if !sticky {
					i++
					prompt = prompts[i%2]
				}
				s.Route(b.Context(), req, prompt)
				if sel := s.Select(req); sel.Model != c.want {
					b.Fatalf("selected %q", sel.Model)
				}
			}
		})
	}
}

// TestServiceConcurrentUse drives one availability from several services
// (a parent, its subagents, a batch's prompts) and one service from several
// goroutines at once; -race catches a missing lock.
func TestServiceConcurrentUse(t *testing.T) {
	shared := NewAvailability()
	chain := chainOf(ActionSilent, "gemini-2.5-pro", "gemini-2.5-flash")
	var services []*Service
	for range 3 {
		services = append(services, newTestService(t, ServiceConfig{Model: "gemini-2.5-pro", Availability: shared}, chain))
	}
	var wg sync.WaitGroup
	for i := range 12 {
		s := services[i%len(services)]
		wg.Go(func() {
			for j := range 200 {
				req := &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}}
				s.Route(t.Context(), req, fmt.Sprint("p", j%3))
				sel := s.Select(req)
				switch j % 4 {
				case 0:
					s.HandleFallback(t.Context(), sel.Model, errTerminal)
				case 1:
					s.MarkHealthy(sel.Model)
				case 2:
					s.SetApprovalMode([]string{"plan", "default"}[j%2])
				case 3:
					if j%8 == 3 {
						s.SetModel("gemini-2.5-pro")
					}
					_ = s.Model() + s.ActiveModel()
				}
			}
		})
	}
	wg.Wait()
}

// TestPreparedIsKeyedByInvocation: the routing processor's decision is
// found by the invocation it was made in, not by the request it rewrote:
// another invocation, or none, finds nothing, and a later Route replaces
// it.
func TestPreparedIsKeyedByInvocation(t *testing.T) {
	s := newTestService(t, ServiceConfig{Model: "gemini-2.5-pro"}, chainOf(ActionSilent, "gemini-2.5-pro", "gemini-2.5-flash"))
	s.Route(t.Context(), &model.LLMRequest{}, "inv-1")
	p := s.Prepared("inv-1")
	if p == nil || p.Invocation != "inv-1" || p.Model != "gemini-2.5-pro" {
		t.Fatalf("Prepared(inv-1) = %+v", p)
	}
	for _, id := range []string{"inv-2", ""} {
		if got := s.Prepared(id); got != nil {
			t.Errorf("Prepared(%q) = %+v, want nil", id, got)
		}
	}
	s.Route(t.Context(), &model.LLMRequest{}, "inv-2")
	if s.Prepared("inv-1") != nil || s.Prepared("inv-2") == nil {
		t.Error("a later Route did not replace the decision")
	}
}

// TestExecuteRewritesOnlyPreparedRequests: executing a prepared decision
// after the routed model went down re-applies the fallback model's config
// from the pre-routing snapshot; a request selected without one (a
// utility call) only gets its model name changed.
func TestExecuteRewritesOnlyPreparedRequests(t *testing.T) {
	topK := float32(7)
	configs, err := NewModelConfigs(map[string]ModelConfig{"gemini-2.5-flash": {TopK: &topK}})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, ServiceConfig{Model: "gemini-2.5-pro", Configs: configs}, chainOf(ActionSilent, "gemini-2.5-pro", "gemini-2.5-flash"))
	req := &model.LLMRequest{Config: &genai.GenerateContentConfig{}}
	s.Route(t.Context(), req, "inv")
	s.Availability().MarkTerminal("gemini-2.5-pro", ReasonQuota)
	if sel := s.Execute(req, s.Prepared("inv")); sel.Model != "gemini-2.5-flash" || req.Config.TopK == nil || *req.Config.TopK != 7 {
		t.Errorf("Execute = %+v, topK %v; want flash with its config", sel, req.Config.TopK)
	}
	util := &model.LLMRequest{Model: "gemini-2.5-pro", Config: &genai.GenerateContentConfig{}}
	if sel := s.Select(util); sel.Model != "gemini-2.5-flash" || util.Model != "gemini-2.5-flash" || util.Config.TopK != nil {
		t.Errorf("Select = %+v, config %+v; want only the name changed", sel, util.Config)
	}
}
