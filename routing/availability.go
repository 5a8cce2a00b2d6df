package routing

import (
	"sync"
	"time"
)

// Reason says why a model is unavailable.
type Reason string

// Reasons, as gemini-cli's UnavailabilityReason spells them.
const (
	// ReasonQuota marks a model whose quota is exhausted for good (a daily
	// limit): it stays unavailable until marked healthy or reset.
	ReasonQuota Reason = "quota"
	// ReasonCapacity marks a model that failed for any other terminal cause
	// (capacity, not found, unknown errors). It expires after the capacity
	// TTL so a transient outage does not pin the session to a fallback.
	ReasonCapacity Reason = "capacity"
	// ReasonRetryOncePerTurn marks a model that may be tried once more in
	// the current turn (the sticky_retry state).
	ReasonRetryOncePerTurn Reason = "retry_once_per_turn"
	// ReasonUnknown is reported for a skipped model whose state carries no
	// reason; gemini-cli reports it the same way.
	ReasonUnknown Reason = "unknown"
)

// Status is the health state of a model.
type Status string

// Statuses. A model without recorded state is healthy.
const (
	// StatusHealthy means no failure is recorded.
	StatusHealthy Status = "healthy"
	// StatusTerminal means the model must not be called (until the capacity
	// TTL expires, for ReasonCapacity).
	StatusTerminal Status = "terminal"
	// StatusSticky means the model may be retried once per turn; once the
	// attempt is consumed it is unavailable until the next turn.
	StatusSticky Status = "sticky_retry"
)

// DefaultCapacityTTL is how long a capacity failure keeps a model
// unavailable; gemini-cli's getHealth default of 30 000 ms.
const DefaultCapacityTTL = 30 * time.Second

// Availability is gemini-cli's ModelAvailabilityService: the per-session
// record of which models may be called. Models are keyed by
// [NormalizeModelID], so "models/x", "gemini:x" and "x" share one state. It
// is safe for concurrent use because a parent session, its subagents and
// the calls of a batch share one instance. The zero value is ready to use
// with the default TTL and time.Now.
type Availability struct {
	ttl      time.Duration
	quotaTTL time.Duration // 0: a quota failure lasts
	now      func() time.Time
	shared   SharedHealth
	limiter  Limiter

	mu     sync.Mutex
	health map[string]healthState
}

// healthState is a recorded (non-healthy) state.
type healthState struct {
	status   Status
	reason   Reason
	markedAt time.Time // terminal only
	expires  time.Time // terminal only; zero: until marked healthy
	consumed bool      // sticky only
	attempts int       // sticky only
}

// AvailabilityOption configures an Availability.
type AvailabilityOption func(*Availability)

// WithCapacityTTL sets how long a capacity failure lasts. Non-positive
// durations keep [DefaultCapacityTTL], so an unset setting (zero) does not
// silently disable the state.
func WithCapacityTTL(d time.Duration) AvailabilityOption {
	return func(a *Availability) {
		if d > 0 {
			a.ttl = d
		}
	}
}

// WithClock replaces time.Now, so tests can expire capacity failures
// without sleeping. A nil function keeps time.Now.
func WithClock(now func() time.Time) AvailabilityOption {
	return func(a *Availability) {
		if now != nil {
			a.now = now
		}
	}
}

// WithQuotaTTL makes a quota failure expire after d, like a capacity
// failure. Non-positive durations keep today's rule: a quota failure lasts
// until the model is marked healthy or the state is reset. A fleet sets it
// so that a shared quota failure does not outlive the quota.
func WithQuotaTTL(d time.Duration) AvailabilityOption {
	return func(a *Availability) {
		if d > 0 {
			a.quotaTTL = d
		}
	}
}

// NewAvailability returns an Availability in which every model is healthy.
// With [WithShared] it starts from the fleet's current state.
func NewAvailability(opts ...AvailabilityOption) *Availability {
	a := &Availability{ttl: DefaultCapacityTTL, now: time.Now, health: map[string]healthState{}}
	for _, o := range opts {
		o(a)
	}
	if a.shared != nil {
		a.shared.Subscribe(a.apply)
	}
	return a
}

// get returns the recorded state of an already normalized model, deleting
// a terminal failure whose time has passed (a capacity failure after its
// TTL), as gemini-cli does on every read. The caller holds a.mu.
func (a *Availability) get(model string) (healthState, bool) {
	s, ok := a.health[model]
	if ok && s.status == StatusTerminal && !s.expires.IsZero() && !a.clock().Before(s.expires) {
		delete(a.health, model)
		return healthState{}, false
	}
	return s, ok
}

// lifetime is how long a terminal failure for reason lasts; 0 is until
// marked healthy.
func (a *Availability) lifetime(reason Reason) time.Duration {
	if reason == ReasonQuota {
		return a.quotaTTL
	}
	return a.capacityTTL()
}

// terminal is the state MarkTerminal records at now for reason, lasting
// ttl (0: until marked healthy).
func terminal(reason Reason, now time.Time, ttl time.Duration) healthState {
	s := healthState{status: StatusTerminal, reason: reason, markedAt: now}
	if ttl > 0 {
		s.expires = now.Add(ttl)
	}
	return s
}

// clock returns the current time from the injected clock, if any.
func (a *Availability) clock() time.Time {
	if a.now == nil {
		return time.Now()
	}
	return a.now()
}

// capacityTTL returns the configured TTL, DefaultCapacityTTL if none.
func (a *Availability) capacityTTL() time.Duration {
	if a.ttl <= 0 {
		return DefaultCapacityTTL
	}
	return a.ttl
}

// set records a state, creating the map for a zero Availability. The
// caller holds a.mu.
func (a *Availability) set(model string, s healthState) {
	if a.health == nil {
		a.health = map[string]healthState{}
	}
	a.health[model] = s
}

// MarkTerminal makes model unavailable, replacing any earlier state. Use
// ReasonQuota for failures that last (terminal quota errors) and
// ReasonCapacity for everything else; only capacity expires.
//
// With [WithShared] the failure is published to the fleet, with its
// lifetime (the capacity TTL, or the quota TTL).
func (a *Availability) MarkTerminal(model string, reason Reason) {
	m := NormalizeModelID(model)
	ttl := a.lifetime(reason)
	a.mu.Lock()
	a.set(m, terminal(reason, a.clock(), ttl))
	a.mu.Unlock()
	if a.shared != nil {
		a.shared.Publish(HealthUpdate{Model: m, Status: StatusTerminal, Reason: reason, TTL: ttl})
	}
}

// MarkHealthy forgets every failure of model; the retry loop calls it after
// a successful call. With [WithShared] a model that was terminal is
// published healthy; a model that already was healthy, the common case
// after every successful call, costs no publication.
func (a *Availability) MarkHealthy(model string) {
	m := NormalizeModelID(model)
	a.mu.Lock()
	s, ok := a.health[m]
	if ok {
		delete(a.health, m)
	}
	a.mu.Unlock()
	if a.shared != nil && ok && s.status == StatusTerminal {
		a.shared.Publish(HealthUpdate{Model: m, Status: StatusHealthy})
	}
}

// MarkRetryOncePerTurn puts model in the sticky_retry state, which allows
// one attempt (with attempts retries; attempts <= 0 means 1) per turn. It
// never downgrades a terminal failure to a transient one. A model already
// sticky keeps its consumed flag, so failing again in the same turn cannot
// make it available again and loop forever.
func (a *Availability) MarkRetryOncePerTurn(model string, attempts int) {
	if attempts <= 0 {
		attempts = 1
	}
	m := NormalizeModelID(model)
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.get(m)
	if ok && cur.status == StatusTerminal {
		return
	}
	consumed := ok && cur.status == StatusSticky && cur.consumed
	a.set(m, healthState{status: StatusSticky, reason: ReasonRetryOncePerTurn, consumed: consumed, attempts: attempts})
}

// ConsumeStickyAttempt uses up the current turn's attempt of a sticky
// model; it does nothing to a model in any other state.
func (a *Availability) ConsumeStickyAttempt(model string) {
	m := NormalizeModelID(model)
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.get(m); ok && cur.status == StatusSticky {
		cur.consumed = true
		a.set(m, cur)
	}
}

// Health is a snapshot of one model's state.
type Health struct {
	// Status is StatusHealthy when nothing is recorded.
	Status Status
	// Reason is empty for a healthy model.
	Reason Reason
	// MarkedAt is when a terminal state was recorded (zero otherwise).
	MarkedAt time.Time
	// Consumed reports that a sticky model's attempt for this turn is used.
	Consumed bool
	// Attempts is a sticky model's retry budget (zero otherwise).
	Attempts int
}

// Health returns model's state. An expired capacity failure is deleted and
// reported healthy.
func (a *Availability) Health(model string) Health {
	m := NormalizeModelID(model)
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.get(m)
	if !ok {
		return Health{Status: StatusHealthy}
	}
	return Health{Status: s.status, Reason: s.reason, MarkedAt: s.markedAt, Consumed: s.consumed, Attempts: s.attempts}
}

// available is gemini-cli's snapshot on a normalized id. The caller holds
// a.mu.
func (a *Availability) available(model string) (healthState, bool, Reason) {
	s, ok := a.get(model)
	switch {
	case !ok:
		return s, true, ""
	case s.status == StatusTerminal, s.status == StatusSticky && s.consumed:
		r := s.reason
		if r == "" {
			r = ReasonUnknown
		}
		return s, false, r
	}
	return s, true, ""
}

// Available reports whether model may be called now and, if not, why: a
// terminal model never may, a sticky one only while its attempt for this
// turn is unused.
func (a *Availability) Available(model string) (ok bool, reason Reason) {
	m := NormalizeModelID(model)
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok, reason = a.available(m)
	return ok, reason
}

// Skipped is a model SelectFirstAvailable passed over.
type Skipped struct {
	// Model is the normalized id.
	Model string
	// Reason is why it was unavailable.
	Reason Reason
}

// Selection is the result of SelectFirstAvailable.
type Selection struct {
	// Model is the normalized id of the first available model, or "" when
	// none is.
	Model string
	// Skipped lists the unavailable models before Model (all of them when
	// none is available), in order; nil when none was skipped.
	Skipped []Skipped
	// Attempts is the sticky retry budget of Model, 0 when Model is not in
	// the sticky state; callers use it instead of the policy's maxAttempts
	// so a sticky model gets only its per-turn budget.
	Attempts int
}

// SelectFirstAvailable returns the first available model of models, in
// order, with the ones skipped on the way. It holds the lock for the whole
// scan so the result is consistent even while other goroutines mark
// models.
func (a *Availability) SelectFirstAvailable(models []string) Selection {
	var skipped []Skipped
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, id := range models {
		m := NormalizeModelID(id)
		s, ok, reason := a.available(m)
		if ok {
			sel := Selection{Model: m, Skipped: skipped}
			if s.status == StatusSticky {
				sel.Attempts = s.attempts
			}
			return sel
		}
		if skipped == nil {
			// One allocation for the rest of the scan.
			skipped = make([]Skipped, 0, len(models)-i)
		}
		skipped = append(skipped, Skipped{Model: m, Reason: reason})
	}
	return Selection{Skipped: skipped}
}

// ResetTurn makes every sticky model available again; the client calls it
// at the start of every user turn. Terminal states are kept.
func (a *Availability) ResetTurn() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for m, s := range a.health {
		if s.status == StatusSticky && s.consumed {
			s.consumed = false
			a.health[m] = s
		}
	}
}

// Reset forgets every recorded state. gemini-cli calls it whenever the
// configured model changes, since the old failures concern another chain.
// It is local: a user's model change in one session does not clear what
// the fleet knows, and the next change another process publishes is
// applied again.
func (a *Availability) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.health)
}
