package routing

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/adk/v2/model"

	"github.com/agentry-dev/agentry/modelcall"
)

// DefaultMaxAttempts is gemini-cli's retry cap per model (and its ceiling
// for the general.maxAttempts setting).
const DefaultMaxAttempts = 10

// ServiceConfig configures a Service. Only Model is required.
type ServiceConfig struct {
	// Model is the configured model: a name or an alias such as "auto".
	Model string
	// ApprovalMode is the session's approval mode (plan, default,
	// auto_edit, yolo); plan makes every fallback silent.
	ApprovalMode string
	// Availability is the model health state. Pass the parent's to share it
	// with subagents and the other prompts of a batch; nil creates one.
	Availability *Availability
	// Catalog holds the policy chains; nil is the built-in catalog.
	Catalog *Catalog
	// Router decides the model of each new sequence; nil is DefaultRouter.
	Router *Router
	// Configs are the per-model request configs; nil is the built-in ones.
	Configs *ModelConfigs
	// Settings tune the router.
	Settings RouterSettings
	// Utility makes the classifiers' utility-model calls; nil makes the
	// classifier strategies return no decision until [Service.UseUtility]
	// provides one.
	Utility modelcall.Caller
	// Handler asks a human about non-silent fallbacks; nil (batch runs)
	// means only silent policies fall back.
	Handler FallbackHandler
	// MaxAttempts bounds the attempts per model when its policy does not;
	// 0 is DefaultMaxAttempts, and more than that is capped to it.
	MaxAttempts int
	// Logger receives routing diagnostics; nil is slog.Default().
	Logger *slog.Logger
}

// Service is one session's model state — gemini-cli's Config model fields
// (configured and active model, fallback mode and overrides) together with
// the client's sequence-sticky model — and the operations the routing
// processor and the model dispatcher perform on it. It is safe for
// concurrent use.
type Service struct {
	avail       *Availability
	catalog     *Catalog
	router      *Router
	configs     *ModelConfigs
	settings    RouterSettings
	maxAttempts int
	log         *slog.Logger

	mu           sync.Mutex
	configured   string
	active       string
	sequence     string // the model of the current tool-call sequence
	promptID     string
	approvalMode string
	fallbackMode bool
	overrides    map[string]string
	handler      FallbackHandler
	utility      modelcall.Caller
	prepared     *Prepared
}

// Prepared is the routing processor's decision for one chat model call:
// the model it routed the request to, and the request as it was before
// routing, so that a fallback can re-apply another model's config to it.
// The service keeps the last one under its invocation id; the dispatcher
// asks for it by that id ([Service.Prepared]) and executes it
// ([Service.Execute]). Model calls of one session are sequential, so one
// slot is enough. Utility calls are never prepared.
type Prepared struct {
	// Invocation is the id of the invocation the call belongs to.
	Invocation string
	// Model is the model the processor routed the call to.
	Model string
	snap  snapshot
}

// NewService returns the model service of one session.
func NewService(cfg ServiceConfig) (*Service, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("routing: %w", noModel(""))
	}
	s := &Service{
		avail: cfg.Availability, catalog: cfg.Catalog, router: cfg.Router, configs: cfg.Configs, utility: cfg.Utility,
		settings: cfg.Settings, maxAttempts: cfg.MaxAttempts, log: cfg.Logger,
		configured: cfg.Model, approvalMode: cfg.ApprovalMode, handler: cfg.Handler,
		overrides: map[string]string{},
	}
	if s.avail == nil {
		s.avail = NewAvailability()
	}
	if s.catalog == nil {
		c, err := NewCatalog(CatalogConfig{})
		if err != nil {
			return nil, err
		}
		s.catalog = c
	}
	if s.router == nil {
		s.router = DefaultRouter()
	}
	if s.configs == nil {
		s.configs, _ = NewModelConfigs(nil)
	}
	if s.maxAttempts <= 0 || s.maxAttempts > DefaultMaxAttempts {
		s.maxAttempts = DefaultMaxAttempts
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Availability returns the model health state the service uses.
func (s *Service) Availability() *Availability { return s.avail }

// Model returns the configured model (after a retry_always fallback, the
// fallback model).
func (s *Service) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configured
}

// ActiveModel returns the model the last selection chose, or "" before
// the first model call.
func (s *Service) ActiveModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// InFallbackMode reports whether a retry_always fallback switched the
// session's model.
func (s *Service) InFallbackMode() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fallbackMode
}

// SetModel is a user's model change: like gemini-cli's setModel it clears
// the availability state, the fallback mode, the overrides and the
// sequence model.
func (s *Service) SetModel(name string) {
	s.mu.Lock()
	s.configured, s.active, s.sequence = name, "", ""
	s.fallbackMode = false
	clear(s.overrides)
	s.mu.Unlock()
	s.avail.Reset()
}

// SetApprovalMode records the session's approval mode. Entering or leaving
// plan or yolo mode ends the current sequence, as in gemini-cli, because
// the approval-mode strategy may now pick another model.
func (s *Service) SetApprovalMode(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mode == s.approvalMode {
		return
	}
	if routingMode(mode) || routingMode(s.approvalMode) {
		s.sequence = ""
	}
	s.approvalMode = mode
}

func routingMode(m string) bool { return m == "plan" || m == "yolo" }

// SetFallbackHandler installs the handler interactive drivers use to ask
// about non-silent fallbacks; nil removes it.
func (s *Service) SetFallbackHandler(h FallbackHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// UseUtility gives the classifier strategies the caller their utility
// calls go through, when that caller can only be built after the service:
// the session's dispatcher serves utility calls and needs the service to
// select their models, so the session's builder wires the two together.
func (s *Service) UseUtility(u modelcall.Caller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.utility = u
}

// Routed is the outcome of routing one model call.
type Routed struct {
	// Model is the concrete model the request now names.
	Model string
	// Decision is the router's decision; nil when the sequence's model was
	// reused.
	Decision *Decision
}

// Route chooses the model of one chat model call and rewrites req for it:
// the sequence's model if one is set, else the router's decision, then the
// first available model of its policy chain. It marks a new turn (sticky
// retries become usable again) and, when promptID differs from the last
// call's, a new sequence. promptID is the invocation id, under which the
// decision is kept for the dispatcher ([Service.Prepared]).
func (s *Service) Route(ctx context.Context, req *model.LLMRequest, promptID string) Routed {
	s.avail.ResetTurn()
	s.mu.Lock()
	if promptID != s.promptID {
		s.promptID, s.sequence = promptID, ""
	}
	seq := s.sequence
	env := Env{
		ConfiguredModel: s.configured, ApprovalMode: s.approvalMode, Catalog: s.catalog,
		Availability: s.avail, Settings: s.settings, Utility: s.utility, Logger: s.log,
	}
	s.mu.Unlock()

	var out Routed
	name := seq
	if name == "" {
		d := s.router.Route(ctx, RoutingContext{Contents: req.Contents, RequestedModel: env.ConfiguredModel}, &env)
		out.Decision = &d
		name = d.Model
	}
	sel := s.selectModel(name, false, true)
	out.Model = sel.model
	s.mu.Lock()
	s.sequence = sel.model
	p := &Prepared{Invocation: promptID, Model: sel.model, snap: takeSnapshot(req)}
	s.prepared = p
	s.mu.Unlock()
	p.snap.apply(req, sel.model, s.configs.For(sel.model))
	return out
}

// Prepared returns the routing processor's decision for the chat call of
// invocation id, or nil when the processor has not prepared one for it.
func (s *Service) Prepared(invocation string) *Prepared {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.prepared; p != nil && invocation != "" && p.Invocation == invocation {
		return p
	}
	return nil
}

// ModelSelection is the model a call is made with and its attempt budget.
type ModelSelection struct {
	// Model is the concrete model to call.
	Model string
	// MaxAttempts bounds the attempts on Model: a sticky retry's budget,
	// else its policy's, else the session's.
	MaxAttempts int
}

// Select is gemini-cli's applyModelSelection right before a model call no
// processor prepared (a utility call): the first available model of
// req.Model's chain, consuming a sticky attempt; req only gets its model
// name changed.
func (s *Service) Select(req *model.LLMRequest) ModelSelection {
	return s.selectFor(req, req.Model, nil)
}

// Execute is gemini-cli's applyModelSelection right before the chat call
// the routing processor prepared as p: the first available model of
// req.Model's chain (a hook may have changed it since), consuming a sticky
// attempt, with req rewritten from p's snapshot for the selected model's
// config. A nil p makes it [Service.Select].
func (s *Service) Execute(req *model.LLMRequest, p *Prepared) ModelSelection {
	return s.selectFor(req, req.Model, p)
}

// Reselect picks the model to retry with after a retry intent: the active
// model if the fallback changed it since activeBefore, else the next
// available model for failed. It rewrites req like Execute.
func (s *Service) Reselect(req *model.LLMRequest, p *Prepared, failed, activeBefore string) ModelSelection {
	name := failed
	if active := s.ActiveModel(); active != "" && !sameModel(active, activeBefore) {
		name = active
	}
	return s.selectFor(req, name, p)
}

// selectFor selects for name and rewrites req for the selected model: a
// prepared (chat) request from its snapshot, any other by name only.
func (s *Service) selectFor(req *model.LLMRequest, name string, p *Prepared) ModelSelection {
	sel := s.selectModel(name, true, p != nil)
	switch {
	case req.Model == sel.model:
	case p != nil:
		p.snap.apply(req, sel.model, s.configs.For(sel.model))
	default:
		req.Model = sel.model
	}
	return ModelSelection{Model: sel.model, MaxAttempts: sel.maxAttempts}
}

// Resolve resolves name with the session's access ([ResolveModel]), as
// every selection does: the model an alias or a preview id stands for in
// this session.
func (s *Service) Resolve(name string) string {
	return ResolveModel(name, s.catalog.Access())
}

// MarkHealthy records a successful call of model.
func (s *Service) MarkHealthy(model string) { s.avail.MarkHealthy(model) }

// MaxAttempts is the attempt budget of model: its policy's, else the
// session's.
func (s *Service) MaxAttempts(model string) int {
	chain, _ := s.chainFor(model)
	if i := chain.Index(model); i >= 0 && chain[i].MaxAttempts > 0 {
		return chain[i].MaxAttempts
	}
	return s.maxAttempts
}

type selected struct {
	model       string
	maxAttempts int
}

// selectModel is applyModelSelection: resolve the name (overrides, then
// aliases), take the first available model of its chain (or the chain's
// last resort), make it the active model for chat calls, and consume a
// sticky attempt when asked.
func (s *Service) selectModel(name string, consume, chat bool) selected {
	s.mu.Lock()
	if o, ok := s.overrides[NormalizeModelID(name)]; ok {
		name = o
	}
	s.mu.Unlock()
	resolved := s.Resolve(name)
	chain, _ := s.chainFor(resolved)
	sel := SelectionForAvailability(chain, s.avail)
	final := sel.Model
	if chat {
		s.mu.Lock()
		s.active = final
		s.mu.Unlock()
	}
	if sel.Attempts > 0 && consume {
		s.avail.ConsumeStickyAttempt(final)
	}
	max := sel.Attempts
	if max == 0 {
		max = s.MaxAttempts(final)
	}
	return selected{model: final, maxAttempts: max}
}

// chainFor is the chain of model for selection: shared policies, not to be
// modified (the fallback handler resolves its own copy).
func (s *Service) chainFor(model string) (Chain, bool) {
	s.mu.Lock()
	q := ChainQuery{Preferred: model, Active: s.active, Configured: s.configured}
	s.mu.Unlock()
	return s.catalog.resolve(q)
}
