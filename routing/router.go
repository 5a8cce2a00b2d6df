package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/modelcall"
)

// UtilityCaller is the classifiers' utility-model caller: a
// [modelcall.Caller], which routing uses but does not own.
type UtilityCaller = modelcall.Caller

// DefaultClassifierThreshold is the complexity score from which the
// numerical classifier picks Pro, gemini-cli's default when the remote
// CLASSIFIER_THRESHOLD flag is unset or out of range.
const DefaultClassifierThreshold = 90

// RouterSettings are the routing settings. The zero value turns plan-mode
// routing and the numerical classifier off; use [DefaultRouterSettings] for
// gemini-cli's defaults.
type RouterSettings struct {
	// PlanRouting is gemini-cli's planSettings.modelRouting (default on):
	// with an auto alias, plan mode routes to Pro and an approved plan to
	// Flash, so that planning gets the stronger model and implementation
	// the cheaper one.
	PlanRouting bool
	// NumericalRouting turns the numerical (1–100 score) classifier on for
	// the Gemini 3 family, replacing the flash/pro classifier there.
	// gemini-cli reads it from a remote experiment flag that defaults to on.
	NumericalRouting bool
	// NumericalThreshold is the score from which the numerical classifier
	// picks Pro, 1–100. gemini-cli takes it from a remote flag; a value set
	// here plays that role (source "NumericalClassifier (Remote)"). 0, or a
	// value out of range, means [DefaultClassifierThreshold] (source
	// "NumericalClassifier (Default)").
	NumericalThreshold int
	// ClassifierModel is the model the classifiers call. "" is gemini-cli's
	// "classifier" model-config alias, whose model is "flash-lite", that is
	// [DefaultFlashLiteModel]. Aliases are resolved with the catalog's
	// access; other schemes ("openai:…") are used as they are.
	ClassifierModel string
}

// DefaultRouterSettings returns gemini-cli's defaults: plan-mode routing
// and numerical routing on, the default threshold and classifier model.
func DefaultRouterSettings() RouterSettings {
	return RouterSettings{PlanRouting: true, NumericalRouting: true}
}

// threshold returns the numerical classifier's threshold and whether it
// was configured (gemini-cli's "Remote" group) rather than defaulted.
func (s RouterSettings) threshold() (int, bool) {
	if s.NumericalThreshold >= 1 && s.NumericalThreshold <= 100 {
		return s.NumericalThreshold, true
	}
	return DefaultClassifierThreshold, false
}

// classifierModel returns the concrete model the classifiers call.
func (s RouterSettings) classifierModel(acc Access) string {
	m := s.ClassifierModel
	if m == "" {
		m = AliasFlashLite
	}
	return ResolveModel(m, acc)
}

// Env is what strategies read about the session; gemini-cli's strategies
// read the same from its Config. The router only reads it.
type Env struct {
	// ConfiguredModel is the configured model (config.getModel()); it may
	// be an alias such as "auto". "" means "auto", gemini-cli's default.
	ConfiguredModel string
	// ApprovalMode is the session's approval mode: "plan", "default",
	// "auto_edit" or "yolo".
	ApprovalMode string
	// PlanApproved reports that an approved plan exists, which makes the
	// approval-mode strategy pick Flash for the implementation.
	PlanApproved bool
	// Catalog resolves chains and tells which models the user may access;
	// nil is the built-in catalog with no preview access.
	Catalog *Catalog
	// Availability is the session's model health; nil treats every model
	// as available.
	Availability *Availability
	// Settings are the routing settings.
	Settings RouterSettings
	// Utility makes the classifiers' model calls; nil makes the classifier
	// strategies return no decision.
	Utility UtilityCaller
	// Logger receives routing diagnostics; nil is slog.Default().
	Logger *slog.Logger
}

// logger returns the logger to use.
func (e *Env) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}

// configured returns the configured model; "" is gemini-cli's default,
// "auto", as for [ChainQuery.Configured].
func (e *Env) configured() string {
	if e.ConfiguredModel == "" {
		return AliasAuto
	}
	return e.ConfiguredModel
}

// requested returns the model a strategy routes for: the context's
// requested model, else the configured one (gemini-cli's
// context.requestedModel ?? config.getModel()).
func (e *Env) requested(rc *RoutingContext) string {
	if rc.RequestedModel != "" {
		return rc.RequestedModel
	}
	return e.configured()
}

// available reports whether model may be called, with a nil Availability
// meaning every model may.
func (e *Env) available(model string) (bool, Reason) {
	if e.Availability == nil {
		return true, ""
	}
	return e.Availability.Available(model)
}

// RoutingContext is one routing question.
type RoutingContext struct {
	// Contents is the whole request as ADK built it, after the content and
	// masking processors. Its last content is the current request (user
	// text, or function responses); the rest is the history.
	Contents []*genai.Content
	// RequestedModel is the model asked for this call; "" means the
	// configured model.
	RequestedModel string
}

// request returns the current request content, or nil.
func (rc *RoutingContext) request() *genai.Content {
	if len(rc.Contents) == 0 {
		return nil
	}
	return rc.Contents[len(rc.Contents)-1]
}

// history returns the contents before the current request.
func (rc *RoutingContext) history() []*genai.Content {
	if len(rc.Contents) == 0 {
		return nil
	}
	return rc.Contents[:len(rc.Contents)-1]
}

// Decision is a routing decision, with gemini-cli's metadata (used for
// logging and telemetry).
type Decision struct {
	// Model is the concrete model to call.
	Model string
	// Source names the strategy that decided; the router prefixes it with
	// "agent-router/".
	Source string
	// Latency is how long deciding took. The router reports it rounded to
	// the millisecond, as gemini-cli's telemetry does.
	Latency time.Duration
	// Reasoning explains the decision.
	Reasoning string
	// Error is the failure message of a "router-exception" decision.
	Error string
}

// Strategy is one routing rule. Route returns a decision, or (nil, nil)
// when it has no opinion; an error means "skip me" inside the router. The
// last strategy of a router must decide.
type Strategy interface {
	// Name identifies the strategy in logs (gemini-cli's strategy name).
	Name() string
	// Route decides for rc.
	Route(ctx context.Context, rc *RoutingContext, env *Env) (*Decision, error)
}

// RouterName is the name of the default router's composite strategy in
// gemini-cli, the prefix of every decision's source.
const RouterName = "agent-router"

// SourceRouterException is the source of the decision the router makes
// when its terminal strategy fails.
const SourceRouterException = "router-exception"

// Router runs strategies in order, as gemini-cli's CompositeStrategy named
// "agent-router" does: the first decision wins, a failing non-terminal
// strategy is skipped, and the last strategy must decide. It is immutable
// and safe for concurrent use.
type Router struct {
	strategies []Strategy
	// sources caches "agent-router/<name>" per strategy, so the common
	// path, where a strategy's source is its name, does not allocate.
	sources []string
}

// NewRouter returns a router over strategies, tried in order; the last
// one is the terminal strategy.
func NewRouter(strategies ...Strategy) *Router {
	r := &Router{
		strategies: append([]Strategy(nil), strategies...),
		sources:    make([]string, len(strategies)),
	}
	for i, s := range strategies {
		r.sources[i] = RouterName + "/" + s.Name()
	}
	return r
}

// DefaultRouter returns gemini-cli's router: fallback → override →
// approval-mode → classifier → numerical_classifier → default. gemini-cli's
// optional Gemma classifier (a local LiteRT server, between approval-mode
// and classifier) is not implemented.
func DefaultRouter() *Router {
	return NewRouter(
		FallbackStrategy(),
		OverrideStrategy(),
		ApprovalModeStrategy(),
		ClassifierStrategy(),
		NumericalClassifierStrategy(),
		DefaultStrategy(),
	)
}

// Strategies returns the router's strategies in order.
func (r *Router) Strategies() []Strategy {
	return append([]Strategy(nil), r.strategies...)
}

// errNoDecision is the terminal strategy returning no decision, which
// gemini-cli's types rule out and Go's cannot.
var errNoDecision = errors.New("terminal strategy returned no decision")

// Route decides the model for rc. It never fails: when the terminal
// strategy fails (or there are no strategies), the decision is the
// configured model, resolved, with source "router-exception", so the call
// still goes ahead. Other sources are "agent-router/<source>". The latency
// is the deciding strategy's when it reports one, else the router's total,
// rounded to the millisecond.
func (r *Router) Route(ctx context.Context, rc RoutingContext, env *Env) Decision {
	if env == nil {
		env = &Env{}
	}
	start := time.Now()
	d, err := r.route(ctx, &rc, env, start)
	if err != nil {
		d = Decision{
			Model:     ResolveModel(env.configured(), env.Catalog.Access()),
			Source:    SourceRouterException,
			Latency:   time.Since(start).Round(time.Millisecond),
			Reasoning: "An exception occurred during routing.",
			Error:     err.Error(),
		}
		env.logger().Debug("[Routing] Exception during routing",
			"error", err, "model", d.Model, "source", d.Source)
		return d
	}
	if log := env.logger(); log.Enabled(ctx, slog.LevelDebug) {
		log.Debug("[Routing] Selected model", "model", d.Model, "source", d.Source,
			"latency_ms", d.Latency.Milliseconds(), "reasoning", d.Reasoning)
	}
	return d
}

// route is the composite strategy.
func (r *Router) route(ctx context.Context, rc *RoutingContext, env *Env, start time.Time) (Decision, error) {
	n := len(r.strategies)
	if n == 0 {
		return Decision{}, errors.New("router has no strategies")
	}
	for i, s := range r.strategies[:n-1] {
		d, err := call(ctx, s, rc, env)
		if err != nil {
			env.logger().Debug("[Routing] Strategy failed. Continuing to next strategy.",
				"strategy", s.Name(), "error", err)
			continue
		}
		if d != nil {
			return r.finalize(i, d, start), nil
		}
	}
	last := r.strategies[n-1]
	d, err := call(ctx, last, rc, env)
	if err == nil && d == nil {
		err = errNoDecision
	}
	if err != nil {
		// gemini-cli reports this to the user as an error (emitFeedback).
		env.logger().Error("[Routing] Critical Error: terminal strategy failed. Routing cannot proceed.",
			"strategy", last.Name(), "error", err)
		return Decision{}, fmt.Errorf("terminal strategy %q: %w", last.Name(), err)
	}
	return r.finalize(n-1, d, start), nil
}

// call runs one strategy, turning a panic into an error: gemini-cli
// catches every exception a strategy throws, and a buggy strategy must not
// take the session down.
func call(ctx context.Context, s Strategy, rc *RoutingContext, env *Env) (d *Decision, err error) {
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, fmt.Errorf("strategy %q panicked: %v", s.Name(), p)
		}
	}()
	return s.Route(ctx, rc, env)
}

// finalize is gemini-cli's finalizeDecision: the composite source and the
// latency (the child's if non-zero, else the total, rounded).
func (r *Router) finalize(i int, d *Decision, start time.Time) Decision {
	out := *d
	if d.Source == r.strategies[i].Name() {
		out.Source = r.sources[i]
	} else {
		out.Source = RouterName + "/" + d.Source
	}
	lat := d.Latency
	if lat == 0 {
		lat = time.Since(start)
	}
	out.Latency = lat.Round(time.Millisecond)
	return out
}
