package routing

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FailureKind classifies a failed model call, as gemini-cli's
// classifyFailureKind does; policies key their actions and transitions by
// it.
type FailureKind string

// Failure kinds.
const (
	// FailureTerminal is a terminal quota error (the quota will not come
	// back soon).
	FailureTerminal FailureKind = "terminal"
	// FailureTransient is a retryable quota or capacity error.
	FailureTransient FailureKind = "transient"
	// FailureNotFound is a model the API does not know.
	FailureNotFound FailureKind = "not_found"
	// FailureUnknown is any other error.
	FailureUnknown FailureKind = "unknown"
)

// failureKinds lists every kind, so defaults and plan mode cover all.
var failureKinds = [...]FailureKind{FailureTerminal, FailureTransient, FailureNotFound, FailureUnknown}

// Action says whether falling back to a model needs the user's consent.
type Action string

// Actions.
const (
	// ActionSilent switches to the fallback model without asking.
	ActionSilent Action = "silent"
	// ActionPrompt asks the fallback handler (the user); without one, as in
	// headless runs, no fallback happens.
	ActionPrompt Action = "prompt"
)

// Transition is the availability state a failed model moves to.
type Transition string

// Transitions.
const (
	// TransitionTerminal marks the failed model terminal: with reason quota
	// for FailureTerminal, capacity (which expires) for every other kind.
	TransitionTerminal Transition = "terminal"
	// TransitionSticky marks the failed model retry-once-per-turn and
	// consumes the attempt, so the next turn tries it again.
	TransitionSticky Transition = "sticky_retry"
)

// Policy is how one model of a chain behaves when a call to it fails, and
// how falling back to it is approved. It is gemini-cli's ModelPolicy.
type Policy struct {
	// Model is the model id.
	Model string `json:"model"`
	// Actions says, per failure kind, whether falling back *to* this model
	// is silent or prompts. Missing kinds prompt.
	Actions map[FailureKind]Action `json:"actions,omitempty"`
	// Transitions says, per failure kind, which state this model moves to
	// when it fails. Missing kinds are terminal.
	Transitions map[FailureKind]Transition `json:"transitions,omitempty"`
	// LastResort marks the model used when nothing in the chain is
	// available; a valid chain has exactly one.
	LastResort bool `json:"lastResort,omitempty"`
	// MaxAttempts caps the retry loop's attempts on this model; 0 leaves the
	// retry loop's own default.
	MaxAttempts int `json:"maxAttempts,omitempty"`
}

// Action returns the action for kind, ActionPrompt when unset: asking is
// the safe default because a silent switch changes the model under the
// user.
func (p Policy) Action(k FailureKind) Action {
	if a := p.Actions[k]; a != "" {
		return a
	}
	return ActionPrompt
}

// Transition returns the transition for kind, TransitionTerminal when
// unset, which is what gemini-cli's catalog fills in for every kind.
func (p Policy) Transition(k FailureKind) Transition {
	if t := p.Transitions[k]; t != "" {
		return t
	}
	return TransitionTerminal
}

// Clone returns a deep copy, so a caller may edit the maps of a policy it
// got from a catalog without affecting anyone else.
func (p Policy) Clone() Policy {
	if p.Actions != nil {
		m := make(map[FailureKind]Action, len(p.Actions))
		for k, v := range p.Actions {
			m[k] = v
		}
		p.Actions = m
	}
	if p.Transitions != nil {
		m := make(map[FailureKind]Transition, len(p.Transitions))
		for k, v := range p.Transitions {
			m[k] = v
		}
		p.Transitions = m
	}
	return p
}

// withDefaults fills every unset kind with its default, as gemini-cli's
// definePolicy does, so a resolved policy spells out its full behaviour.
func (p Policy) withDefaults() Policy {
	p = p.Clone()
	if p.Actions == nil {
		p.Actions = make(map[FailureKind]Action, len(failureKinds))
	}
	if p.Transitions == nil {
		p.Transitions = make(map[FailureKind]Transition, len(failureKinds))
	}
	for _, k := range failureKinds {
		p.Actions[k] = p.Action(k)
		p.Transitions[k] = p.Transition(k)
	}
	return p
}

// Chain is an ordered list of models to fall back through: the first is
// the preferred model, the last-resort one is used when nothing is
// available.
type Chain []Policy

// ErrInvalidChain is wrapped by every chain validation error.
var ErrInvalidChain = errors.New("invalid model chain")

// Validate reports whether c can be used: it must have models, each with a
// name that appears once, only known failure kinds, actions and
// transitions, a non-negative maxAttempts, and exactly one last resort
// (gemini-cli's validateModelPolicyChain checks the last two). Errors wrap
// ErrInvalidChain and say how to fix the chain.
func (c Chain) Validate() error {
	if len(c) == 0 {
		return fmt.Errorf("%w: it has no models; list at least one model and mark one of them lastResort", ErrInvalidChain)
	}
	seen := make(map[string]int, len(c))
	lastResort := -1
	for i, p := range c {
		id := NormalizeModelID(p.Model)
		if id == "" {
			return fmt.Errorf("%w: entry %d has no model name; set \"model\" to a model id", ErrInvalidChain, i)
		}
		if j, dup := seen[id]; dup {
			return fmt.Errorf("%w: model %q appears twice (entries %d and %d); list each model once", ErrInvalidChain, id, j, i)
		}
		seen[id] = i
		for _, k := range slices.Sorted(maps.Keys(p.Actions)) {
			a := p.Actions[k]
			if !validKind(k) {
				return fmt.Errorf("%w: model %q: unknown failure kind %q in actions; use %s", ErrInvalidChain, id, k, kindList())
			}
			if a != ActionSilent && a != ActionPrompt {
				return fmt.Errorf("%w: model %q: unknown action %q for %s; use %q or %q", ErrInvalidChain, id, a, k, ActionSilent, ActionPrompt)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(p.Transitions)) {
			t := p.Transitions[k]
			if !validKind(k) {
				return fmt.Errorf("%w: model %q: unknown failure kind %q in transitions; use %s", ErrInvalidChain, id, k, kindList())
			}
			if t != TransitionTerminal && t != TransitionSticky {
				return fmt.Errorf("%w: model %q: unknown transition %q for %s; use %q or %q", ErrInvalidChain, id, t, k, TransitionTerminal, TransitionSticky)
			}
		}
		if p.MaxAttempts < 0 {
			return fmt.Errorf("%w: model %q: maxAttempts is %d; use a positive number, or leave it out for the default", ErrInvalidChain, id, p.MaxAttempts)
		}
		if p.LastResort {
			if lastResort >= 0 {
				return fmt.Errorf("%w: both %q and %q are marked lastResort; mark exactly one model", ErrInvalidChain, NormalizeModelID(c[lastResort].Model), id)
			}
			lastResort = i
		}
	}
	if lastResort < 0 {
		return fmt.Errorf("%w: no model is marked lastResort; mark the model to use when all others are unavailable (usually the last)", ErrInvalidChain)
	}
	return nil
}

func validKind(k FailureKind) bool {
	for _, v := range failureKinds {
		if k == v {
			return true
		}
	}
	return false
}

func kindList() string {
	s := make([]string, len(failureKinds))
	for i, k := range failureKinds {
		s[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(s, ", ")
}

// Clone returns a deep copy of c.
func (c Chain) Clone() Chain {
	if c == nil {
		return nil
	}
	out := make(Chain, len(c))
	for i, p := range c {
		out[i] = p.Clone()
	}
	return out
}

// Index returns the position of model in c, or -1. Ids are compared
// normalized, so "models/x" finds "x".
func (c Chain) Index(model string) int {
	m := NormalizeModelID(model)
	for i, p := range c {
		if NormalizeModelID(p.Model) == m {
			return i
		}
	}
	return -1
}

// Policy returns the policy of model in c (the failed policy of gemini-cli's
// buildFallbackPolicyContext).
func (c Chain) Policy(model string) (Policy, bool) {
	if i := c.Index(model); i >= 0 {
		return c[i], true
	}
	return Policy{}, false
}

// LastResort returns the first policy marked last resort.
func (c Chain) LastResort() (Policy, bool) {
	for _, p := range c {
		if p.LastResort {
			return p, true
		}
	}
	return Policy{}, false
}

// Models returns the model ids in order, the input SelectFirstAvailable
// takes.
func (c Chain) Models() []string {
	out := make([]string, len(c))
	for i, p := range c {
		out[i] = p.Model
	}
	return out
}

// Silent returns a copy of c in which falling back to any model is silent
// for every failure kind. Plan mode uses it because a plan-mode run must
// not stop to ask which model to use.
func (c Chain) Silent() Chain {
	out := c.Clone()
	for i := range out {
		a := make(map[FailureKind]Action, len(failureKinds))
		for _, k := range failureKinds {
			a[k] = ActionSilent
		}
		out[i].Actions = a
	}
	return out
}

// FallbackCandidates returns the models to try after failed, as gemini-cli's
// buildFallbackPolicyContext does: the policies after failed and, when
// wrap, then the ones before it, so downgrades come before wrapping round
// to upgrades. When failed is not in chain the whole chain is a candidate.
// The result is a new slice whose policies share their maps with chain.
func FallbackCandidates(chain Chain, failed string, wrap bool) Chain {
	i := chain.Index(failed)
	if i < 0 {
		return append(Chain(nil), chain...)
	}
	out := make(Chain, 0, len(chain)-1)
	out = append(out, chain[i+1:]...)
	if wrap {
		out = append(out, chain[:i]...)
	}
	return out
}

// SelectionForAvailability is gemini-cli's selectModelForAvailability on an
// already resolved chain: the first available model of chain (with its
// sticky attempts), else the chain's last resort, else DefaultProModel, so
// a call is always made with something.
func SelectionForAvailability(chain Chain, a *Availability) Selection {
	models := make([]string, len(chain))
	for i, p := range chain {
		models[i] = p.Model
	}
	if sel := a.SelectFirstAvailable(models); sel.Model != "" {
		return sel
	}
	if p, ok := chain.LastResort(); ok {
		return Selection{Model: p.Model}
	}
	return Selection{Model: DefaultProModel}
}

// SelectForAvailability returns the model of SelectionForAvailability.
func SelectForAvailability(chain Chain, a *Availability) string {
	return SelectionForAvailability(chain, a).Model
}
