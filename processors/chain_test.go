package processors_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// recorder is a model backend that records what each request carried.
type recorder struct {
	mu   sync.Mutex
	reqs []call
	// afterYield, when set, runs once the consumer has taken the
	// response: after ADK's after-model callbacks.
	afterYield func()
}

type call struct {
	model    string
	contents []*genai.Content
	cfg      *genai.GenerateContentConfig
}

func (r *recorder) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("unused")
}

func (r *recorder) GenerateContentStream(_ context.Context, m string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, call{m, contents, cfg})
	r.mu.Unlock()
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
			Content: genai.NewContentFromText("ok", genai.RoleModel), FinishReason: genai.FinishReasonStop,
		}}}, nil)
		if r.afterYield != nil {
			r.afterYield()
		}
	}
}

func (r *recorder) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

func (r *recorder) calls() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.reqs...)
}

type resolver struct{ b llm.Backend }

func (r resolver) Resolve(_ context.Context, name string) (llm.Target, error) {
	ref, err := llm.ParseModel(name)
	return llm.Target{Ref: ref, Backend: r.b}, err
}

// funcProcessor is a processor from a function.
type funcProcessor struct {
	name string
	fn   func(req *model.LLMRequest) error
}

func (p funcProcessor) Name() string { return p.name }
func (p funcProcessor) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	return p.fn(req)
}

// stamp appends a marker to the system instruction.
func stamp(name string, seen *[]string) funcProcessor {
	return funcProcessor{name, func(req *model.LLMRequest) error {
		si := req.Config.SystemInstruction
		var prior []string
		for _, p := range si.Parts {
			if strings.HasPrefix(p.Text, "stamp:") {
				prior = append(prior, p.Text)
			}
		}
		*seen = append(*seen, name+" saw "+strings.Join(prior, ","))
		si.Parts = append(si.Parts, &genai.Part{Text: "stamp:" + name})
		return nil
	}}
}

func runSession(t *testing.T, cfg runtime.Config) []runtime.Event {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gemini-2.5-flash"
	}
	if cfg.Instruction == "" {
		cfg.Instruction = "base instruction"
	}
	s, err := runtime.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.Send(t.Context(), runtime.TextMessage("hello"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestChainRunsInDeclaredOrder(t *testing.T) {
	var seen []string
	rec := &recorder{}
	chain := processors.NewChain(stamp("content", &seen), stamp("masking", &seen), stamp("routing", &seen))
	runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: chain})
	want := []string{"content saw ", "masking saw stamp:content", "routing saw stamp:content,stamp:masking"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("processor order (-want +got):\n%s", diff)
	}
	var names []string
	for _, p := range chain.Processors() {
		names = append(names, p.Name())
	}
	if diff := cmp.Diff([]string{"content", "masking", "routing"}, names); diff != "" {
		t.Errorf("Processors() (-want +got):\n%s", diff)
	}
}

// readTool is a read-only tool for declaration tests.
type readTool struct{ name string }

func (r readTool) Name() string        { return r.name }
func (r readTool) DisplayName() string { return r.name }
func (r readTool) Kind() tools.Kind    { return tools.KindRead }
func (r readTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: r.name, Description: "reads"}
}
func (r readTool) Describe(map[string]any) string { return "" }
func (r readTool) Execute(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{}, nil
}

// TestRewritesReachTheModel: a processor's rewrite of the model, the
// generation config, the system instruction and the tool declarations is what
// the backend receives.
func TestRewritesReachTheModel(t *testing.T) {
	rec := &recorder{}
	temp := float32(0.25)
	rewrite := funcProcessor{"rewrite", func(req *model.LLMRequest) error {
		req.Model = "gemini-2.5-pro"
		req.Config.Temperature = &temp
		req.Config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: "rewritten instruction"}}}
		// Keep only the "keep" tool, in the declarations and the dispatch map.
		for _, tl := range req.Config.Tools {
			var kept []*genai.FunctionDeclaration
			for _, d := range tl.FunctionDeclarations {
				if d.Name == "keep" {
					kept = append(kept, d)
				}
			}
			tl.FunctionDeclarations = kept
		}
		delete(req.Tools, "drop")
		return nil
	}}
	runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: processors.NewChain(rewrite),
		Tools: []tools.Tool{readTool{"keep"}, readTool{"drop"}}})
	c := rec.calls()[0]
	if c.model != "gemini-2.5-pro" {
		t.Errorf("model = %q", c.model)
	}
	if c.cfg.Temperature == nil || *c.cfg.Temperature != temp {
		t.Errorf("temperature = %v", c.cfg.Temperature)
	}
	if si := c.cfg.SystemInstruction; len(si.Parts) != 1 || si.Parts[0].Text != "rewritten instruction" {
		t.Errorf("system instruction = %+v", si)
	}
	var names []string
	for _, tl := range c.cfg.Tools {
		for _, d := range tl.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	if diff := cmp.Diff([]string{"keep"}, names); diff != "" {
		t.Errorf("declarations (-want +got):\n%s", diff)
	}
}

// TestHooksRunAfterTheChain: a hook plugin sees the request only after every
// processor has rewritten it.
func TestHooksRunAfterTheChain(t *testing.T) {
	var order []string
	var hookSaw string
	proc := funcProcessor{"content", func(req *model.LLMRequest) error {
		order = append(order, "chain")
		req.Config.SystemInstruction.Parts = append(req.Config.SystemInstruction.Parts, &genai.Part{Text: "from the chain"})
		return nil
	}}
	hook, err := plugin.New(plugin.Config{Name: "hooks", BeforeModelCallback: func(_ agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
		order = append(order, "hook")
		hookSaw = req.Config.SystemInstruction.Parts[len(req.Config.SystemInstruction.Parts)-1].Text
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	runSession(t, runtime.Config{Resolver: resolver{&recorder{}}, Chain: processors.NewChain(proc), Plugins: []*plugin.Plugin{hook}})
	if diff := cmp.Diff([]string{"chain", "hook"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if hookSaw != "from the chain" {
		t.Errorf("the hook saw %q, want the chain's rewrite", hookSaw)
	}
}

func TestChainErrorFailsTheCall(t *testing.T) {
	bad := funcProcessor{"broken", func(*model.LLMRequest) error { return errors.New("no way") }}
	rec := &recorder{}
	evs := runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: processors.NewChain(bad)})
	var msg string
	for _, ev := range evs {
		if ev.Type == runtime.EventError {
			msg = ev.Error.Message
		}
	}
	if !strings.Contains(msg, "request processor broken: no way") {
		t.Errorf("error = %q", msg)
	}
	if len(rec.calls()) != 0 {
		t.Error("the model was called despite the processor's error")
	}
}

// settler is a processor that leaves work pending on every request and
// records, at each settle, how many model calls had been made.
type settler struct {
	rec     *recorder
	mu      sync.Mutex
	pending bool
	log     []string
	err     error
}

func (s *settler) Name() string { return "settler" }

func (s *settler) ProcessRequest(agent.Context, *model.LLMRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = true
	s.log = append(s.log, "process")
	return nil
}

func (s *settler) Settle(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pending {
		return nil
	}
	s.pending = false
	s.log = append(s.log, "settle after "+strings.Repeat("call ", len(s.rec.calls())))
	return s.err
}

// TestChainSettlesAfterTheModelAnswers: the work a processor leaves
// pending overlaps the model call and is settled on the model's first
// response, before the run goes on; a settle error fails the call.
func TestChainSettlesAfterTheModelAnswers(t *testing.T) {
	rec := &recorder{}
	s := &settler{rec: rec}
	rec.afterYield = func() {
		s.mu.Lock()
		s.log = append(s.log, "response taken")
		s.mu.Unlock()
	}
	runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: processors.NewChain(s)})
	want := []string{"process", "settle after call ", "response taken"}
	if d := cmp.Diff(want, s.log); d != "" {
		t.Errorf("settle order (-want +got):\n%s", d)
	}

	rec = &recorder{}
	s = &settler{rec: rec, err: errors.New("disk full")}
	evs := runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: processors.NewChain(s)})
	var msg string
	for _, ev := range evs {
		if ev.Type == runtime.EventError {
			msg = ev.Error.Message
		}
	}
	if !strings.Contains(msg, "request processor settler: disk full") {
		t.Errorf("error = %q, want the settle error", msg)
	}
}

// TestChainSettlesWhenALaterProcessorFails: the request is not sent, so
// the earlier processor's pending work is settled before Run returns.
func TestChainSettlesWhenALaterProcessorFails(t *testing.T) {
	rec := &recorder{}
	s := &settler{rec: rec, err: errors.New("disk full")}
	bad := funcProcessor{"broken", func(*model.LLMRequest) error { return errors.New("no way") }}
	evs := runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: processors.NewChain(s, bad)})
	var msg string
	for _, ev := range evs {
		if ev.Type == runtime.EventError {
			msg = ev.Error.Message
		}
	}
	for _, part := range []string{"request processor broken: no way", "request processor settler: disk full"} {
		if !strings.Contains(msg, part) {
			t.Errorf("error = %q, want it to hold %q", msg, part)
		}
	}
	if d := cmp.Diff([]string{"process", "settle after "}, s.log); d != "" {
		t.Errorf("settle order (-want +got):\n%s", d)
	}
}
