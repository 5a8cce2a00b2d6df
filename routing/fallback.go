package routing

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentry-dev/agentry/runtime/llm"
)

// Intent is what the fallback handler decided after a model failed
// persistently: gemini-cli's FallbackIntent.
type Intent string

// Fallback intents.
const (
	// IntentRetryAlways switches the session to the fallback model for the
	// rest of the session ("fallback mode").
	IntentRetryAlways Intent = "retry_always"
	// IntentRetryOnce retries now; the availability state steers this call
	// and routing to the fallback model, the session's model is unchanged.
	IntentRetryOnce Intent = "retry_once"
	// IntentRetryWithCredits retries the same model on paid credits.
	IntentRetryWithCredits Intent = "retry_with_credits"
	// IntentStop gives up; the error reaches the caller.
	IntentStop Intent = "stop"
	// IntentRetryLater gives up for now, leaving availability untouched.
	IntentRetryLater Intent = "retry_later"
	// IntentUpgrade gives up and points the user at UpgradeURL.
	IntentUpgrade Intent = "upgrade"
)

// UpgradeURL is where an upgrade intent sends the user (gemini-cli's).
const UpgradeURL = "https://goo.gle/set-up-gemini-code-assist"

// FallbackQuestion is what a fallback handler is asked.
type FallbackQuestion struct {
	// Failed is the model that failed; Fallback the one that could serve.
	Failed, Fallback string
	// Kind classifies the failure.
	Kind FailureKind
	// Err is the classified error.
	Err error
}

// FallbackHandler asks a human whether to fall back when a model's policy
// says "prompt". Interactive drivers (a terminal, an A2A client) supply one;
// batch runs have none, so only silent policies fall back there. It may
// block until the user answers, and must honour ctx.
type FallbackHandler func(ctx context.Context, q FallbackQuestion) (Intent, error)

// Fallback is the outcome of one HandleFallback call.
type Fallback struct {
	// Retry reports whether the call should be retried.
	Retry bool
	// Intent is the intent that was acted on; "" when no fallback was
	// possible or no handler decided.
	Intent Intent
	// Failed is the failed model, Model the one the session falls back to.
	Failed, Model string
	// Kind classifies the failure.
	Kind FailureKind
}

// FailureKindOf classifies a model error for the policies, as gemini-cli's
// classifyFailureKind does: terminal quota, retryable quota (transient),
// model not found, or unknown.
func FailureKindOf(err error) FailureKind {
	var (
		terminal  *llm.TerminalQuotaError
		retryable *llm.RetryableQuotaError
		notFound  *llm.ModelNotFoundError
	)
	switch {
	case errors.As(err, &terminal):
		return FailureTerminal
	case errors.As(err, &retryable):
		return FailureTransient
	case errors.As(err, &notFound):
		return FailureNotFound
	}
	return FailureUnknown
}

// applyTransition moves the failed model's availability as its policy says
// for the failure kind (gemini-cli's applyAvailabilityTransition): terminal
// marks it unavailable — for good on a quota failure, for the capacity TTL
// otherwise — and sticky_retry allows one more try this turn.
func applyTransition(a *Availability, p *Policy, kind FailureKind) {
	if p == nil {
		return
	}
	switch p.Transition(kind) {
	case TransitionTerminal:
		reason := ReasonCapacity
		if kind == FailureTerminal {
			reason = ReasonQuota
		}
		a.MarkTerminal(p.Model, reason)
	case TransitionSticky:
		a.MarkRetryOncePerTurn(p.Model, p.MaxAttempts)
		a.ConsumeStickyAttempt(p.Model)
	}
}

// HandleFallback is gemini-cli's handleFallback: after failed kept failing
// with err, it finds the next model of the session's policy chain, applies
// the failed model's availability transition and, for a silent policy or
// the handler's retry intent, tells the retry loop to go on. The session's
// model changes only on retry_always.
func (s *Service) HandleFallback(ctx context.Context, failed string, err error) Fallback {
	kind := FailureKindOf(err)
	s.mu.Lock()
	active := s.active
	chain, _ := s.catalog.Resolve(ChainQuery{Active: s.active, Configured: s.configured, PlanMode: s.approvalMode == "plan"})
	handler := s.handler
	s.mu.Unlock()

	out := Fallback{Failed: failed, Kind: kind}
	var failedPolicy *Policy
	if i := chain.Index(failed); i >= 0 {
		failedPolicy = &chain[i]
	}
	candidates := FallbackCandidates(chain, failed, false)
	var fallback string
	if len(candidates) == 0 {
		if ok, _ := s.avail.Available(active); !sameModel(failed, active) && ok {
			applyTransition(s.avail, failedPolicy, kind)
			return s.process(IntentRetryAlways, out, active, failed)
		}
		fallback = failed
	} else {
		fallback = s.avail.SelectFirstAvailable(candidates.Models()).Model
		if fallback == "" {
			if lr, ok := candidates.LastResort(); ok {
				fallback = lr.Model
			}
		}
		i := candidates.Index(fallback)
		if fallback == "" || sameModel(fallback, failed) || i < 0 {
			return out
		}
		action := candidates[i].Action(kind)
		if action == ActionSilent || (sameModel(fallback, active) && !sameModel(failed, active)) {
			applyTransition(s.avail, failedPolicy, kind)
			return s.process(IntentRetryAlways, out, fallback, overrideOf(failed, active))
		}
	}
	if handler == nil {
		return out
	}
	intent, herr := handler(ctx, FallbackQuestion{Failed: failed, Fallback: fallback, Kind: kind, Err: err})
	if herr != nil {
		s.log.Warn("fallback handler failed", "model", failed, "err", herr)
		return out
	}
	if intent == IntentRetryAlways || intent == IntentRetryOnce {
		applyTransition(s.avail, failedPolicy, kind)
	}
	return s.process(intent, out, fallback, overrideOf(failed, active))
}

// overrideOf is the failed model to register an override for: only a model
// other than the active one (a utility model) gets a hard override.
func overrideOf(failed, active string) string {
	if sameModel(failed, active) {
		return ""
	}
	return failed
}

// process acts on an intent (gemini-cli's processIntent).
func (s *Service) process(intent Intent, out Fallback, fallback, failed string) Fallback {
	out.Intent = intent
	out.Model = fallback
	switch intent {
	case IntentRetryAlways:
		s.activateFallbackMode(fallback, failed)
		out.Retry = true
	case IntentRetryOnce, IntentRetryWithCredits:
		out.Retry = true
	case IntentStop, IntentRetryLater, IntentUpgrade:
		// Nothing changes: the user keeps the model and its state, and an
		// upgrade is the driver's to show (UpgradeURL).
	default:
		s.log.Warn("fallback handler returned an unknown intent", "intent", string(intent))
		out.Intent = ""
	}
	return out
}

// activateFallbackMode switches the session to model for the rest of it
// and, when a utility model failed, routes that model to model from now
// on, re-pointing older overrides (A→B then B→C makes A→C).
//
// Unlike gemini-cli's setModel this does not reset availability: it is
// shared with subagents and the other prompts of a batch, and forgetting
// that the failed model is out of quota would send each of them into the
// same 429s.
func (s *Service) activateFallbackMode(model, failed string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sameModel(s.active, model) || !sameModel(s.configured, model) {
		s.configured, s.active = model, model
		s.sequence = ""
	}
	s.fallbackMode = true
	if failed != "" {
		for k, v := range s.overrides {
			if sameModel(v, failed) {
				s.overrides[k] = model
			}
		}
		s.overrides[NormalizeModelID(failed)] = model
	}
}

func sameModel(a, b string) bool { return NormalizeModelID(a) == NormalizeModelID(b) }

// errNoModel reports a selection that found no model at all.
var errNoModel = errors.New("no model to route to")

func noModel(name string) error { return fmt.Errorf("%w: %q", errNoModel, name) }
