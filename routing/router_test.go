package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// Helpers of the router and classifier tests carry an "rt" prefix so they
// cannot collide with the other test files of the package.

var rtDiscard = slog.New(slog.DiscardHandler)

// rtCatalog returns a built-in catalog for acc.
func rtCatalog(t testing.TB, acc Access, chains ...Chain) *Catalog {
	t.Helper()
	c, err := NewCatalog(CatalogConfig{Access: acc, Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	rtPreview = Access{Preview: true}
	rtStable  = Access{}
)

// rtEnv returns an Env for configured with preview access, healthy models
// and gemini-cli's default settings.
func rtEnv(t testing.TB, configured string) *Env {
	return &Env{
		ConfiguredModel: configured,
		ApprovalMode:    "default",
		Catalog:         rtCatalog(t, rtPreview),
		Availability:    NewAvailability(),
		Settings:        DefaultRouterSettings(),
		Logger:          rtDiscard,
	}
}

// rtText returns a text turn.
func rtText(role, text string) *genai.Content {
	return &genai.Content{Role: role, Parts: []*genai.Part{{Text: text}}}
}

// rtCall returns a model turn calling name.
func rtCall(name string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name}}}}
}

// rtResponse returns a user turn answering name.
func rtResponse(name string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{
		FunctionResponse: &genai.FunctionResponse{Name: name, Response: map[string]any{"ok": true}},
	}}}
}

// rtRC returns a routing context whose request is a user text.
func rtRC(history ...*genai.Content) *RoutingContext {
	return &RoutingContext{Contents: append(history, rtText(genai.RoleUser, "simple task"))}
}

// rtRoute runs one strategy.
func rtRoute(t *testing.T, s Strategy, rc *RoutingContext, env *Env) *Decision {
	t.Helper()
	if rc == nil {
		rc = rtRC()
	}
	d, err := s.Route(context.Background(), rc, env)
	if err != nil {
		t.Fatalf("%s: unexpected error %v", s.Name(), err)
	}
	return d
}

// rtModel is a decision's model, "<nil>" for no decision.
func rtModel(d *Decision) string {
	if d == nil {
		return "<nil>"
	}
	return d.Model
}

func TestDefaultRouterSettings(t *testing.T) {
	s := DefaultRouterSettings()
	if !s.PlanRouting || !s.NumericalRouting || s.NumericalThreshold != 0 || s.ClassifierModel != "" {
		t.Fatalf("DefaultRouterSettings() = %+v", s)
	}
	if th, configured := s.threshold(); th != 90 || configured {
		t.Errorf("default threshold = %d, %v; want 90, false", th, configured)
	}
	// gemini-cli's "classifier" alias model is "flash-lite", which is
	// Gemini 3.1 Flash Lite with or without preview access.
	for _, acc := range []Access{rtPreview, rtStable} {
		if got := s.classifierModel(acc); got != "gemini-3.1-flash-lite" {
			t.Errorf("classifier model (%+v) = %q", acc, got)
		}
	}
}

func TestFallbackStrategy(t *testing.T) {
	userChain := Chain{{Model: "openai:gpt-4o"}, {Model: "openai:gpt-4o-mini", LastResort: true}}
	tests := []struct {
		name       string
		configured string
		requested  string
		stable     bool // no preview access
		chains     []Chain
		terminal   []string
		sticky     []string // marked retry-once and consumed
		nilAvail   bool
		want       string
		reasoning  string
	}{
		{name: "healthy auto", configured: "auto", want: "<nil>"},
		{name: "healthy concrete", configured: "gemini-2.5-pro", want: "<nil>"},
		{name: "auto pro terminal", configured: "auto", terminal: []string{PreviewProModel},
			want: PreviewFlashModel, reasoning: "Model auto is unavailable (quota). Using fallback: gemini-3-flash-preview"},
		{name: "auto whole chain terminal uses last resort", configured: "auto",
			terminal: []string{PreviewProModel, PreviewFlashModel}, want: PreviewFlashModel},
		{name: "auto without preview", configured: "auto", stable: true, terminal: []string{DefaultProModel},
			want: DefaultFlashModel},
		{name: "auto-gemini-2.5", configured: "auto-gemini-2.5", terminal: []string{DefaultProModel},
			want: DefaultFlashModel},
		{name: "auto flash terminal is not the requested model", configured: "auto",
			terminal: []string{PreviewFlashModel}, want: "<nil>"},
		{name: "gemini 3 concrete wraps to flash", configured: PreviewProModel,
			terminal: []string{PreviewProModel}, want: PreviewFlashModel},
		{name: "gemini 3 flash wraps to pro", configured: PreviewFlashModel,
			terminal: []string{PreviewFlashModel}, want: PreviewProModel},
		{name: "concrete 2.5 has no fallback", configured: "gemini-2.5-pro",
			terminal: []string{DefaultProModel}, want: "<nil>"},
		{name: "prefixed concrete does not fall back to itself", configured: "models/gemini-2.5-pro",
			terminal: []string{DefaultProModel}, want: "<nil>"},
		{name: "openai model has no fallback", configured: "openai:gpt-4o",
			terminal: []string{"openai:gpt-4o"}, want: "<nil>"},
		{name: "openai model with user chain", configured: "openai:gpt-4o", chains: []Chain{userChain},
			terminal: []string{"openai:gpt-4o"}, want: "openai:gpt-4o-mini"},
		{name: "replay model", configured: "replay:x.jsonl", terminal: []string{"replay:x.jsonl"}, want: "<nil>"},
		{name: "consumed sticky is unavailable", configured: "auto", sticky: []string{PreviewProModel},
			want: PreviewFlashModel, reasoning: "Model auto is unavailable (retry_once_per_turn). Using fallback: gemini-3-flash-preview"},
		{name: "requested model wins over configured", configured: "gemini-2.5-flash", requested: "auto",
			terminal: []string{PreviewProModel}, want: PreviewFlashModel},
		{name: "nil availability", configured: "auto", nilAvail: true, want: "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := rtEnv(t, tt.configured)
			acc := rtPreview
			if tt.stable {
				acc = rtStable
			}
			env.Catalog = rtCatalog(t, acc, tt.chains...)
			for _, m := range tt.terminal {
				env.Availability.MarkTerminal(m, ReasonQuota)
			}
			for _, m := range tt.sticky {
				env.Availability.MarkRetryOncePerTurn(m, 3)
				env.Availability.ConsumeStickyAttempt(m)
			}
			if tt.nilAvail {
				env.Availability = nil
			}
			rc := rtRC()
			rc.RequestedModel = tt.requested
			d := rtRoute(t, FallbackStrategy(), rc, env)
			if got := rtModel(d); got != tt.want {
				t.Fatalf("model = %s, want %s", got, tt.want)
			}
			if d == nil {
				return
			}
			if d.Source != "fallback" || d.Latency != 0 {
				t.Errorf("source, latency = %q, %v; want fallback, 0", d.Source, d.Latency)
			}
			if tt.reasoning != "" && d.Reasoning != tt.reasoning {
				t.Errorf("reasoning = %q, want %q", d.Reasoning, tt.reasoning)
			}
		})
	}
}

func TestOverrideStrategy(t *testing.T) {
	tests := []struct {
		configured, requested string
		acc                   Access
		want                  string
	}{
		{configured: "auto", want: "<nil>"},
		{configured: "auto-gemini-3", want: "<nil>"},
		{configured: "auto-gemini-2.5", want: "<nil>"},
		{configured: "gemini:auto", want: "<nil>"},
		{configured: "gemini-2.5-pro", want: "gemini-2.5-pro"},
		{configured: "models/gemini-2.5-flash", want: "gemini-2.5-flash"},
		{configured: "pro", acc: rtPreview, want: PreviewProModel},
		{configured: "pro", acc: rtStable, want: DefaultProModel},
		{configured: "flash", acc: rtPreview, want: PreviewFlashModel},
		{configured: "flash-lite", acc: rtPreview, want: "gemini-3.1-flash-lite"},
		{configured: PreviewProModel, acc: rtStable, want: DefaultProModel},
		{configured: PreviewProModel, acc: Access{Preview: true, Gemini31: true}, want: "gemini-3.1-pro-preview"},
		{configured: "openai:gpt-4o", want: "openai:gpt-4o"},
		{configured: "replay:session.jsonl", want: "replay:session.jsonl"},
		{configured: "auto", requested: "gemini-2.5-flash", want: "gemini-2.5-flash"},
		{configured: "gemini-2.5-flash", requested: "auto", want: "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.configured+"/"+tt.requested, func(t *testing.T) {
			env := rtEnv(t, tt.configured)
			env.Catalog = rtCatalog(t, tt.acc)
			rc := rtRC()
			rc.RequestedModel = tt.requested
			d := rtRoute(t, OverrideStrategy(), rc, env)
			if got := rtModel(d); got != tt.want {
				t.Fatalf("model = %s, want %s", got, tt.want)
			}
			if d == nil {
				return
			}
			asked := tt.requested
			if asked == "" {
				asked = tt.configured
			}
			want := Decision{Model: tt.want, Source: "override",
				Reasoning: "Routing bypassed by forced model directive. Using: " + asked}
			if *d != want {
				t.Errorf("decision = %+v, want %+v", *d, want)
			}
		})
	}
}

func TestApprovalModeStrategy(t *testing.T) {
	const (
		proReason   = "Routing to Pro model because ApprovalMode is PLAN."
		flashReason = "Routing to Flash model because an approved plan exists."
	)
	tests := []struct {
		name       string
		configured string
		mode       string
		approved   bool
		off        bool
		acc        Access
		want       string
		reasoning  string
	}{
		{name: "auto plan", configured: "auto", mode: "plan", acc: rtPreview, want: PreviewProModel, reasoning: proReason},
		{name: "auto plan no preview", configured: "auto", mode: "plan", acc: rtStable, want: DefaultProModel},
		{name: "auto plan 3.1", configured: "auto", mode: "plan", acc: Access{Preview: true, Gemini31: true},
			want: "gemini-3.1-pro-preview"},
		{name: "auto-gemini-2.5 plan", configured: "auto-gemini-2.5", mode: "plan", acc: rtPreview, want: DefaultProModel},
		{name: "plan beats approved plan", configured: "auto", mode: "plan", approved: true, acc: rtPreview,
			want: PreviewProModel},
		{name: "approved plan default mode", configured: "auto", mode: "default", approved: true, acc: rtPreview,
			want: PreviewFlashModel, reasoning: flashReason},
		{name: "approved plan yolo", configured: "auto-gemini-3", mode: "yolo", approved: true, acc: rtPreview,
			want: PreviewFlashModel},
		{name: "approved plan no preview", configured: "auto", mode: "auto_edit", approved: true, acc: rtStable,
			want: DefaultFlashModel},
		{name: "approved plan 2.5", configured: "auto-gemini-2.5", mode: "default", approved: true, acc: rtPreview,
			want: DefaultFlashModel},
		{name: "no plan", configured: "auto", mode: "default", acc: rtPreview, want: "<nil>"},
		{name: "plan routing off", configured: "auto", mode: "plan", off: true, acc: rtPreview, want: "<nil>"},
		{name: "concrete model in plan mode", configured: "gemini-2.5-flash", mode: "plan", acc: rtPreview, want: "<nil>"},
		{name: "openai model in plan mode", configured: "openai:gpt-4o", mode: "plan", approved: true, acc: rtPreview,
			want: "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := rtEnv(t, tt.configured)
			env.Catalog = rtCatalog(t, tt.acc)
			env.ApprovalMode, env.PlanApproved = tt.mode, tt.approved
			env.Settings.PlanRouting = !tt.off
			d := rtRoute(t, ApprovalModeStrategy(), nil, env)
			if got := rtModel(d); got != tt.want {
				t.Fatalf("model = %s, want %s", got, tt.want)
			}
			if d == nil {
				return
			}
			if d.Source != "approval-mode" {
				t.Errorf("source = %q", d.Source)
			}
			if tt.reasoning != "" && d.Reasoning != tt.reasoning {
				t.Errorf("reasoning = %q, want %q", d.Reasoning, tt.reasoning)
			}
		})
	}
}

func TestDefaultStrategy(t *testing.T) {
	tests := []struct {
		configured, requested string
		acc                   Access
		want                  string
	}{
		{configured: "auto", acc: rtPreview, want: PreviewProModel},
		{configured: "auto", acc: rtStable, want: DefaultProModel},
		{configured: "", acc: rtPreview, want: PreviewProModel},
		{configured: "auto-gemini-2.5", acc: rtPreview, want: DefaultProModel},
		{configured: "gemini-2.5-flash", acc: rtPreview, want: "gemini-2.5-flash"},
		{configured: "openai:gpt-4o", acc: rtPreview, want: "openai:gpt-4o"},
		// Like gemini-cli, the default strategy ignores the requested model.
		{configured: "auto", requested: "gemini-2.5-flash", acc: rtPreview, want: PreviewProModel},
	}
	for _, tt := range tests {
		env := rtEnv(t, tt.configured)
		env.Catalog = rtCatalog(t, tt.acc)
		rc := rtRC()
		rc.RequestedModel = tt.requested
		d := rtRoute(t, DefaultStrategy(), rc, env)
		want := Decision{Model: tt.want, Source: "default", Reasoning: "Routing to default model: " + tt.want}
		if d == nil || *d != want {
			t.Errorf("%q (requested %q): decision = %+v, want %+v", tt.configured, tt.requested, d, want)
		}
	}
}

// rtStrategy is a scripted strategy that records its calls.
type rtStrategy struct {
	name  string
	d     *Decision
	err   error
	panic bool
	sleep time.Duration
	log   *[]string
	mu    *sync.Mutex
}

func (s rtStrategy) Name() string { return s.name }

func (s rtStrategy) Route(_ context.Context, rc *RoutingContext, env *Env) (*Decision, error) {
	if s.log != nil {
		s.mu.Lock()
		*s.log = append(*s.log, s.name)
		s.mu.Unlock()
	}
	time.Sleep(s.sleep)
	if s.panic {
		panic("boom")
	}
	if s.d == nil {
		return nil, s.err
	}
	d := *s.d
	return &d, s.err
}

func TestRouterCompositeOrder(t *testing.T) {
	var calls []string
	var mu sync.Mutex
	rec := func(name string, d *Decision, err error) Strategy {
		return rtStrategy{name: name, d: d, err: err, log: &calls, mu: &mu}
	}
	r := NewRouter(
		rec("a", nil, nil),
		rec("b", nil, errors.New("skip me")),
		rtStrategy{name: "c", panic: true, log: &calls, mu: &mu},
		rec("d", &Decision{Model: "m-d", Source: "d"}, nil),
		rec("e", &Decision{Model: "m-e", Source: "e"}, nil),
		rec("terminal", &Decision{Model: "m-t", Source: "terminal"}, nil),
	)
	d := r.Route(context.Background(), RoutingContext{}, &Env{Logger: rtDiscard})
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
	if d.Model != "m-d" || d.Source != "agent-router/d" {
		t.Errorf("decision = %+v, want m-d from agent-router/d", d)
	}

	// With no non-terminal decision the terminal strategy decides.
	calls = nil
	r = NewRouter(rec("a", nil, nil), rec("b", nil, errors.New("x")), rec("terminal", &Decision{Model: "m-t", Source: "terminal"}, nil))
	d = r.Route(context.Background(), RoutingContext{}, &Env{Logger: rtDiscard})
	if want := []string{"a", "b", "terminal"}; !slices.Equal(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
	if d.Model != "m-t" || d.Source != "agent-router/terminal" {
		t.Errorf("decision = %+v", d)
	}
}

func TestDefaultRouterOrder(t *testing.T) {
	var names []string
	for _, s := range DefaultRouter().Strategies() {
		names = append(names, s.Name())
	}
	// gemini-cli's ModelRouterService order, without the optional Gemma
	// classifier (which would follow approval-mode).
	want := []string{"fallback", "override", "approval-mode", "classifier", "numerical_classifier", "default"}
	if !slices.Equal(names, want) {
		t.Fatalf("DefaultRouter order = %v, want %v", names, want)
	}
}

func TestRouterException(t *testing.T) {
	tests := []struct {
		name     string
		router   *Router
		errMatch string
	}{
		{"terminal error", NewRouter(rtStrategy{name: "t", err: errors.New("kaput")}), "kaput"},
		{"terminal decides nothing", NewRouter(rtStrategy{name: "a"}, rtStrategy{name: "t"}), "no decision"},
		{"terminal panics", NewRouter(rtStrategy{name: "t", panic: true}), "panicked: boom"},
		{"no strategies", NewRouter(), "no strategies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := rtEnv(t, "auto")
			d := tt.router.Route(context.Background(), RoutingContext{}, env)
			if d.Model != PreviewProModel || d.Source != "router-exception" ||
				d.Reasoning != "An exception occurred during routing." || !strings.Contains(d.Error, tt.errMatch) {
				t.Fatalf("decision = %+v, want router-exception on %s with error ~%q", d, PreviewProModel, tt.errMatch)
			}
		})
	}
	// A nil Env does not break the router either.
	d := NewRouter().Route(context.Background(), RoutingContext{}, nil)
	if d.Source != "router-exception" || d.Model != DefaultProModel {
		t.Errorf("nil env: %+v", d)
	}
}

func TestRouterSourcesAndLatency(t *testing.T) {
	ctx := context.Background()
	env := &Env{Logger: rtDiscard}
	tests := []struct {
		name       string
		s          []Strategy
		wantSource string
		minLat     time.Duration
		wantLat    time.Duration // exact when minLat is 0
	}{
		{name: "source is the child's", s: []Strategy{rtStrategy{name: "classifier", d: &Decision{Model: "m", Source: "Classifier"}}},
			wantSource: "agent-router/Classifier"},
		{name: "numerical source", s: []Strategy{rtStrategy{name: "numerical_classifier",
			d: &Decision{Model: "m", Source: "NumericalClassifier (Remote)"}}},
			wantSource: "agent-router/NumericalClassifier (Remote)"},
		{name: "child latency is kept and rounded", s: []Strategy{rtStrategy{name: "x",
			d: &Decision{Model: "m", Source: "x", Latency: 7*time.Millisecond + 400*time.Microsecond}}},
			wantSource: "agent-router/x", wantLat: 7 * time.Millisecond},
		{name: "child latency rounds up", s: []Strategy{rtStrategy{name: "x",
			d: &Decision{Model: "m", Source: "x", Latency: 1500 * time.Microsecond}}},
			wantSource: "agent-router/x", wantLat: 2 * time.Millisecond},
		{name: "zero child latency is the total", s: []Strategy{
			rtStrategy{name: "slow", sleep: 5 * time.Millisecond},
			rtStrategy{name: "x", d: &Decision{Model: "m", Source: "x"}}},
			wantSource: "agent-router/x", minLat: 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewRouter(tt.s...).Route(ctx, RoutingContext{}, env)
			if d.Source != tt.wantSource {
				t.Errorf("source = %q, want %q", d.Source, tt.wantSource)
			}
			if d.Latency%time.Millisecond != 0 {
				t.Errorf("latency %v is not rounded to the millisecond", d.Latency)
			}
			if tt.minLat > 0 {
				if d.Latency < tt.minLat {
					t.Errorf("latency = %v, want >= %v", d.Latency, tt.minLat)
				}
			} else if d.Latency != tt.wantLat {
				t.Errorf("latency = %v, want %v", d.Latency, tt.wantLat)
			}
		})
	}
}

// rtUtility is a fake UtilityCaller that records requests and replies
// with text (or fails with err).
type rtUtility struct {
	mu    sync.Mutex
	reqs  []*rtCaptured
	reply string
	err   error
}

// rtCaptured is a captured utility request.
type rtCaptured struct {
	model    string
	contents []*genai.Content
	config   *genai.GenerateContentConfig
}

func (u *rtUtility) caller() UtilityCaller {
	return func(_ context.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
		u.mu.Lock()
		u.reqs = append(u.reqs, &rtCaptured{model: req.Model, contents: req.Contents, config: req.Config})
		u.mu.Unlock()
		if u.err != nil {
			return nil, u.err
		}
		return &model.LLMResponse{Content: genai.NewContentFromText(u.reply, genai.RoleModel)}, nil
	}
}

func (u *rtUtility) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

func TestDefaultRouterEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		configured string
		mode       string
		terminal   []string
		reply      string
		utilErr    error
		noUtility  bool
		request    *genai.Content
		want       string
		wantSource string
		wantCalls  int
	}{
		{name: "concrete model", configured: "gemini-2.5-flash", want: "gemini-2.5-flash", wantSource: "agent-router/override"},
		{name: "openai model", configured: "openai:gpt-4o", want: "openai:gpt-4o", wantSource: "agent-router/override"},
		{name: "auto pro terminal", configured: "auto", terminal: []string{PreviewProModel},
			want: PreviewFlashModel, wantSource: "agent-router/fallback"},
		{name: "auto plan mode", configured: "auto", mode: "plan", want: PreviewProModel, wantSource: "agent-router/approval-mode"},
		{name: "auto numerical", configured: "auto", reply: `{"complexity_reasoning":"r","complexity_score":95}`,
			want: PreviewProModel, wantSource: "agent-router/NumericalClassifier (Default)", wantCalls: 1},
		{name: "auto-gemini-2.5 classifier", configured: "auto-gemini-2.5", reply: `{"reasoning":"r","model_choice":"flash"}`,
			want: DefaultFlashModel, wantSource: "agent-router/Classifier", wantCalls: 1},
		{name: "classifier failure falls to default", configured: "auto", utilErr: errors.New("503"),
			want: PreviewProModel, wantSource: "agent-router/default", wantCalls: 1},
		{name: "no utility", configured: "auto", noUtility: true, want: PreviewProModel, wantSource: "agent-router/default"},
		{name: "function response skips 2.5 classifier", configured: "auto-gemini-2.5", request: rtResponse("ls"),
			reply: `{"reasoning":"r","model_choice":"flash"}`, want: DefaultProModel, wantSource: "agent-router/default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := rtEnv(t, tt.configured)
			if tt.mode != "" {
				env.ApprovalMode = tt.mode
			}
			for _, m := range tt.terminal {
				env.Availability.MarkTerminal(m, ReasonQuota)
			}
			u := &rtUtility{reply: tt.reply, err: tt.utilErr}
			if !tt.noUtility {
				env.Utility = u.caller()
			}
			req := tt.request
			if req == nil {
				req = rtText(genai.RoleUser, "hello")
			}
			rc := RoutingContext{Contents: []*genai.Content{req}, RequestedModel: tt.configured}
			d := DefaultRouter().Route(context.Background(), rc, env)
			if d.Model != tt.want || d.Source != tt.wantSource {
				t.Errorf("decision = %s from %s, want %s from %s", d.Model, d.Source, tt.want, tt.wantSource)
			}
			if u.calls() != tt.wantCalls {
				t.Errorf("utility calls = %d, want %d", u.calls(), tt.wantCalls)
			}
		})
	}
}

func TestRouterConcurrent(t *testing.T) {
	r := DefaultRouter()
	env := rtEnv(t, "auto")
	u := &rtUtility{reply: `{"complexity_reasoning":"r","complexity_score":10}`}
	env.Utility = u.caller()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 20 {
				if (i+j)%5 == 0 {
					env.Availability.MarkTerminal(PreviewProModel, ReasonCapacity)
				} else {
					env.Availability.MarkHealthy(PreviewProModel)
				}
				d := r.Route(context.Background(), *rtRC(), env)
				// Flash from the fallback or the classifier; Pro when
				// another goroutine heals it between the fallback
				// strategy's availability check and its chain selection.
				if d.Model != PreviewFlashModel && d.Model != PreviewProModel {
					t.Errorf("model = %s", d.Model)
				}
			}
		})
	}
	wg.Wait()
}

// rtCountingHandler counts records by level.
type rtCountingHandler struct {
	mu     sync.Mutex
	levels map[slog.Level]int
	msgs   []string
}

func (h *rtCountingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *rtCountingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.levels[r.Level]++
	h.msgs = append(h.msgs, fmt.Sprintf("%s %s", r.Level, r.Message))
	return nil
}
func (h *rtCountingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *rtCountingHandler) WithGroup(string) slog.Handler      { return h }

func TestRouterLogging(t *testing.T) {
	h := &rtCountingHandler{levels: map[slog.Level]int{}}
	env := rtEnv(t, "auto")
	env.Logger = slog.New(h)
	env.Utility = (&rtUtility{reply: "not json"}).caller()
	d := DefaultRouter().Route(context.Background(), *rtRC(), env)
	if d.Source != "agent-router/default" {
		t.Fatalf("source = %q", d.Source)
	}
	// The classifier failure and the decision are debug diagnostics, not
	// warnings the user sees.
	if h.levels[slog.LevelDebug] < 2 || h.levels[slog.LevelWarn] != 0 || h.levels[slog.LevelError] != 0 {
		t.Errorf("log levels = %v: %v", h.levels, h.msgs)
	}
	h.levels = map[slog.Level]int{}
	NewRouter(rtStrategy{name: "t", err: errors.New("x")}).Route(context.Background(), RoutingContext{}, env)
	if h.levels[slog.LevelError] != 1 {
		t.Errorf("terminal failure: log levels = %v, want one error", h.levels)
	}
}

// BenchmarkRouteOverride is the common path: a concrete configured model
// that is healthy; fallback and override decide without a model call.
func BenchmarkRouteOverride(b *testing.B) {
	r := DefaultRouter()
	env := rtEnv(b, "gemini-2.5-pro")
	rc := RoutingContext{Contents: []*genai.Content{rtText(genai.RoleUser, "hello")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d := r.Route(ctx, rc, env)
		if d.Model != "gemini-2.5-pro" {
			b.Fatal(d.Model)
		}
	}
}

// BenchmarkRouteFallback routes "auto" while its Pro model is terminal, so
// the fallback strategy resolves the chain and picks Flash.
func BenchmarkRouteFallback(b *testing.B) {
	r := DefaultRouter()
	env := rtEnv(b, "auto")
	env.Availability.MarkTerminal(PreviewProModel, ReasonQuota)
	rc := RoutingContext{Contents: []*genai.Content{rtText(genai.RoleUser, "hello")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d := r.Route(ctx, rc, env)
		if d.Model != PreviewFlashModel {
			b.Fatal(d.Model)
		}
	}
}
