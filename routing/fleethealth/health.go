package fleethealth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentry-dev/agentry/routing"
)

// DefaultQuotaTTL is how long a quota failure shared with the fleet lasts
// ([routing.WithQuotaTTL]): without one, a daily quota that ran out would
// keep every process that starts later, even the next day, off the model.
// A successful call marks the model healthy for the fleet sooner.
const DefaultQuotaTTL = time.Hour

// DefaultPollInterval is how often a call waiting for a slot tries again
// without being woken: a slot freed by a process that died is announced
// by no one.
const DefaultPollInterval = time.Second

// connectTimeout bounds Open's first connection when ctx has no deadline.
const connectTimeout = 10 * time.Second

// Limit caps the calls to one model across the fleet; zero is no cap.
type Limit struct {
	// MaxConcurrent is how many calls may run at once.
	MaxConcurrent int
	// RequestsPerMinute is how many calls may start in a minute (a
	// calendar minute on the database's clock).
	RequestsPerMinute int
}

// Health is one process's link to the fleet's model health and limits:
// a [routing.SharedHealth] and a [routing.Limiter]. Create it with [Open]
// and close it with [Health.Close]. It is safe for concurrent use.
type Health struct {
	pool    *pgxpool.Pool
	connCfg *pgx.ConnConfig
	log     *slog.Logger
	origin  string // this process's id in notifications
	schema  string
	channel string
	limits  map[string]Limit
	poll    time.Duration
	after   func(time.Duration) <-chan time.Time
	now     func() time.Time    // nil: the database's clock for rate windows
	onHeld  func(*pgxpool.Conn) // tests: sees the connection a slot is held on

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	subs     []func(routing.HealthUpdate)
	known    map[string]known // by model: the last version seen
	pending  map[string]routing.HealthUpdate
	wake     chan struct{}            // the writer's
	flushes  []chan struct{}          // answered once pending is written
	released map[string]chan struct{} // closed when a slot of the model is released
	closed   bool
}

// known is the last state of a model the fleet told this process.
type known struct {
	update  routing.HealthUpdate
	version int64
	at      time.Time // when it was received, for the TTL left
}

// Option configures a Health.
type Option func(*Health)

// WithLogger sets the logger of warnings (a failed write, a lost
// connection); nil keeps slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(h *Health) {
		if l != nil {
			h.log = l
		}
	}
}

// WithLimits sets the fleet-wide limits by model name (normalized as
// routing normalizes ids). Models without one are not limited.
func WithLimits(limits map[string]Limit) Option {
	return func(h *Health) {
		for m, l := range limits {
			if l.MaxConcurrent > 0 || l.RequestsPerMinute > 0 {
				h.limits[routing.NormalizeModelID(m)] = l
			}
		}
	}
}

// WithPollInterval sets how often a call waiting for a slot tries again
// without a wake-up (DefaultPollInterval); non-positive keeps it.
func WithPollInterval(d time.Duration) Option {
	return func(h *Health) {
		if d > 0 {
			h.poll = d
		}
	}
}

// WithAfter replaces time.After for the waits (a slot's poll, the next
// minute window, a reconnection), so tests decide when they end.
func WithAfter(after func(time.Duration) <-chan time.Time) Option {
	return func(h *Health) {
		if after != nil {
			h.after = after
		}
	}
}

// WithRateClock makes the requests-per-minute windows follow now instead
// of the database's clock; for tests.
func WithRateClock(now func() time.Time) Option {
	return func(h *Health) { h.now = now }
}

// Open connects to the PostgreSQL server of dsn (a pgx pool), migrates the
// schema, listens for the fleet's changes and loads its current state. The
// tables live in the DSN's current schema (its search_path).
func Open(ctx context.Context, dsn string, opts ...Option) (*Health, error) {
	h := &Health{
		log: slog.Default(), limits: map[string]Limit{}, poll: DefaultPollInterval, after: time.After,
		known: map[string]known{}, pending: map[string]routing.HealthUpdate{},
		wake: make(chan struct{}, 1), released: map[string]chan struct{}{},
	}
	for _, o := range opts {
		o(h)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("fleethealth: %w", err)
	}
	// A connection per slot held, and a few for the writes and waits.
	maxConns := int32(4)
	for _, l := range h.limits {
		maxConns += int32(l.MaxConcurrent)
	}
	cfg.MaxConns = min(maxConns, 64)
	// Counters and health rows are worth no fsync each: a database crash
	// loses at most the last moments' counts and marks, which the fleet
	// finds again at its next 429.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	h.connCfg = cfg.ConnConfig.Copy()
	var b [8]byte
	_, _ = rand.Read(b[:])
	h.origin = hex.EncodeToString(b[:])

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, connectTimeout)
		defer cancel()
	}
	h.pool, err = pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, fmt.Errorf("fleethealth: %w", err)
	}
	fail := func(what string, err error) (*Health, error) {
		h.pool.Close()
		return nil, fmt.Errorf("fleethealth: %s: %w", what, err)
	}
	var schema *string
	if err := h.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fail("connect", err)
	}
	if schema == nil {
		return fail("connect", errors.New("no current schema: the search_path names no existing schema"))
	}
	h.schema = *schema
	h.channel = channelName(h.schema)
	if err := migrate(ctx, h.pool, h.schema); err != nil {
		return fail("migrate", err)
	}
	listen, err := h.listen(ctx)
	if err != nil {
		return fail("listen", err)
	}
	h.ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	h.wg.Add(2)
	go h.listenLoop(listen)
	go h.writeLoop()
	return h, nil
}

// channelName is the NOTIFY channel of schema's fleet: an identifier
// short enough for PostgreSQL whatever the schema's name.
func channelName(schema string) string {
	f := fnv.New64a()
	_, _ = f.Write([]byte(schema))
	return fmt.Sprintf("agentry_fleet_%016x", f.Sum64())
}

// listen opens the listening connection and loads the state after
// LISTEN, so no change falls between the two: one announced during the
// load carries a version the load already has, and is skipped.
func (h *Health) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, h.connCfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{h.channel}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := h.load(ctx, conn); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// load reads every model's current state and applies what is newer than
// what this process knows.
func (h *Health) load(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT model, state, reason, version, origin,
		coalesce(ceil(extract(epoch FROM until - now()) * 1000), 0)::bigint
		FROM agentry_model_health WHERE until IS NULL OR until > now()`)
	if err != nil {
		return err
	}
	var msgs []message
	for rows.Next() {
		var m message
		if err := rows.Scan(&m.Model, &m.State, &m.Reason, &m.Version, &m.Origin, &m.TTL); err != nil {
			return err
		}
		m.Type = typeHealth
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range msgs {
		h.received(m)
	}
	return nil
}

// Notification types.
const (
	typeHealth  = "h" // a model's new state
	typeRelease = "r" // a slot of a model was released
)

// message is a notification's payload (and a loaded row).
type message struct {
	Type    string `json:"t"`
	Model   string `json:"m"`
	State   string `json:"s,omitempty"`
	Reason  string `json:"r,omitempty"`
	Version int64  `json:"v,omitempty"`
	Origin  string `json:"o,omitempty"`
	TTL     int64  `json:"ttl,omitempty"` // milliseconds left, on the database's clock
}

// received acts on a message: a newer health state is recorded and, when
// another process made it, handed to the subscribers; a release wakes the
// model's waiters.
func (h *Health) received(m message) {
	if m.Type == typeRelease {
		h.wakeWaiters(m.Model)
		return
	}
	u := routing.HealthUpdate{
		Model: m.Model, Status: routing.Status(m.State), Reason: routing.Reason(m.Reason),
		TTL: time.Duration(m.TTL) * time.Millisecond,
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if k, ok := h.known[m.Model]; ok && k.version >= m.Version {
		return
	}
	h.known[m.Model] = known{update: u, version: m.Version, at: time.Now()}
	if m.Origin == h.origin {
		// Our own change: applied when it was made. Applying it again
		// could undo a later local change.
		return
	}
	for _, apply := range h.subs {
		apply(u)
	}
}

// Publish implements routing.SharedHealth: the change is queued for the
// writer, which keeps only each model's latest change, and written and
// announced in the background.
func (h *Health) Publish(u routing.HealthUpdate) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.pending[routing.NormalizeModelID(u.Model)] = u
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Subscribe implements routing.SharedHealth: apply gets the fleet's
// current state at once (with the TTLs left), then every change another
// process publishes.
func (h *Health) Subscribe(apply func(routing.HealthUpdate)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	for _, k := range h.known {
		u := k.update
		if u.Status == routing.StatusTerminal && u.TTL > 0 {
			u.TTL -= now.Sub(k.at)
			if u.TTL <= 0 {
				continue
			}
		}
		apply(u)
	}
	h.subs = append(h.subs, apply)
}

// Flush waits until every change published so far is written and
// announced, or ctx ends.
func (h *Health) Flush(ctx context.Context) error {
	done := make(chan struct{})
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errors.New("fleethealth: closed")
	}
	h.flushes = append(h.flushes, done)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// writeLoop writes the queued changes, one statement each (the row and its
// NOTIFY, committed together).
func (h *Health) writeLoop() {
	defer h.wg.Done()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.wake:
		}
		h.mu.Lock()
		batch := h.pending
		h.pending = map[string]routing.HealthUpdate{}
		flushes := h.flushes
		h.flushes = nil
		h.mu.Unlock()
		for m, u := range batch {
			if err := h.write(m, u); err != nil {
				h.log.Warn("fleethealth: model health not shared", "model", m, "status", string(u.Status), "err", err)
			}
		}
		for _, f := range flushes {
			close(f)
		}
	}
}

// write upserts model's row with the next version and announces it.
func (h *Health) write(model string, u routing.HealthUpdate) error {
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	ttl := int64(0)
	if u.Status == routing.StatusTerminal && u.TTL > 0 {
		ttl = max(u.TTL.Milliseconds(), 1)
	}
	var version int64
	err := h.pool.QueryRow(ctx, `WITH up AS (
		INSERT INTO agentry_model_health AS h (model, state, reason, until, updated_at, version, origin)
		VALUES ($1, $2, $3, CASE WHEN $4::bigint > 0 THEN now() + $4::bigint * interval '1 millisecond' END, now(), 1, $5)
		ON CONFLICT (model) DO UPDATE SET state = excluded.state, reason = excluded.reason, until = excluded.until,
			updated_at = excluded.updated_at, version = h.version + 1, origin = excluded.origin
		RETURNING model, state, reason, version, origin)
		SELECT version, pg_notify($6, json_build_object('t', 'h', 'm', model, 's', state, 'r', reason,
			'v', version, 'o', origin, 'ttl', $4::bigint)::text) IS NULL FROM up`,
		model, string(u.Status), string(u.Reason), ttl, h.origin, h.channel).Scan(&version, new(bool))
	if err != nil {
		return err
	}
	h.mu.Lock()
	if k, ok := h.known[model]; !ok || k.version < version {
		h.known[model] = known{update: u, version: version, at: time.Now()}
	}
	h.mu.Unlock()
	return nil
}

// listenLoop hands every notification to received; when the connection
// is lost it reconnects (after the poll interval) and reloads the state,
// which brings back what was announced meanwhile.
func (h *Health) listenLoop(conn *pgx.Conn) {
	defer h.wg.Done()
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	for {
		if conn == nil {
			select {
			case <-h.ctx.Done():
				return
			case <-h.after(h.poll):
			}
			c, err := h.listen(h.ctx)
			if err != nil {
				if h.ctx.Err() == nil {
					h.log.Warn("fleethealth: reconnect failed", "err", err)
				}
				continue
			}
			conn = c
		}
		n, err := conn.WaitForNotification(h.ctx)
		if err != nil {
			if h.ctx.Err() != nil {
				return
			}
			h.log.Warn("fleethealth: listening connection lost; reconnecting", "err", err)
			_ = conn.Close(context.Background())
			conn = nil
			continue
		}
		var m message
		if err := json.Unmarshal([]byte(n.Payload), &m); err != nil {
			h.log.Warn("fleethealth: bad notification", "payload", n.Payload, "err", err)
			continue
		}
		h.received(m)
	}
}

// Close stops listening after writing the changes still queued (for at
// most a few seconds), and closes the pool: slots still held are freed.
func (h *Health) Close() error {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	flushErr := h.Flush(ctx)
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	h.pool.Close()
	if flushErr != nil {
		return fmt.Errorf("fleethealth: close: %w", flushErr)
	}
	return nil
}

var _ routing.SharedHealth = (*Health)(nil)
