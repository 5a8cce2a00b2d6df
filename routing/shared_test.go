package routing

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordingShared is a SharedHealth that records what is published and
// hands remote updates to its subscriber.
type recordingShared struct {
	published []HealthUpdate
	apply     func(HealthUpdate)
	initial   []HealthUpdate
}

func (r *recordingShared) Publish(u HealthUpdate) { r.published = append(r.published, u) }

func (r *recordingShared) Subscribe(apply func(HealthUpdate)) {
	for _, u := range r.initial {
		apply(u)
	}
	r.apply = apply
}

// TestSharedTransitions: which local changes are published, and what a
// remote update does to the local state, without publishing it again.
func TestSharedTransitions(t *testing.T) {
	const m = "m"
	type step func(a *Availability, r *recordingShared, clk *fakeClock)
	terminal := func(reason Reason) step {
		return func(a *Availability, _ *recordingShared, _ *fakeClock) { a.MarkTerminal(m, reason) }
	}
	healthy := func(a *Availability, _ *recordingShared, _ *fakeClock) { a.MarkHealthy(m) }
	sticky := func(a *Availability, _ *recordingShared, _ *fakeClock) {
		a.MarkRetryOncePerTurn(m, 2)
		a.ConsumeStickyAttempt(m)
	}
	resetTurn := func(a *Availability, _ *recordingShared, _ *fakeClock) { a.ResetTurn() }
	reset := func(a *Availability, _ *recordingShared, _ *fakeClock) { a.Reset() }
	remote := func(u HealthUpdate) step {
		return func(_ *Availability, r *recordingShared, _ *fakeClock) { r.apply(u) }
	}
	advance := func(d time.Duration) step {
		return func(_ *Availability, _ *recordingShared, clk *fakeClock) { clk.Advance(d) }
	}
	remoteQuota := HealthUpdate{Model: "models/m", Status: StatusTerminal, Reason: ReasonQuota}
	remoteCapacity := HealthUpdate{Model: m, Status: StatusTerminal, Reason: ReasonCapacity, TTL: 5 * time.Second}
	remoteHealthy := HealthUpdate{Model: m, Status: StatusHealthy}

	tests := []struct {
		name      string
		opts      []AvailabilityOption
		initial   []HealthUpdate
		steps     []step
		published []HealthUpdate
		status    Status
		reason    Reason
	}{
		{name: "quota is published without a TTL", steps: []step{terminal(ReasonQuota)},
			published: []HealthUpdate{{Model: m, Status: StatusTerminal, Reason: ReasonQuota}}, status: StatusTerminal, reason: ReasonQuota},
		{name: "quota with a quota TTL", opts: []AvailabilityOption{WithQuotaTTL(time.Hour)}, steps: []step{terminal(ReasonQuota)},
			published: []HealthUpdate{{Model: m, Status: StatusTerminal, Reason: ReasonQuota, TTL: time.Hour}}, status: StatusTerminal, reason: ReasonQuota},
		{name: "quota TTL expires locally", opts: []AvailabilityOption{WithQuotaTTL(time.Hour)}, steps: []step{terminal(ReasonQuota), advance(time.Hour)},
			published: []HealthUpdate{{Model: m, Status: StatusTerminal, Reason: ReasonQuota, TTL: time.Hour}}, status: StatusHealthy},
		{name: "capacity carries its TTL", opts: []AvailabilityOption{WithCapacityTTL(7 * time.Second)}, steps: []step{terminal(ReasonCapacity)},
			published: []HealthUpdate{{Model: m, Status: StatusTerminal, Reason: ReasonCapacity, TTL: 7 * time.Second}}, status: StatusTerminal, reason: ReasonCapacity},
		{name: "healthy after terminal is published", steps: []step{terminal(ReasonQuota), healthy},
			published: []HealthUpdate{{Model: m, Status: StatusTerminal, Reason: ReasonQuota}, {Model: m, Status: StatusHealthy}}, status: StatusHealthy},
		{name: "healthy while healthy costs nothing", steps: []step{healthy, healthy}, status: StatusHealthy},
		{name: "healthy after sticky is local", steps: []step{sticky, healthy}, status: StatusHealthy},
		{name: "sticky, turns and reset are local", steps: []step{sticky, resetTurn, sticky, reset}, status: StatusHealthy},
		{name: "remote quota applies, unpublished", steps: []step{remote(remoteQuota)}, status: StatusTerminal, reason: ReasonQuota},
		{name: "remote quota replaces a sticky retry", steps: []step{sticky, remote(remoteQuota)}, status: StatusTerminal, reason: ReasonQuota},
		{name: "remote capacity lasts its own TTL", steps: []step{remote(remoteCapacity), advance(5*time.Second - 1)}, status: StatusTerminal, reason: ReasonCapacity},
		{name: "remote capacity expires", steps: []step{remote(remoteCapacity), advance(5 * time.Second)}, status: StatusHealthy},
		{name: "remote healthy ends a terminal failure", steps: []step{terminal(ReasonCapacity), remote(remoteHealthy)},
			published: []HealthUpdate{{Model: m, Status: StatusTerminal, Reason: ReasonCapacity, TTL: DefaultCapacityTTL}}, status: StatusHealthy},
		{name: "remote healthy keeps a sticky retry", steps: []step{sticky, remote(remoteHealthy)}, status: StatusSticky, reason: ReasonRetryOncePerTurn},
		{name: "a remote failure then local success is published", steps: []step{remote(remoteQuota), healthy},
			published: []HealthUpdate{{Model: m, Status: StatusHealthy}}, status: StatusHealthy},
		{name: "the fleet's state at start", initial: []HealthUpdate{remoteQuota}, status: StatusTerminal, reason: ReasonQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			r := &recordingShared{initial: tt.initial}
			a := NewAvailability(append([]AvailabilityOption{WithClock(clk.Now), WithShared(r)}, tt.opts...)...)
			for _, s := range tt.steps {
				s(a, r, clk)
			}
			if diff := cmp.Diff(tt.published, r.published); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			h := a.Health(m)
			if h.Status != tt.status || h.Reason != tt.reason {
				t.Errorf("health = %s/%s, want %s/%s", h.Status, h.Reason, tt.status, tt.reason)
			}
		})
	}
}

// TestLimiterOption: the limiter given to the Availability is the one it
// returns.
func TestLimiterOption(t *testing.T) {
	if NewAvailability().Limiter() != nil {
		t.Error("a limiter without WithLimiter")
	}
	var l limiterFunc = func(context.Context, string) (func(), error) { return func() {}, nil }
	if NewAvailability(WithLimiter(l)).Limiter() == nil {
		t.Error("WithLimiter's limiter lost")
	}
}

type limiterFunc func(ctx context.Context, model string) (func(), error)

func (f limiterFunc) Acquire(ctx context.Context, model string) (func(), error) { return f(ctx, model) }

// nopShared is a SharedHealth that does nothing, for the benchmark.
type nopShared struct{}

func (nopShared) Publish(HealthUpdate)         {}
func (nopShared) Subscribe(func(HealthUpdate)) {}

// BenchmarkCallPath is what every model call does to the availability
// (select the first available model, mark it healthy after success), with
// and without sharing: sharing costs nothing while nothing changes.
func BenchmarkCallPath(b *testing.B) {
	chain := []string{"gemini-2.5-pro", "gemini-2.5-flash"}
	for _, bc := range []struct {
		name string
		a    *Availability
	}{{"local", NewAvailability()}, {"shared", NewAvailability(WithShared(nopShared{}))}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sel := bc.a.SelectFirstAvailable(chain)
				bc.a.MarkHealthy(sel.Model)
			}
		})
	}
}
