package runtime

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	settingsroutes "github.com/agentry-dev/agentry/compose/routes"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// promptChain is a user chain pro → flash whose fallbacks ask the handler
// (the policies' default action).
func promptChain(s *config.Settings) {
	s.Model.FallbackChains = [][]config.ModelPolicySettings{{
		{Model: "gemini-2.5-pro"},
		{Model: "gemini-2.5-flash", LastResort: true},
	}}
}

// resilient builds a session with routing from settings against the fake
// Gemini server. Delays are recorded, never slept; the jitter is fixed at
// its midpoint so delays are exact.
type resilient struct {
	settings config.Settings
	handler  routing.FallbackHandler
	avail    *routing.Availability
	tools    []tools.Tool
}

func (r resilient) start(t *testing.T, srv *fakegemini.Server) (*Session, *timers, *routing.Service) {
	t.Helper()
	s := r.settings
	if s.Model.Name == "" {
		s = config.Defaults()
		s.Model.Name = r.settings.Model.Name
	}
	routes, err := settingsroutes.New(&s, r.avail, r.handler, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := &timers{}
	sess := geminiSession(t, srv, Config{
		Routing: routes,
		Chain:   processors.NewChain(routing.NewProcessor(routes)),
		Retry:   RetryConfig{NewTimer: tm.New, Rand: func() float64 { return 0.5 }},
		Tools:   r.tools,
	})
	return sess, tm, routes
}

// settingsWith returns the default settings with model name and mutations.
func settingsWith(name string, mutate func(*config.Settings)) config.Settings {
	s := config.Defaults()
	s.Model.Name = name
	if mutate != nil {
		mutate(&s)
	}
	return s
}

// silentChain is a user chain pro → flash whose fallbacks never ask.
func silentChain(s *config.Settings) {
	silent := map[string]string{"terminal": "silent", "transient": "silent", "not_found": "silent", "unknown": "silent"}
	s.Model.FallbackChains = [][]config.ModelPolicySettings{{
		{Model: "gemini-2.5-pro", Actions: silent},
		{Model: "gemini-2.5-flash", Actions: silent, LastResort: true},
	}}
}

func customs(evs []Event, kind string) []Event {
	var out []Event
	for _, ev := range find(evs, EventCustom) {
		if ev.Custom.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func models(reqs []fakegemini.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Model
	}
	return out
}

func sessionModels(evs []Event) []string {
	var out []string
	for _, ev := range find(evs, EventSessionUpdate) {
		out = append(out, ev.SessionUpdate.Model)
	}
	return out
}

// TestRetryHonoursRetryInfo: a per-minute 429 asking for 2 s is retried
// after 2 s plus up to 20 % (at most 2.4 s), on the same model, with one
// notice. gemini-cli 0.61.0 waits max(5 s, hint) plus the jitter
// (../testdata/gemini-cli/ratelimit.stream-json.*: "Attempt 1 failed: You
// exceeded your current quota, … Retrying after 5594ms...", the retry 5.6 s
// later); agentry keeps the words of its notice's first line and honours
// the hint.
func TestRetryHonoursRetryInfo(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.RateLimitPerMinute(2*time.Second), fakegemini.Text("done"))
	s, tm, routes := resilient{settings: settingsWith("gemini-2.5-flash", nil)}.start(t, srv)
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	// The hint plus 20 % × 0.5.
	if diff := cmp.Diff([]time.Duration{2200 * time.Millisecond}, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gemini-2.5-flash", "gemini-2.5-flash"}, models(srv.Requests())); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	retries := customs(evs, CustomModelRetry)
	if len(retries) != 1 || retries[0].Custom.Data["attempt"] != 1 || retries[0].Custom.Data["delayMs"] != int64(2200) {
		t.Fatalf("retry events = %+v", retries)
	}
	const notice = "Attempt 1 failed: You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. Retrying after 2200ms..."
	if got := retries[0].Custom.Data["message"]; got != notice {
		t.Errorf("notice = %q, want %q", got, notice)
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "gemini-cli", "ratelimit.stream-json.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if !strings.HasPrefix(notice, strings.TrimSuffix(first, ".")+". Retrying after ") {
		t.Errorf("gemini-cli's notice began %q; agentry's is %q", first, notice)
	}
	if h := routes.Availability().Health("gemini-2.5-flash"); h.Status != routing.StatusHealthy {
		t.Errorf("health = %+v", h)
	}
}

// TestRetryLongServerDelay: each RetryInfo is waited as asked, plus the
// jitter; the backoff does not double over it.
func TestRetryLongServerDelay(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.RateLimitPerMinute(12*time.Second), fakegemini.RateLimitPerMinute(12*time.Second), fakegemini.Text("done"))
	s, tm, _ := resilient{settings: settingsWith("gemini-2.5-flash", nil)}.start(t, srv)
	if r := last(run(t, s, "hi")).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s", r)
	}
	// 12 s × 1.1, twice (gemini-cli: 13.2 s, then max(24 s, 12 s) × 1.1).
	want := []time.Duration{13200 * time.Millisecond, 13200 * time.Millisecond}
	if diff := cmp.Diff(want, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

// TestRetryUnavailableBurst: 503s back off exponentially with ±30 %
// jitter (none at the midpoint), doubling from 5 s and capped at 30 s.
func TestRetryUnavailableBurst(t *testing.T) {
	srv := fakegemini.New(t)
	for range 5 {
		srv.Enqueue(fakegemini.Unavailable())
	}
	srv.Enqueue(fakegemini.Text("back"))
	s, tm, _ := resilient{settings: settingsWith("gemini-2.5-flash", nil)}.start(t, srv)
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s", r)
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	if diff := cmp.Diff(want, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if got := find(evs, EventMessage); got[len(got)-1].Message.Content[0].Text != "back" {
		t.Errorf("last message = %+v", got[len(got)-1])
	}
}

// TestFallbackOnDailyQuota: a PerDay quota is terminal at once (no
// retries); the silent chain falls back to flash, the fallback is visible,
// the session stays on flash, and pro is never asked again.
func TestFallbackOnDailyQuota(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("from flash"), fakegemini.Text("still flash"))
	s, tm, routes := resilient{settings: settingsWith("gemini-2.5-pro", silentChain)}.start(t, srv)
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if len(tm.Delays()) != 0 {
		t.Errorf("terminal quota was retried: %v", tm.Delays())
	}
	fb := customs(evs, CustomModelFallback)
	if len(fb) != 1 {
		t.Fatalf("fallback events = %+v", fb)
	}
	d := fb[0].Custom.Data
	if d["failedModel"] != "gemini-2.5-pro" || d["model"] != "gemini-2.5-flash" || d["reason"] != "terminal" || d["intent"] != "retry_always" {
		t.Errorf("fallback data = %v", d)
	}
	if diff := cmp.Diff([]string{"gemini-2.5-pro", "gemini-2.5-flash"}, sessionModels(evs)); diff != "" {
		t.Errorf("session_update models (-want +got):\n%s", diff)
	}
	if u := find(evs, EventUsage); len(u) != 1 || u[0].Usage.Model != "gemini-2.5-flash" {
		t.Errorf("usage = %+v", u)
	}
	if h := routes.Availability().Health("gemini-2.5-pro"); h.Status != routing.StatusTerminal || h.Reason != routing.ReasonQuota {
		t.Errorf("pro health = %+v", h)
	}
	if routes.Model() != "gemini-2.5-flash" || !routes.InFallbackMode() || s.Model() != "gemini-2.5-flash" {
		t.Errorf("model %q, fallback mode %v", routes.Model(), routes.InFallbackMode())
	}
	evs = run(t, s, "again")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("second prompt: %s", r)
	}
	if diff := cmp.Diff([]string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash"}, models(srv.Requests())); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

// TestFallbackCarriesNewModelConfig is the parity test of the routing
// path: when a fallback changes the concrete model, the request that
// reaches the new model carries that model's generation config, system
// instruction and tool subset, not the failed model's.
func TestFallbackCarriesNewModelConfig(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("ok"))
	// Both read-only: the policy offers both in a run without a human.
	lookup := &fakeTool{ToolName: "lookup", ToolKind: tools.KindRead}
	shell := &fakeTool{ToolName: "shell", ToolKind: tools.KindSearch}
	settings := settingsWith("gemini-2.5-pro", func(s *config.Settings) {
		silentChain(s)
		budget := int32(1234)
		s.Model.Configs = map[string]config.ModelConfigSettings{
			"gemini-2.5-pro":   {Temperature: ptr[float32](0.1), ThinkingBudget: &budget, Instruction: "PRO-ONLY", ExcludeTools: []string{"shell"}},
			"gemini-2.5-flash": {Temperature: ptr[float32](0.9), Instruction: "FLASH-ONLY", ExcludeTools: []string{"lookup"}},
		}
	})
	s, _, _ := resilient{settings: settings, tools: []tools.Tool{lookup, shell}}.start(t, srv)
	if r := last(run(t, s, "hi")).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	type seen struct {
		Model       string
		Temperature float32
		Budget      int32
		Instruction string
		Tools       []string
	}
	view := func(r fakegemini.Request) seen {
		b := r.Body
		v := seen{Model: r.Model}
		if gc := b.GenerationConfig; gc != nil {
			if gc.Temperature != nil {
				v.Temperature = *gc.Temperature
			}
			if gc.ThinkingConfig != nil && gc.ThinkingConfig.ThinkingBudget != nil {
				v.Budget = *gc.ThinkingConfig.ThinkingBudget
			}
		}
		if b.SystemInstruction != nil {
			for _, p := range b.SystemInstruction.Parts {
				if strings.Contains(p.Text, "-ONLY") {
					v.Instruction += p.Text
				}
			}
		}
		for _, tl := range b.Tools {
			for _, fd := range tl.FunctionDeclarations {
				v.Tools = append(v.Tools, fd.Name)
			}
		}
		slices.Sort(v.Tools)
		return v
	}
	want := []seen{
		{Model: "gemini-2.5-pro", Temperature: 0.1, Budget: 1234, Instruction: "PRO-ONLY", Tools: []string{"lookup"}},
		{Model: "gemini-2.5-flash", Temperature: 0.9, Budget: routing.DefaultThinkingBudget, Instruction: "FLASH-ONLY", Tools: []string{"shell"}},
	}
	if diff := cmp.Diff(want, []seen{view(reqs[0]), view(reqs[1])}); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestNoHandlerNoPromptFallback: when the fallback policy says "prompt" a
// batch run has nobody to ask: the run fails with the quota error and
// gemini-cli's exit code, after one request.
func TestNoHandlerNoPromptFallback(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	s, _, _ := resilient{settings: settingsWith("gemini-2.5-pro", promptChain)}.start(t, srv)
	evs := run(t, s, "hi")
	errs := find(evs, EventError)
	if len(errs) != 1 || errs[0].Meta["errorName"] != "TerminalQuotaError" || errs[0].Meta["exitCode"] != ExitGeneric ||
		errs[0].Error.Status != "RESOURCE_EXHAUSTED" || !strings.Contains(errs[0].Error.Message, "gemini-2.5-pro") {
		t.Fatalf("errors = %+v", errs)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

// TestFallbackHandlerIntents: a prompt policy asks the handler; its intent
// decides what happens next.
func TestFallbackHandlerIntents(t *testing.T) {
	tests := []struct {
		intent      routing.Intent
		wantModels  []string
		wantEnd     EndReason
		wantSession string // the session's model afterwards
		wantProDown bool
	}{
		{routing.IntentRetryAlways, []string{"gemini-2.5-pro", "gemini-2.5-flash"}, EndCompleted, "gemini-2.5-flash", true},
		{routing.IntentRetryOnce, []string{"gemini-2.5-pro", "gemini-2.5-flash"}, EndCompleted, "gemini-2.5-pro", true},
		{routing.IntentStop, []string{"gemini-2.5-pro"}, EndFailed, "gemini-2.5-pro", false},
		{routing.IntentRetryLater, []string{"gemini-2.5-pro"}, EndFailed, "gemini-2.5-pro", false},
		{routing.IntentUpgrade, []string{"gemini-2.5-pro"}, EndFailed, "gemini-2.5-pro", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.intent), func(t *testing.T) {
			srv := fakegemini.New(t, fakegemini.AllowUnused())
			srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
			srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("ok"))
			var asked []routing.FallbackQuestion
			handler := func(_ context.Context, q routing.FallbackQuestion) (routing.Intent, error) {
				asked = append(asked, q)
				return tt.intent, nil
			}
			s, _, routes := resilient{settings: settingsWith("gemini-2.5-pro", promptChain), handler: handler}.start(t, srv)
			evs := run(t, s, "hi")
			if r := last(evs).AgentEnd.Reason; r != tt.wantEnd {
				t.Fatalf("reason %s, events %v", r, types(evs))
			}
			if len(asked) != 1 || asked[0].Failed != "gemini-2.5-pro" || asked[0].Fallback != "gemini-2.5-flash" || asked[0].Kind != routing.FailureTerminal {
				t.Errorf("asked = %+v", asked)
			}
			if diff := cmp.Diff(tt.wantModels, models(srv.Requests())); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
			if got := routes.Model(); got != tt.wantSession {
				t.Errorf("session model = %q", got)
			}
			if ok, _ := routes.Availability().Available("gemini-2.5-pro"); ok == tt.wantProDown {
				t.Errorf("pro available = %v", ok)
			}
			fb := customs(evs, CustomModelFallback)
			switch tt.intent {
			case routing.IntentUpgrade:
				if len(fb) != 1 || fb[0].Custom.Data["url"] != routing.UpgradeURL {
					t.Errorf("upgrade events = %+v", fb)
				}
			case routing.IntentRetryAlways, routing.IntentRetryOnce:
				if len(fb) != 1 || fb[0].Custom.Data["intent"] != string(tt.intent) || fb[0].Custom.Data["model"] != "gemini-2.5-flash" {
					t.Errorf("fallback events = %+v", fb)
				}
			default:
				if len(fb) != 0 {
					t.Errorf("fallback events = %+v", fb)
				}
			}
		})
	}
}

// TestCapacityRetriesSilentlyThenFallsBack: capacity errors are retried
// twice quietly (1 s, then 3 s) before the fallback.
func TestCapacityRetriesSilentlyThenFallsBack(t *testing.T) {
	capacity := fakegemini.APIError(429, "RESOURCE_EXHAUSTED", "No capacity available for model gemini-2.5-pro on the server",
		fakegemini.ErrorInfo("MODEL_CAPACITY_EXHAUSTED", "generativelanguage.googleapis.com", map[string]string{"model": "gemini-2.5-pro"}))
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", capacity, capacity, capacity)
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("ok"))
	s, tm, routes := resilient{settings: settingsWith("gemini-2.5-pro", silentChain)}.start(t, srv)
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if diff := cmp.Diff([]time.Duration{1100 * time.Millisecond, 3300 * time.Millisecond}, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	want := []string{"gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash"}
	if diff := cmp.Diff(want, models(srv.Requests())); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if fb := customs(evs, CustomModelFallback); len(fb) != 1 {
		t.Errorf("fallbacks = %+v", fb)
	}
	// A capacity failure is terminal with reason quota under a terminal
	// transition: its kind is terminal.
	if h := routes.Availability().Health("gemini-2.5-pro"); h.Status != routing.StatusTerminal {
		t.Errorf("pro health = %+v", h)
	}
}

// TestEveryModelTerminal: when the last model of the chain fails too, the
// run ends with a clear error instead of looping.
func TestEveryModelTerminal(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.RateLimitPerDay())
	s, _, routes := resilient{settings: settingsWith("gemini-2.5-pro", silentChain)}.start(t, srv)
	evs := run(t, s, "hi")
	errs := find(evs, EventError)
	if len(errs) != 1 || errs[0].Meta["errorName"] != "TerminalQuotaError" || errs[0].Meta["exitCode"] != ExitGeneric {
		t.Fatalf("errors = %+v", errs)
	}
	if !strings.Contains(errs[0].Error.Message, "gemini-2.5-flash") {
		t.Errorf("message %q does not name the last model", errs[0].Error.Message)
	}
	if diff := cmp.Diff([]string{"gemini-2.5-pro", "gemini-2.5-flash"}, models(srv.Requests())); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	// As in gemini-cli, only a fallback that happens moves the failed
	// model's state: pro is down, flash failed with nowhere to go.
	if ok, _ := routes.Availability().Available("gemini-2.5-pro"); ok {
		t.Error("pro still available")
	}
}

// TestMidStreamErrorIsReported: after the first chunk reached ADK a failure
// is reported, not retried: the text is not duplicated.
func TestMidStreamErrorIsReported(t *testing.T) {
	srv := fakegemini.New(t, fakegemini.AllowUnused())
	srv.Enqueue(
		fakegemini.MidStreamError([]string{"Hel", "lo"}, fakegemini.ErrorBody(503, "UNAVAILABLE", "The model is overloaded.")),
		fakegemini.Text("never"),
	)
	s, tm, _ := resilient{settings: settingsWith("gemini-2.5-flash", nil)}.start(t, srv)
	evs := run(t, s, "hi")
	var text string
	for _, ev := range find(evs, EventMessage)[1:] {
		text += ev.Message.Content[0].Text
	}
	if text != "Hello" {
		t.Errorf("agent text = %q", text)
	}
	if r := last(evs).AgentEnd.Reason; r != EndFailed {
		t.Errorf("reason %s", r)
	}
	if n := len(srv.Requests()); n != 1 || len(tm.Delays()) != 0 {
		t.Errorf("%d requests, delays %v", n, tm.Delays())
	}
}

// TestAbortDuringRetrySleep: an abort while the loop waits ends the stream
// at once, and no further attempt is made.
func TestAbortDuringRetrySleep(t *testing.T) {
	srv := fakegemini.New(t, fakegemini.AllowUnused())
	srv.Enqueue(fakegemini.Unavailable(), fakegemini.Text("never"))
	settings := settingsWith("gemini-2.5-flash", nil)
	routes, err := settingsroutes.New(&settings, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := &timers{Block: true, Started: make(chan time.Duration, 1)}
	s := geminiSession(t, srv, Config{Routing: routes, Retry: RetryConfig{NewTimer: tm.New}})
	id, err := s.Send(t.Context(), TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-tm.Started:
	case <-time.After(30 * time.Second):
		t.Fatal("the retry loop never slept")
	}
	s.Abort(errors.New("user pressed stop"))
	evs := collectStream(t, s, id)
	if r := last(evs).AgentEnd.Reason; r != EndAborted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

// mutatingBackend changes the request's list of contents and its
// configuration (what llm.Backend's contract leaves a backend free to hold
// but not to change) and fails, once: the retry must still send the
// original request.
type mutatingBackend struct {
	calls atomic.Int32
	seen  []string
}

func (m *mutatingBackend) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("unused")
}

func (m *mutatingBackend) GenerateContentStream(_ context.Context, _ string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		last := contents[len(contents)-1]
		m.seen = append(m.seen, last.Parts[0].Text)
		if m.calls.Add(1) == 1 {
			contents[len(contents)-1] = genai.NewContentFromText("MUTATED", genai.RoleUser)
			contents[0] = nil
			cfg.SystemInstruction = nil
			yield(nil, genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "overloaded"})
			return
		}
		yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
			Content: genai.NewContentFromText("fine", genai.RoleModel), FinishReason: genai.FinishReasonStop,
		}}}, nil)
	}
}

func (m *mutatingBackend) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

func TestAttemptsGetTheirOwnRequestCopy(t *testing.T) {
	b := &mutatingBackend{}
	s := newTestSession(t, nil, Config{Resolver: fixedResolver{B: b}})
	if r := last(run(t, s, "original")).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s", r)
	}
	if diff := cmp.Diff([]string{"original", "original"}, b.seen); diff != "" {
		t.Errorf("texts seen (-want +got):\n%s", diff)
	}
}

// TestOpenAIRetryAfter: an OpenAI-compatible server's 429 with Retry-After
// is waited out (the server's delay, plus jitter, floored at the initial
// delay) and the call succeeds on the same model.
func TestOpenAIRetryAfter(t *testing.T) {
	var calls atomic.Int32
	chat := &chatServer{scripts: [][]string{{delta("after the wait"), `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "9")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`))
			return
		}
		chat.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	settings := settingsWith("openai:local-model", nil)
	routes, err := settingsroutes.New(&settings, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := &timers{}
	s := newTestSession(t, nil, Config{
		Model:    "openai:local-model",
		Resolver: llm.NewResolver(llm.ResolverConfig{OpenAI: llm.OpenAIConfig{BaseURL: srv.URL + "/v1"}}),
		Routing:  routes, Chain: processors.NewChain(routing.NewProcessor(routes)),
		Retry: RetryConfig{NewTimer: tm.New, Rand: func() float64 { return 0.5 }},
	})
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if diff := cmp.Diff([]time.Duration{9900 * time.Millisecond}, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d calls: the backend retried by itself or not at all", n)
	}
}

func ptr[T any](v T) *T { return &v }

// TestMixedChainFallsBackToOpenAI: a user chain may cross backends; the
// Gemini model's daily quota moves the run to an OpenAI-compatible server,
// whose request carries none of Gemini's thinking config.
func TestMixedChainFallsBackToOpenAI(t *testing.T) {
	gem := fakegemini.New(t)
	gem.EnqueueFor("gemini-2.5-flash", fakegemini.RateLimitPerDay())
	chat := &chatServer{scripts: [][]string{{delta("local answer"), `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}}}
	oai := httptest.NewServer(chat)
	t.Cleanup(oai.Close)
	settings := settingsWith("gemini-2.5-flash", func(s *config.Settings) {
		s.Model.FallbackChains = [][]config.ModelPolicySettings{{
			{Model: "gemini-2.5-flash", Actions: map[string]string{"terminal": "silent"}},
			{Model: "openai:qwen3", LastResort: true, Actions: map[string]string{"terminal": "silent"}},
		}}
	})
	routes, err := settingsroutes.New(&settings, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSession(t, nil, Config{
		Model: "gemini-2.5-flash",
		Resolver: llm.NewResolver(llm.ResolverConfig{
			Gemini: llm.GeminiConfig{APIKey: fakegemini.DefaultAPIKey, BaseURL: gem.URL},
			OpenAI: llm.OpenAIConfig{BaseURL: oai.URL + "/v1"},
		}),
		Routing: routes, Chain: processors.NewChain(routing.NewProcessor(routes)),
	})
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	if u := find(evs, EventUsage); len(u) != 1 || u[0].Usage.Model != "openai:qwen3" {
		t.Errorf("usage = %+v", u)
	}
	chat.mu.Lock()
	defer chat.mu.Unlock()
	if len(chat.bodies) != 1 || chat.bodies[0]["model"] != "qwen3" {
		t.Fatalf("openai requests = %v", chat.bodies)
	}
	for _, k := range []string{"reasoning_effort", "top_k", "temperature"} {
		if v, ok := chat.bodies[0][k]; ok {
			t.Errorf("Gemini's %s leaked into the OpenAI request: %v", k, v)
		}
	}
}

// TestSessionsShareAvailability: a second session on the same availability
// (a subagent, another prompt of a batch) skips the model the first one
// found out of quota, without asking the server.
func TestSessionsShareAvailability(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("one"), fakegemini.Text("two"))
	shared := routing.NewAvailability()
	first, _, _ := resilient{settings: settingsWith("gemini-2.5-pro", silentChain), avail: shared}.start(t, srv)
	second, _, _ := resilient{settings: settingsWith("gemini-2.5-pro", silentChain), avail: shared}.start(t, srv)
	if r := last(run(t, first, "a")).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("first: %s", r)
	}
	if r := last(run(t, second, "b")).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("second: %s", r)
	}
	want := []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash"}
	if diff := cmp.Diff(want, models(srv.Requests())); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}
