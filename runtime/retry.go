package runtime

import (
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/agentry-dev/agentry/routing"
)

// Retry delays, gemini-cli's (utils/retry.ts).
const (
	DefaultInitialDelay = 5 * time.Second
	DefaultMaxDelay     = 30 * time.Second
	// silentCapacityAttempts is how many capacity failures are retried
	// quietly before the fallback handler is asked.
	silentCapacityAttempts = 3
	// Capacity retry delays when the server names none: 1 s, then 3 s.
	firstCapacityDelay  = time.Second
	secondCapacityDelay = 3 * time.Second
)

// RetryConfig tunes the dispatcher's retry loop. The zero value is
// gemini-cli's: 10 attempts, 5 s doubling to 30 s.
type RetryConfig struct {
	// MaxAttempts bounds attempts per model when no routing policy does;
	// 0 is 10.
	MaxAttempts int
	// InitialDelay and MaxDelay bound the exponential backoff.
	InitialDelay, MaxDelay time.Duration
	// NewTimer makes the timer the loop sleeps on; nil uses real timers.
	// Tests inject one that fires at once and records the delays.
	NewTimer func() backoff.Timer
	// Rand returns a number in [0, 1) for the jitter; nil is math/rand/v2.
	Rand func() float64
}

func (c RetryConfig) withDefaults() RetryConfig {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = routing.DefaultMaxAttempts
	}
	if c.InitialDelay <= 0 {
		c.InitialDelay = DefaultInitialDelay
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	return c
}

// quotaBackOff is gemini-cli's retry delay policy as a backoff.BackOff.
// The operation classifies each failure and sets the next delay through
// exponential, server or now; NextBackOff hands it to the backoff loop,
// which sleeps on its timer and gives up when the context ends.
type quotaBackOff struct {
	initial, max time.Duration
	rand         func() float64
	current      time.Duration
	next         time.Duration
}

func newQuotaBackOff(c RetryConfig) *quotaBackOff {
	return &quotaBackOff{initial: c.InitialDelay, max: c.MaxDelay, rand: c.Rand, current: c.InitialDelay, next: backoff.Stop}
}

// Reset implements backoff.BackOff.
func (b *quotaBackOff) Reset() { b.current, b.next = b.initial, backoff.Stop }

// NextBackOff implements backoff.BackOff: the delay the operation chose,
// or Stop when it chose none.
func (b *quotaBackOff) NextBackOff() time.Duration {
	n := b.next
	b.next = backoff.Stop
	return n
}

// exponential waits the current delay ±30 %, then doubles it up to max.
func (b *quotaBackOff) exponential() {
	jitter := float64(b.current) * 0.3 * (b.rand()*2 - 1)
	b.next = max(0, b.current+time.Duration(jitter))
	b.current = min(b.max, 2*b.current)
}

// server honours a server-requested delay: it waits at least that long,
// plus up to 20 % (never less than the server asked), then doubles.
func (b *quotaBackOff) server(delay time.Duration) {
	b.current = max(b.current, delay)
	b.next = b.current + time.Duration(float64(b.current)*0.2*b.rand())
	b.current = min(b.max, 2*b.current)
}

// now retries at once with the delay reset: the fallback handler chose a
// model that has not failed yet.
func (b *quotaBackOff) now() { b.current, b.next = b.initial, 0 }
