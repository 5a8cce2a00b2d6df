package proctest

import (
	"sync"
	"testing"
	"time"
)

// hangGuard bounds how long Timers.Fire waits for the code under test to
// start the timer it fires: a hang guard, not a speed requirement.
const hangGuard = 20 * time.Second

// Timers stands in for time.After in code that waits (a kill grace, a
// drain bound): its timers fire only when the test fires them, so a test
// decides the order of events instead of sleeping. The zero value is ready
// to use and safe for concurrent use.
type Timers struct {
	mu      sync.Mutex
	cond    *sync.Cond
	started []timer // in the order they were started, fired ones removed
}

type timer struct {
	d time.Duration
	c chan time.Time
}

// After is the time.After of the code under test.
func (f *Timers) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	c := make(chan time.Time, 1)
	f.started = append(f.started, timer{d, c})
	f.cond.Broadcast()
	return c
}

func (f *Timers) init() {
	if f.cond == nil {
		f.cond = sync.NewCond(&f.mu)
	}
}

// Fire waits until a timer for d has been started and fires the oldest
// such, failing t if none is started within the hang guard.
func (f *Timers) Fire(t testing.TB, d time.Duration) {
	t.Helper()
	if !f.await(d) {
		t.Fatalf("no timer for %v was started", d)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, tm := range f.started {
		if tm.d == d {
			tm.c <- time.Now()
			f.started = append(f.started[:i], f.started[i+1:]...)
			return
		}
	}
}

// Await waits until a timer for d has been started, without firing it,
// failing t if none is started within the hang guard.
func (f *Timers) Await(t testing.TB, d time.Duration) {
	t.Helper()
	if !f.await(d) {
		t.Fatalf("no timer for %v was started", d)
	}
}

// Pending reports how many timers for d were started and not fired.
func (f *Timers) Pending(d time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, tm := range f.started {
		if tm.d == d {
			n++
		}
	}
	return n
}

func (f *Timers) await(d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	deadline := time.Now().Add(hangGuard)
	// Wake the waiter at the deadline, so it can give up.
	stop := time.AfterFunc(hangGuard, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop.Stop()
	for {
		for _, tm := range f.started {
			if tm.d == d {
				return true
			}
		}
		if !time.Now().Before(deadline) {
			return false
		}
		f.cond.Wait()
	}
}
