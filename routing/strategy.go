package routing

import (
	"context"
	"time"
)

// Strategy names, as gemini-cli's strategies name themselves. The deciding
// strategy's source is its name, except for the classifiers (see
// [SourceClassifier]).
const (
	// StrategyFallback names [FallbackStrategy].
	StrategyFallback = "fallback"
	// StrategyOverride names [OverrideStrategy].
	StrategyOverride = "override"
	// StrategyApprovalMode names [ApprovalModeStrategy].
	StrategyApprovalMode = "approval-mode"
	// StrategyClassifier names [ClassifierStrategy].
	StrategyClassifier = "classifier"
	// StrategyNumericalClassifier names [NumericalClassifierStrategy].
	StrategyNumericalClassifier = "numerical_classifier"
	// StrategyDefault names [DefaultStrategy].
	StrategyDefault = "default"
)

// FallbackStrategy returns gemini-cli's fallback strategy: when the
// requested model (resolved) is unavailable, it picks the first available
// model of the requested model's chain (its last resort when none is), if
// that differs from the requested model. It comes first so that a model
// known to be out of quota is not even tried.
func FallbackStrategy() Strategy { return fallbackStrategy{} }

type fallbackStrategy struct{}

// Name implements [Strategy].
func (fallbackStrategy) Name() string { return StrategyFallback }

// Route implements [Strategy]; see the constructor for the rules.
func (fallbackStrategy) Route(_ context.Context, rc *RoutingContext, env *Env) (*Decision, error) {
	if env.Availability == nil {
		return nil, nil
	}
	requested := env.requested(rc)
	resolved := ResolveModel(requested, env.Catalog.Access())
	ok, reason := env.Availability.Available(resolved)
	if ok {
		return nil, nil
	}
	// Plan mode only changes the chain's actions, not its models, so it is
	// left out here.
	chain, _ := env.Catalog.resolve(ChainQuery{Preferred: requested, Configured: env.ConfiguredModel})
	selected := SelectForAvailability(chain, env.Availability)
	// gemini-cli compares with the raw requested name; normalizing first
	// keeps "models/x" or "gemini:x" from "falling back" to x itself.
	if selected == "" || selected == NormalizeModelID(requested) {
		return nil, nil
	}
	return &Decision{
		Model:     selected,
		Source:    StrategyFallback,
		Reasoning: "Model " + requested + " is unavailable (" + string(reason) + "). Using fallback: " + selected,
	}, nil
}

// OverrideStrategy returns gemini-cli's override strategy: any requested
// model that is not an auto alias is used as it is (resolved), bypassing
// the classifiers, because the user chose it.
func OverrideStrategy() Strategy { return overrideStrategy{} }

type overrideStrategy struct{}

// Name implements [Strategy].
func (overrideStrategy) Name() string { return StrategyOverride }

// Route implements [Strategy]; see the constructor for the rules.
func (overrideStrategy) Route(_ context.Context, rc *RoutingContext, env *Env) (*Decision, error) {
	requested := env.requested(rc)
	if IsAutoAlias(requested) {
		return nil, nil
	}
	return &Decision{
		Model:     ResolveModel(requested, env.Catalog.Access()),
		Source:    StrategyOverride,
		Reasoning: "Routing bypassed by forced model directive. Using: " + requested,
	}, nil
}

// ApprovalModeStrategy returns gemini-cli's approval-mode strategy. For
// auto aliases with plan routing on, plan mode routes to the family's Pro
// model, for high-quality planning, and an approved plan outside plan mode
// routes to its Flash model, for cheap implementation. Otherwise it has no
// opinion.
func ApprovalModeStrategy() Strategy { return approvalModeStrategy{} }

type approvalModeStrategy struct{}

// Name implements [Strategy].
func (approvalModeStrategy) Name() string { return StrategyApprovalMode }

// Route implements [Strategy]; see the constructor for the rules.
func (approvalModeStrategy) Route(_ context.Context, rc *RoutingContext, env *Env) (*Decision, error) {
	requested := env.requested(rc)
	if !IsAutoAlias(requested) || !env.Settings.PlanRouting {
		return nil, nil
	}
	start := time.Now()
	acc := env.Catalog.Access()
	switch {
	case env.ApprovalMode == "plan":
		return &Decision{
			Model:     ResolveClassifierChoice(requested, AliasPro, acc),
			Source:    StrategyApprovalMode,
			Latency:   time.Since(start),
			Reasoning: "Routing to Pro model because ApprovalMode is PLAN.",
		}, nil
	case env.PlanApproved:
		// gemini-cli names the plan file here; Env only knows that an
		// approved plan exists.
		return &Decision{
			Model:     ResolveClassifierChoice(requested, AliasFlash, acc),
			Source:    StrategyApprovalMode,
			Latency:   time.Since(start),
			Reasoning: "Routing to Flash model because an approved plan exists.",
		}, nil
	}
	return nil, nil
}

// DefaultStrategy returns gemini-cli's terminal strategy: the configured
// model, resolved. It always decides. Note that, like gemini-cli, it uses
// the configured model even when the context requests another one.
func DefaultStrategy() Strategy { return defaultStrategy{} }

type defaultStrategy struct{}

// Name implements [Strategy].
func (defaultStrategy) Name() string { return StrategyDefault }

// Route implements [Strategy]; see the constructor for the rules.
func (defaultStrategy) Route(_ context.Context, _ *RoutingContext, env *Env) (*Decision, error) {
	m := ResolveModel(env.configured(), env.Catalog.Access())
	return &Decision{
		Model:     m,
		Source:    StrategyDefault,
		Reasoning: "Routing to default model: " + m,
	}, nil
}
