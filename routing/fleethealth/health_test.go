package fleethealth

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentry-dev/agentry/internal/pgtest"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/routing"
)

const model = "gemini-2.5-pro"

// open opens a Health on dsn (its own pool, as another process would) and
// closes it when t ends.
func open(t *testing.T, dsn string, opts ...Option) *Health {
	t.Helper()
	h, err := Open(t.Context(), dsn, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// fleet opens n Healths on one fresh schema, each with an Availability.
func fleet(t *testing.T, n int, opts ...Option) (string, []*Health, []*routing.Availability) {
	t.Helper()
	dsn := pgtest.Schema(t, "fleet health", "fleet_")
	hs := make([]*Health, n)
	as := make([]*routing.Availability, n)
	for i := range n {
		hs[i] = open(t, dsn, opts...)
		as[i] = routing.NewAvailability(routing.WithShared(hs[i]))
	}
	return dsn, hs, as
}

func flush(t *testing.T, hs ...*Health) {
	t.Helper()
	for _, h := range hs {
		if err := h.Flush(t.Context()); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
}

// row reads model's shared state.
func row(t *testing.T, dsn string) (state, reason string, version int64, hasUntil bool) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var until *time.Time
	if err := conn.QueryRow(t.Context(), `SELECT state, reason, version, until FROM agentry_model_health WHERE model = $1`, model).
		Scan(&state, &reason, &version, &until); err != nil {
		t.Fatalf("read row: %v", err)
	}
	return state, reason, version, until != nil
}

// TestTerminalSpreadsAndHealthyFollows: a quota failure marked in one
// process is seen by the two others through NOTIFY; the model marked
// healthy again is healthy everywhere; neither change echoes back (the
// row's version counts exactly the two publications).
func TestTerminalSpreadsAndHealthyFollows(t *testing.T) {
	dsn, hs, as := fleet(t, 3)
	as[0].MarkTerminal(model, routing.ReasonQuota)
	for i, a := range as[1:] {
		proctest.Eventually(t, "quota failure reaches process "+string(rune('1'+i)), func() bool {
			ok, reason := a.Available(model)
			return !ok && reason == routing.ReasonQuota
		})
	}
	if state, reason, v, hasUntil := row(t, dsn); state != "terminal" || reason != "quota" || v != 1 || hasUntil {
		t.Errorf("row = %s %s v%d until=%v, want terminal quota v1 without until", state, reason, v, hasUntil)
	}
	as[0].MarkHealthy(model)
	for _, a := range as[1:] {
		proctest.Eventually(t, "healthy reaches the others", func() bool {
			ok, _ := a.Available(model)
			return ok
		})
	}
	// Had a receiver published what it applied, its write would be
	// queued by now: flush them all and count the versions.
	flush(t, hs...)
	if state, _, v, _ := row(t, dsn); state != "healthy" || v != 2 {
		t.Errorf("row = %s v%d, want healthy v2 (no echo)", state, v)
	}
}

// TestLateJoinerLoadsState: a process that starts after the failure
// starts with it, and with what is left of its TTL.
func TestLateJoinerLoadsState(t *testing.T) {
	dsn, hs, as := fleet(t, 1)
	as[0].MarkTerminal(model, routing.ReasonCapacity)
	flush(t, hs...)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	late := routing.NewAvailability(routing.WithShared(open(t, dsn)), routing.WithClock(clock.Now))
	if ok, reason := late.Available(model); ok || reason != routing.ReasonCapacity {
		t.Fatalf("late joiner: available=%v reason=%s, want capacity failure", ok, reason)
	}
	clock.Advance(routing.DefaultCapacityTTL)
	if ok, _ := late.Available(model); !ok {
		t.Error("the capacity failure outlived its TTL in the late joiner")
	}
}

// TestCapacityExpiresOnReceiversClock: a shared capacity failure lasts the
// TTL on each receiver's own clock, from when it was applied.
func TestCapacityExpiresOnReceiversClock(t *testing.T) {
	dsn := pgtest.Schema(t, "fleet health", "fleet_")
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a0 := routing.NewAvailability(routing.WithShared(open(t, dsn)), routing.WithCapacityTTL(10*time.Second))
	a1 := routing.NewAvailability(routing.WithShared(open(t, dsn)), routing.WithClock(clock.Now))
	a0.MarkTerminal(model, routing.ReasonCapacity)
	proctest.Eventually(t, "capacity failure shared", func() bool {
		ok, reason := a1.Available(model)
		return !ok && reason == routing.ReasonCapacity
	})
	// The sender's TTL (10 s) travels, not the receiver's default (30 s).
	clock.Advance(10*time.Second - time.Millisecond)
	if ok, _ := a1.Available(model); ok {
		t.Fatal("expired before its TTL")
	}
	clock.Advance(time.Millisecond)
	if ok, _ := a1.Available(model); !ok {
		t.Error("not expired after its TTL")
	}
}

// TestStickyStaysLocal: the sticky retry state is a turn's and is not
// published.
func TestStickyStaysLocal(t *testing.T) {
	dsn, hs, as := fleet(t, 2)
	as[0].MarkRetryOncePerTurn(model, 2)
	as[0].ConsumeStickyAttempt(model)
	as[0].ResetTurn()
	as[0].Reset()
	flush(t, hs...)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM agentry_model_health`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows published for local states", n)
	}
	if h := as[1].Health(model); h.Status != routing.StatusHealthy {
		t.Errorf("other process: %+v", h)
	}
}

// TestConcurrentStartMigratesOnce: processes starting together all open,
// and the schema's version is recorded once.
func TestConcurrentStartMigratesOnce(t *testing.T) {
	dsn := pgtest.Schema(t, "fleet health", "fleet_")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() {
			h, err := Open(t.Context(), dsn)
			errs[i] = err
			if err == nil {
				_ = h.Close()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n, v int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), max(version) FROM agentry_fleethealth_migrations`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != SchemaVersion || v != SchemaVersion {
		t.Errorf("migrations: %d rows, version %d; want %d", n, v, SchemaVersion)
	}
}

// TestOpenUnreachable: a server that does not answer is an error naming
// the step.
func TestOpenUnreachable(t *testing.T) {
	_, err := Open(t.Context(), "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=5")
	if err == nil {
		t.Fatal("Open succeeded without a server")
	}
}

// TestMaxConcurrentAcrossProcesses: three processes, many goroutines,
// never more than two calls at once fleet-wide.
func TestMaxConcurrentAcrossProcesses(t *testing.T) {
	limits := WithLimits(map[string]Limit{model: {MaxConcurrent: 2}})
	_, hs, _ := fleet(t, 3, limits, WithPollInterval(5*time.Millisecond))
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, h := range hs {
		for range 8 {
			wg.Go(func() {
				for range 5 {
					release, err := h.Acquire(t.Context(), "models/"+model)
					if err != nil {
						errs <- err
						return
					}
					n := running.Add(1)
					for {
						p := peak.Load()
						if n <= p || peak.CompareAndSwap(p, n) {
							break
						}
					}
					time.Sleep(time.Millisecond) // hold the slot a little
					running.Add(-1)
					release()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Acquire: %v", err)
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d calls ran at once; the limit is 2", p)
	}
	// An unlimited model costs nothing.
	release, err := hs[0].Acquire(t.Context(), "gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	release()
}

// TestKilledHolderFreesSlot: the connections holding a process's slots
// end as a killed process's would (closed under it, no unlock); another
// process waiting for a slot gets one.
func TestKilledHolderFreesSlot(t *testing.T) {
	dsn := pgtest.Schema(t, "fleet health", "fleet_")
	limits := WithLimits(map[string]Limit{model: {MaxConcurrent: 2}})
	var held []*pgxpool.Conn
	var mu sync.Mutex
	holder := open(t, dsn, limits)
	holder.onHeld = func(c *pgxpool.Conn) { mu.Lock(); held = append(held, c); mu.Unlock() }
	waiter := open(t, dsn, limits, WithPollInterval(10*time.Millisecond))
	for range 2 {
		release, err := holder.Acquire(t.Context(), model)
		if err != nil {
			t.Fatal(err)
		}
		// Hands the dead connections back, so the pool can close.
		defer release()
	}
	got := make(chan error, 1)
	go func() {
		release, err := waiter.Acquire(t.Context(), model)
		if err == nil {
			release()
		}
		got <- err
	}()
	// Not before the holder dies: it holds both slots. Wait for the
	// waiter to try at least once before killing.
	proctest.Eventually(t, "the waiter is polling", func() bool {
		select {
		case err := <-got:
			t.Fatalf("a third slot was granted while two were held (err %v)", err)
		default:
		}
		waiter.mu.Lock()
		defer waiter.mu.Unlock()
		return waiter.released[model] != nil
	})
	mu.Lock()
	for _, c := range held {
		_ = c.Conn().PgConn().Conn().Close() // the socket, as a SIGKILL leaves it
	}
	mu.Unlock()
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

// TestRequestsPerMinute: three calls a minute across two processes; the
// fourth waits for the next window, as long as the database says is left.
func TestRequestsPerMinute(t *testing.T) {
	dsn := pgtest.Schema(t, "fleet health", "fleet_")
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC)}
	var timers proctest.Timers
	opts := []Option{WithLimits(map[string]Limit{model: {RequestsPerMinute: 3}}), WithRateClock(clock.Now), WithAfter(timers.After)}
	a, b := open(t, dsn, opts...), open(t, dsn, opts...)
	for _, h := range []*Health{a, a, b} {
		release, err := h.Acquire(t.Context(), model)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	got := make(chan error, 1)
	go func() {
		_, err := b.Acquire(t.Context(), model)
		got <- err
	}()
	timers.Await(t, 30*time.Second)
	select {
	case err := <-got:
		t.Fatalf("fourth call of the minute admitted (err %v)", err)
	default:
	}
	clock.Advance(30 * time.Second)
	timers.Fire(t, 30*time.Second)
	if err := <-got; err != nil {
		t.Fatalf("next window: %v", err)
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
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

// TestListenerReconnects: a process whose listening connection is cut
// reconnects and, by reloading the table, gets the change announced while
// it was deaf.
func TestListenerReconnects(t *testing.T) {
	dsn := pgtest.Schema(t, "fleet health", "fleet_")
	var timers proctest.Timers
	deaf := open(t, dsn+"&application_name=agentry_deaf", WithAfter(timers.After))
	a := routing.NewAvailability(routing.WithShared(deaf))
	sender := routing.NewAvailability(routing.WithShared(open(t, dsn)))
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agentry_deaf'`); err != nil {
		t.Fatal(err)
	}
	// The listener noticed and waits to reconnect: announce meanwhile.
	timers.Await(t, DefaultPollInterval)
	sender.MarkTerminal(model, routing.ReasonQuota)
	proctest.Eventually(t, "the row is written", func() bool {
		var n int
		_ = admin.QueryRow(t.Context(), `SELECT count(*) FROM agentry_model_health`).Scan(&n)
		return n == 1
	})
	if ok, _ := a.Available(model); !ok {
		t.Fatal("a deaf process heard the change")
	}
	timers.Fire(t, DefaultPollInterval)
	proctest.Eventually(t, "the change is loaded after the reconnection", func() bool {
		ok, reason := a.Available(model)
		return !ok && reason == routing.ReasonQuota
	})
}
