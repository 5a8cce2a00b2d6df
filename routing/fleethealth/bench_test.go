package fleethealth

import (
	"testing"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// BenchmarkAcquireRelease is the limiter's cost per model call: nothing
// for a model without a limit; for a limited one, the slot's lock (one
// round trip), the minute's counter (one more) and the unlock with its
// NOTIFY (one more), on the machine's PostgreSQL.
func BenchmarkAcquireRelease(b *testing.B) {
	dsn := pgtest.Schema(b, "fleet health", "fleet_")
	h, err := Open(b.Context(), dsn, WithLimits(map[string]Limit{
		"slots": {MaxConcurrent: 4},
		"rate":  {RequestsPerMinute: 1 << 30},
		"both":  {MaxConcurrent: 4, RequestsPerMinute: 1 << 30},
	}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	for _, m := range []string{"unlimited", "slots", "rate", "both"} {
		b.Run(m, func(b *testing.B) {
			for b.Loop() {
				release, err := h.Acquire(b.Context(), m)
				if err != nil {
					b.Fatal(err)
				}
				release()
			}
		})
	}
}
