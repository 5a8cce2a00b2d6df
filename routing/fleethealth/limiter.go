package fleethealth

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentry-dev/agentry/routing"
)

// noRelease is the release of a call that took nothing.
func noRelease() {}

// Acquire implements routing.Limiter: it waits for one of model's
// MaxConcurrent slots, then for room in the current minute's
// RequestsPerMinute, or until ctx ends. A model without a limit returns at
// once. release frees the slot; calling it more than once is harmless.
//
// A slot is a session advisory lock, pg_try_advisory_lock on a key made of
// the schema, the model and the slot's number, held on a connection taken
// from the pool for the call's duration. PostgreSQL drops a session's
// locks when its connection ends, so a process that is killed (or whose
// Health is closed) frees its slots with nothing to expire or heartbeat;
// the waiters of other processes find them at their next poll, since no
// one announces them. The price is one connection per running limited
// call, at most MaxConcurrent across the whole fleet.
func (h *Health) Acquire(ctx context.Context, model string) (release func(), err error) {
	m := routing.NormalizeModelID(model)
	lim, ok := h.limits[m]
	if !ok {
		return noRelease, nil
	}
	release = noRelease
	if lim.MaxConcurrent > 0 {
		if release, err = h.acquireSlot(ctx, m, lim.MaxConcurrent); err != nil {
			return nil, err
		}
	}
	if lim.RequestsPerMinute > 0 {
		if err := h.takeRate(ctx, m, lim.RequestsPerMinute); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

// slotKey is the text the lock keys of model's slots are hashed from
// (hashtextextended, in the query): the schema keeps fleets apart.
func (h *Health) slotKey(model string) string {
	return "agentry.fleethealth.slot|" + h.schema + "|" + model + "|"
}

// acquireSlot takes the first free of n slots, starting at a random one so
// that processes do not all queue on slot 0, waiting between tries for a
// release announced on the channel or the poll interval.
func (h *Health) acquireSlot(ctx context.Context, model string, n int) (func(), error) {
	key := h.slotKey(model)
	for {
		// Taken before trying, so a release between the try and the
		// wait still wakes this call.
		wake := h.waiters(model)
		conn, err := h.pool.Acquire(ctx)
		if err != nil {
			return nil, h.waitErr(ctx, err)
		}
		var slot *int32
		err = conn.QueryRow(ctx, `SELECT s FROM generate_series(0, $2::int - 1) AS g(i),
			LATERAL (SELECT ((g.i + $3::int) % $2::int)::int AS s) AS k
			WHERE pg_try_advisory_lock(hashtextextended($1 || k.s::text, 0)) LIMIT 1`,
			key, n, rand.IntN(n)).Scan(&slot)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			conn.Release()
			return nil, h.waitErr(ctx, err)
		}
		if err == nil && slot != nil {
			if h.onHeld != nil {
				h.onHeld(conn)
			}
			return h.releaser(conn, model, key+fmt.Sprint(*slot)), nil
		}
		conn.Release()
		select {
		case <-wake:
		case <-h.after(h.poll):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// releaser returns the release of a slot held on conn: unlock, announce,
// and hand the connection back; a connection that cannot unlock is closed,
// which unlocks too.
func (h *Health) releaser(conn *pgxpool.Conn, model, lockKey string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			payload := fmt.Sprintf(`{"t":%q,"m":%q}`, typeRelease, model)
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0)), pg_notify($2, $3)`, lockKey, h.channel, payload); err != nil {
				h.log.Warn("fleethealth: slot release failed; closing its connection", "model", model, "err", err)
				_ = conn.Conn().Close(ctx)
			}
			conn.Release()
			h.wakeWaiters(model)
		})
	}
}

// waiters returns the channel closed at model's next slot release.
func (h *Health) waiters(model string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.released[model]
	if !ok {
		c = make(chan struct{})
		h.released[model] = c
	}
	return c
}

// wakeWaiters wakes every call waiting for a slot of model.
func (h *Health) wakeWaiters(model string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.released[model]; ok {
		close(c)
		delete(h.released, model)
	}
}

// waitErr prefers ctx's cause to the database error it caused.
func (h *Health) waitErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return fmt.Errorf("fleethealth: %w", err)
}

// takeRate counts one call in model's current minute window, atomically
// (INSERT … ON CONFLICT DO UPDATE … WHERE count < limit RETURNING): when
// the window is full it waits for the next one, as long as the database
// says is left of this one.
func (h *Health) takeRate(ctx context.Context, model string, perMinute int) error {
	for {
		var at *time.Time
		if h.now != nil {
			t := h.now()
			at = &t
		}
		var count *int32
		var waitMs int64
		err := h.pool.QueryRow(ctx, `WITH w AS (SELECT coalesce($3::timestamptz, now()) AS t),
			win AS (SELECT date_trunc('minute', t) AS ws, t FROM w),
			up AS (
				INSERT INTO agentry_model_rate AS r (model, window_start, count)
				SELECT $1, ws, 1 FROM win
				ON CONFLICT (model, window_start) DO UPDATE SET count = r.count + 1 WHERE r.count < $2
				RETURNING count)
			SELECT (SELECT count FROM up),
				ceil(extract(epoch FROM ws + interval '1 minute' - t) * 1000)::bigint FROM win`,
			model, perMinute, at).Scan(&count, &waitMs)
		if err != nil {
			return h.waitErr(ctx, err)
		}
		if count != nil {
			if *count == 1 {
				// The first call of a window sweeps the old ones.
				_, _ = h.pool.Exec(ctx, `DELETE FROM agentry_model_rate WHERE model = $1 AND window_start < coalesce($2::timestamptz, now()) - interval '10 minutes'`, model, at)
			}
			return nil
		}
		select {
		case <-h.after(time.Duration(max(waitMs, 1)) * time.Millisecond):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

var _ routing.Limiter = (*Health)(nil)
