package routing

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a manually advanced clock for WithClock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestAvailabilityTransitions walks every edge of the state machine: each
// case runs its steps on a fresh Availability and checks the resulting
// state of model "m".
func TestAvailabilityTransitions(t *testing.T) {
	const m = "m"
	t0 := newFakeClock().Now()
	type step func(a *Availability, clk *fakeClock)
	terminal := func(r Reason) step { return func(a *Availability, _ *fakeClock) { a.MarkTerminal(m, r) } }
	sticky := func(n int) step { return func(a *Availability, _ *fakeClock) { a.MarkRetryOncePerTurn(m, n) } }
	consume := func(a *Availability, _ *fakeClock) { a.ConsumeStickyAttempt(m) }
	healthy := func(a *Availability, _ *fakeClock) { a.MarkHealthy(m) }
	resetTurn := func(a *Availability, _ *fakeClock) { a.ResetTurn() }
	reset := func(a *Availability, _ *fakeClock) { a.Reset() }
	advance := func(d time.Duration) step { return func(_ *Availability, clk *fakeClock) { clk.Advance(d) } }

	healthyH := Health{Status: StatusHealthy}
	quotaAt := func(d time.Duration) Health {
		return Health{Status: StatusTerminal, Reason: ReasonQuota, MarkedAt: t0.Add(d)}
	}
	capacityAt := func(d time.Duration) Health {
		return Health{Status: StatusTerminal, Reason: ReasonCapacity, MarkedAt: t0.Add(d)}
	}
	stickyH := func(consumed bool, attempts int) Health {
		return Health{Status: StatusSticky, Reason: ReasonRetryOncePerTurn, Consumed: consumed, Attempts: attempts}
	}

	tests := []struct {
		name       string
		opts       []AvailabilityOption
		steps      []step
		want       Health
		wantOK     bool
		wantReason Reason
		wantLen    int // recorded entries afterwards
	}{
		{name: "no entry is healthy", want: healthyH, wantOK: true},
		{name: "healthy to terminal quota", steps: []step{terminal(ReasonQuota)}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "healthy to terminal capacity", steps: []step{terminal(ReasonCapacity)}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "terminal quota overwritten by capacity", steps: []step{terminal(ReasonQuota), advance(time.Second), terminal(ReasonCapacity)}, want: capacityAt(time.Second), wantReason: ReasonCapacity, wantLen: 1},
		{name: "terminal capacity overwritten by quota", steps: []step{terminal(ReasonCapacity), advance(time.Second), terminal(ReasonQuota)}, want: quotaAt(time.Second), wantReason: ReasonQuota, wantLen: 1},
		{name: "re-marking capacity restarts the TTL", steps: []step{terminal(ReasonCapacity), advance(20 * time.Second), terminal(ReasonCapacity), advance(20 * time.Second)}, want: capacityAt(20 * time.Second), wantReason: ReasonCapacity, wantLen: 1},
		{name: "sticky overwritten by terminal", steps: []step{sticky(2), terminal(ReasonQuota)}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "consumed sticky overwritten by terminal", steps: []step{sticky(2), consume, terminal(ReasonCapacity)}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "capacity just before TTL", steps: []step{terminal(ReasonCapacity), advance(DefaultCapacityTTL - time.Millisecond)}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "capacity expires at TTL and is deleted", steps: []step{terminal(ReasonCapacity), advance(DefaultCapacityTTL)}, want: healthyH, wantOK: true},
		{name: "capacity expires with custom TTL", opts: []AvailabilityOption{WithCapacityTTL(5 * time.Second)}, steps: []step{terminal(ReasonCapacity), advance(6 * time.Second)}, want: healthyH, wantOK: true},
		{name: "custom TTL not yet passed", opts: []AvailabilityOption{WithCapacityTTL(time.Minute)}, steps: []step{terminal(ReasonCapacity), advance(DefaultCapacityTTL)}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "non-positive TTL keeps the default", opts: []AvailabilityOption{WithCapacityTTL(0)}, steps: []step{terminal(ReasonCapacity), advance(time.Second)}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "quota never expires", steps: []step{terminal(ReasonQuota), advance(1000 * time.Hour)}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "markHealthy on healthy", steps: []step{healthy}, want: healthyH, wantOK: true},
		{name: "markHealthy on quota", steps: []step{terminal(ReasonQuota), healthy}, want: healthyH, wantOK: true},
		{name: "markHealthy on capacity", steps: []step{terminal(ReasonCapacity), healthy}, want: healthyH, wantOK: true},
		{name: "markHealthy on sticky", steps: []step{sticky(1), healthy}, want: healthyH, wantOK: true},
		{name: "markHealthy on consumed sticky, then sticky is fresh", steps: []step{sticky(1), consume, healthy, sticky(1)}, want: stickyH(false, 1), wantOK: true, wantLen: 1},
		{name: "markRetryOncePerTurn is a no-op on quota", steps: []step{terminal(ReasonQuota), sticky(3)}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "markRetryOncePerTurn is a no-op on capacity", steps: []step{terminal(ReasonCapacity), sticky(3)}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "markRetryOncePerTurn after capacity expired is fresh", steps: []step{terminal(ReasonCapacity), advance(DefaultCapacityTTL), sticky(3)}, want: stickyH(false, 3), wantOK: true, wantLen: 1},
		{name: "markRetryOncePerTurn fresh", steps: []step{sticky(3)}, want: stickyH(false, 3), wantOK: true, wantLen: 1},
		{name: "markRetryOncePerTurn zero attempts means one", steps: []step{sticky(0)}, want: stickyH(false, 1), wantOK: true, wantLen: 1},
		{name: "markRetryOncePerTurn negative attempts means one", steps: []step{sticky(-4)}, want: stickyH(false, 1), wantOK: true, wantLen: 1},
		{name: "markRetryOncePerTurn keeps consumed", steps: []step{sticky(1), consume, sticky(5)}, want: stickyH(true, 5), wantReason: ReasonRetryOncePerTurn, wantLen: 1},
		{name: "markRetryOncePerTurn keeps unconsumed", steps: []step{sticky(1), sticky(5)}, want: stickyH(false, 5), wantOK: true, wantLen: 1},
		{name: "consume on sticky", steps: []step{sticky(2), consume}, want: stickyH(true, 2), wantReason: ReasonRetryOncePerTurn, wantLen: 1},
		{name: "consume twice on sticky", steps: []step{sticky(2), consume, consume}, want: stickyH(true, 2), wantReason: ReasonRetryOncePerTurn, wantLen: 1},
		{name: "consume on healthy is a no-op", steps: []step{consume}, want: healthyH, wantOK: true},
		{name: "consume on quota is a no-op", steps: []step{terminal(ReasonQuota), consume}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "consume on capacity is a no-op", steps: []step{terminal(ReasonCapacity), consume}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "resetTurn un-consumes sticky", steps: []step{sticky(2), consume, resetTurn}, want: stickyH(false, 2), wantOK: true, wantLen: 1},
		{name: "resetTurn leaves fresh sticky", steps: []step{sticky(2), resetTurn}, want: stickyH(false, 2), wantOK: true, wantLen: 1},
		{name: "resetTurn leaves quota", steps: []step{terminal(ReasonQuota), resetTurn}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "resetTurn leaves capacity", steps: []step{terminal(ReasonCapacity), resetTurn}, want: capacityAt(0), wantReason: ReasonCapacity, wantLen: 1},
		{name: "resetTurn on healthy", steps: []step{resetTurn}, want: healthyH, wantOK: true},
		{name: "reset clears quota", steps: []step{terminal(ReasonQuota), reset}, want: healthyH, wantOK: true},
		{name: "reset clears consumed sticky", steps: []step{sticky(1), consume, reset}, want: healthyH, wantOK: true},
		{name: "prefixed id marks the bare id", steps: []step{func(a *Availability, _ *fakeClock) { a.MarkTerminal("models/"+m, ReasonQuota) }}, want: quotaAt(0), wantReason: ReasonQuota, wantLen: 1},
		{name: "scheme id marks the bare id", steps: []step{func(a *Availability, _ *fakeClock) { a.MarkRetryOncePerTurn(" gemini:"+m, 2) }, consume}, want: stickyH(true, 2), wantReason: ReasonRetryOncePerTurn, wantLen: 1},
		{name: "prefixed id marks healthy", steps: []step{terminal(ReasonQuota), func(a *Availability, _ *fakeClock) { a.MarkHealthy("models/" + m) }}, want: healthyH, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			a := NewAvailability(append([]AvailabilityOption{WithClock(clk.Now)}, tc.opts...)...)
			for _, s := range tc.steps {
				s(a, clk)
			}
			if diff := cmp.Diff(tc.want, a.Health(m)); diff != "" {
				t.Errorf("Health(m) mismatch (-want +got):\n%s", diff)
			}
			// The prefixed spelling must see the same state.
			if diff := cmp.Diff(tc.want, a.Health("models/"+m)); diff != "" {
				t.Errorf("Health(models/m) mismatch (-want +got):\n%s", diff)
			}
			ok, reason := a.Available(m)
			if ok != tc.wantOK || reason != tc.wantReason {
				t.Errorf("Available(m) = %v, %q; want %v, %q", ok, reason, tc.wantOK, tc.wantReason)
			}
			if got := len(a.health); got != tc.wantLen {
				t.Errorf("recorded entries = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

func TestAvailabilityExpiredCapacityDeletedOnEveryRead(t *testing.T) {
	reads := map[string]func(a *Availability){
		"Health":               func(a *Availability) { a.Health("m") },
		"Available":            func(a *Availability) { a.Available("m") },
		"SelectFirstAvailable": func(a *Availability) { a.SelectFirstAvailable([]string{"m"}) },
		"ConsumeStickyAttempt": func(a *Availability) { a.ConsumeStickyAttempt("m") },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			clk := newFakeClock()
			a := NewAvailability(WithClock(clk.Now))
			a.MarkTerminal("m", ReasonCapacity)
			clk.Advance(DefaultCapacityTTL)
			read(a)
			if _, ok := a.health["m"]; ok {
				t.Errorf("expired capacity entry still recorded after %s", name)
			}
		})
	}
}

func TestAvailabilityResetTurnAndResetCoverAllModels(t *testing.T) {
	a := NewAvailability()
	a.MarkRetryOncePerTurn("a", 1)
	a.MarkRetryOncePerTurn("b", 2)
	a.ConsumeStickyAttempt("a")
	a.ConsumeStickyAttempt("b")
	a.MarkTerminal("c", ReasonQuota)
	a.ResetTurn()
	for _, m := range []string{"a", "b"} {
		if ok, _ := a.Available(m); !ok {
			t.Errorf("after ResetTurn, %s unavailable", m)
		}
	}
	if ok, r := a.Available("c"); ok || r != ReasonQuota {
		t.Errorf("after ResetTurn, Available(c) = %v, %q; want false, quota", ok, r)
	}
	a.Reset()
	if len(a.health) != 0 {
		t.Errorf("after Reset, %d entries remain", len(a.health))
	}
}

func TestSelectFirstAvailable(t *testing.T) {
	const (
		capM    = "capacity-model"
		stickyM = "sticky-model"
		okM     = "healthy-model"
	)
	tests := []struct {
		name   string
		setup  func(a *Availability)
		models []string
		want   Selection
	}{
		{name: "empty list", want: Selection{}},
		{name: "first healthy", models: []string{okM, capM}, want: Selection{Model: okM}},
		{
			name:   "skips terminal, picks fresh sticky with its attempts",
			setup:  func(a *Availability) { a.MarkTerminal(capM, ReasonCapacity); a.MarkRetryOncePerTurn(stickyM, 1) },
			models: []string{capM, stickyM, okM},
			want:   Selection{Model: stickyM, Attempts: 1, Skipped: []Skipped{{capM, ReasonCapacity}}},
		},
		{
			name: "skips consumed sticky",
			setup: func(a *Availability) {
				a.MarkTerminal(capM, ReasonCapacity)
				a.MarkRetryOncePerTurn(stickyM, 1)
				a.ConsumeStickyAttempt(stickyM)
			},
			models: []string{capM, stickyM, okM},
			want:   Selection{Model: okM, Skipped: []Skipped{{capM, ReasonCapacity}, {stickyM, ReasonRetryOncePerTurn}}},
		},
		{
			name: "sticky available again after resetTurn",
			setup: func(a *Availability) {
				a.MarkTerminal(capM, ReasonCapacity)
				a.MarkRetryOncePerTurn(stickyM, 3)
				a.ConsumeStickyAttempt(stickyM)
				a.ResetTurn()
			},
			models: []string{capM, stickyM, okM},
			want:   Selection{Model: stickyM, Attempts: 3, Skipped: []Skipped{{capM, ReasonCapacity}}},
		},
		{
			name:   "none available",
			setup:  func(a *Availability) { a.MarkTerminal(capM, ReasonQuota); a.MarkTerminal(okM, ReasonCapacity) },
			models: []string{capM, okM},
			want:   Selection{Skipped: []Skipped{{capM, ReasonQuota}, {okM, ReasonCapacity}}},
		},
		{
			name:   "unrecorded reason is reported unknown",
			setup:  func(a *Availability) { a.MarkTerminal(capM, "") },
			models: []string{capM, okM},
			want:   Selection{Model: okM, Skipped: []Skipped{{capM, ReasonUnknown}}},
		},
		{
			name:   "ids are normalized in the result",
			setup:  func(a *Availability) { a.MarkTerminal("gemini-3-flash-preview", ReasonQuota) },
			models: []string{"models/gemini-3-flash-preview", "models/gemini-3.1-pro-preview"},
			want:   Selection{Model: "gemini-3.1-pro-preview", Skipped: []Skipped{{"gemini-3-flash-preview", ReasonQuota}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAvailability()
			if tc.setup != nil {
				tc.setup(a)
			}
			if diff := cmp.Diff(tc.want, a.SelectFirstAvailable(tc.models)); diff != "" {
				t.Errorf("SelectFirstAvailable mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAvailabilityConcurrent hammers one Availability from many goroutines;
// under -race it fails if any method touches the map without the lock.
func TestAvailabilityConcurrent(t *testing.T) {
	clk := newFakeClock()
	a := NewAvailability(WithClock(clk.Now), WithCapacityTTL(time.Millisecond))
	models := []string{"a", "models/a", "b", "gemini:c", "d"}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				m := models[(g+i)%len(models)]
				switch (g + i) % 10 {
				case 0:
					a.MarkTerminal(m, ReasonCapacity)
				case 1:
					a.MarkTerminal(m, ReasonQuota)
				case 2:
					a.MarkRetryOncePerTurn(m, i%4)
				case 3:
					a.ConsumeStickyAttempt(m)
				case 4:
					a.MarkHealthy(m)
				case 5:
					a.Health(m)
				case 6:
					a.Available(m)
				case 7:
					a.SelectFirstAvailable(models)
				case 8:
					a.ResetTurn()
					clk.Advance(time.Millisecond)
				case 9:
					if i%50 == 0 {
						a.Reset()
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestSelectFirstAvailableAllocs pins the allocation budget: nothing when
// no model is skipped, one slice when some are.
func TestSelectFirstAvailableAllocs(t *testing.T) {
	a := NewAvailability()
	chain := []string{"gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-2.5-flash"}
	if n := testing.AllocsPerRun(100, func() { a.SelectFirstAvailable(chain) }); n != 0 {
		t.Errorf("healthy chain: %v allocs per call, want 0", n)
	}
	a.MarkTerminal(chain[0], ReasonQuota)
	a.MarkRetryOncePerTurn(chain[1], 1)
	a.ConsumeStickyAttempt(chain[1])
	if n := testing.AllocsPerRun(100, func() { a.SelectFirstAvailable(chain) }); n != 1 {
		t.Errorf("two skipped: %v allocs per call, want 1", n)
	}
}

func BenchmarkSelectFirstAvailable(b *testing.B) {
	for _, skip := range []int{0, 1, 3} {
		b.Run(fmt.Sprintf("skip%d", skip), func(b *testing.B) {
			a := NewAvailability()
			chain := []string{"models/gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-2.5-flash"}
			for _, m := range chain[:skip] {
				a.MarkTerminal(m, ReasonQuota)
			}
			b.ReportAllocs()
			for b.Loop() {
				a.SelectFirstAvailable(chain)
			}
		})
	}
}

func TestAvailabilityZeroValue(t *testing.T) {
	var a Availability
	if h := a.Health("m"); h.Status != StatusHealthy {
		t.Errorf("zero Availability: Health = %+v", h)
	}
	a.ResetTurn()
	a.MarkRetryOncePerTurn("s", 2)
	a.ConsumeStickyAttempt("s")
	a.MarkTerminal("m", ReasonCapacity)
	if ok, r := a.Available("m"); ok || r != ReasonCapacity {
		t.Errorf("zero Availability: Available(m) = %v, %q", ok, r)
	}
	if got := a.SelectFirstAvailable([]string{"s", "m", "x"}); got.Model != "x" || len(got.Skipped) != 2 {
		t.Errorf("zero Availability: SelectFirstAvailable = %+v", got)
	}
	a.Reset()
}
