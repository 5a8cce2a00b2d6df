package routing

import (
	"context"
	"time"
)

// SharedHealth carries model health between the processes of a fleet
// (agentry serve replicas, batch workers), so that a model one process
// found out of quota or at capacity is skipped by all of them: a 429 storm
// falls back once for the fleet, not once per process. Package
// routing/fleethealth implements it over PostgreSQL.
//
// Only terminal failures and their end are shared. The sticky
// retry-once-per-turn state belongs to the turn of one session and stays
// local, as do [Availability.ResetTurn] and [Availability.Reset].
type SharedHealth interface {
	// Publish hands a change this process made to the other processes. It
	// must not block on the network: the retry loop calls it.
	Publish(u HealthUpdate)
	// Subscribe registers apply, which is called with the fleet's current
	// state and then with every change another process publishes (never
	// with this process's own). apply records the change without
	// publishing it again, so remote updates cannot loop.
	Subscribe(apply func(u HealthUpdate))
}

// HealthUpdate is one model's new state, as shared with the fleet.
type HealthUpdate struct {
	// Model is the normalized model id.
	Model string
	// Status is StatusTerminal or StatusHealthy.
	Status Status
	// Reason is ReasonQuota or ReasonCapacity for a terminal model.
	Reason Reason
	// TTL is how long a terminal state lasts from now; 0 is until the
	// model is marked healthy. A receiver counts it from when it applies
	// the update on its own clock, so clocks of the fleet's machines need
	// not agree.
	TTL time.Duration
}

// WithShared makes the Availability share terminal failures with a fleet
// through s: its MarkTerminal and MarkHealthy (of a terminal model) are
// published, and the changes of other processes are applied as they come.
func WithShared(s SharedHealth) AvailabilityOption {
	return func(a *Availability) { a.shared = s }
}

// apply records a change published by another process, without
// publishing it. A terminal state replaces any local one, as MarkTerminal
// does; a healthy one ends a terminal state only, so a local sticky retry
// keeps its turn.
func (a *Availability) apply(u HealthUpdate) {
	m := NormalizeModelID(u.Model)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch u.Status {
	case StatusTerminal:
		a.set(m, terminal(u.Reason, a.clock(), u.TTL))
	case StatusHealthy:
		if s, ok := a.health[m]; ok && s.status == StatusTerminal {
			delete(a.health, m)
		}
	}
}

// Limiter admits model calls under a limit shared by a fleet: at most so
// many at once, so many a minute. The dispatcher calls Acquire before each
// attempt at a model call and release when the attempt's response ends.
// Package routing/fleethealth implements it over PostgreSQL.
type Limiter interface {
	// Acquire waits until model may be called, or ctx ends (its error is
	// then returned). release must be called exactly once.
	Acquire(ctx context.Context, model string) (release func(), err error)
}

// WithLimiter gives the model calls of every session sharing the
// Availability a fleet-wide limiter: the Availability is the one object
// all sessions of a process share, which is the limiter's scope too.
func WithLimiter(l Limiter) AvailabilityOption {
	return func(a *Availability) { a.limiter = l }
}

// Limiter returns the limiter given by [WithLimiter], or nil.
func (a *Availability) Limiter() Limiter { return a.limiter }
