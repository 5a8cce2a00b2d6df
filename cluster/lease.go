package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Owner is the replica holding a context's lease.
type Owner struct {
	// ReplicaID and URL name the replica (URL its advertised base URL).
	ReplicaID, URL string
	// Self is set when the replica is this one.
	Self bool
}

// ErrNoOwner is returned by Acquire when the lease of a context is held by
// a replica that has not recorded itself as the holder (it is taking the
// context this very moment, or lost its registry rows); a retry settles
// it.
var ErrNoOwner = errors.New("the context's lease is held by a replica that has not said where it is; retry")

// ownerRetries and ownerRetryWait bound how long Acquire waits for a
// holder to record itself.
const (
	ownerRetries   = 40
	ownerRetryWait = 5 * time.Millisecond
)

// key is the advisory lock key of a context: a hash of the schema and the
// id, so that deployments sharing a database in separate schemas do not
// share leases.
func (n *Node) key(contextID string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(n.schema))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(contextID))
	return int64(h.Sum64())
}

// Check returns nil while this replica holds the context's lease, and
// ErrLeaseLost (or ErrStopped) once it does not, as far as this replica
// knows: it reads memory only (see Confirm).
func (n *Node) Check(contextID string) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	switch {
	case n.stopped:
		return ErrStopped
	case !n.held[contextID]:
		return ErrLeaseLost
	}
	return nil
}

// confirmTimeout bounds Confirm's round trip.
const confirmTimeout = 2 * time.Second

// Confirm returns nil when this replica holds the context's lease now:
// Check, then a round trip on the lease connection, whose session holds
// the lease's lock as long as it answers. A session calls it before every
// model and tool call, so a replica that lost its lease (its connection
// ended by PostgreSQL, a network failure) stops before the next call
// rather than at the watcher's next ping. A failed round trip loses every
// lease at once, as the watcher's ping does.
func (n *Node) Confirm(contextID string) error {
	if err := n.Check(contextID); err != nil {
		return err
	}
	n.connMu.Lock()
	err := ErrLeaseLost
	if n.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), confirmTimeout)
		err = n.conn.Ping(ctx)
		cancel()
	}
	n.connMu.Unlock()
	if err != nil {
		n.ping() // every lease lost, OnLost told, a new connection
		if errors.Is(err, ErrLeaseLost) {
			return err
		}
		return fmt.Errorf("%w: the lease connection: %w", ErrLeaseLost, err)
	}
	return n.Check(contextID)
}

// Acquire returns the holder of the context's lease, taking the lease
// when nobody holds it: for a new context, or one whose holder died. A
// lease taken from a dead holder first fails the tasks it left unfinished
// (Config.Tasks, TakeoverMessage). Acquire is idempotent for a context
// this replica holds.
func (n *Node) Acquire(ctx context.Context, contextID string) (Owner, error) {
	for i := 0; ; i++ {
		self, err := n.tryAcquire(ctx, contextID)
		if err != nil {
			return Owner{}, err
		}
		if self {
			return Owner{ReplicaID: n.cfg.ID, URL: n.cfg.AdvertiseURL, Self: true}, nil
		}
		o, err := n.owner(ctx, contextID)
		if err == nil || !errors.Is(err, ErrNoOwner) || i == ownerRetries {
			return o, err
		}
		select {
		case <-ctx.Done():
			return Owner{}, ctx.Err()
		case <-time.After(ownerRetryWait):
		}
	}
}

// tryAcquire takes the lease if it is free, and reports whether this
// replica holds it.
func (n *Node) tryAcquire(ctx context.Context, contextID string) (bool, error) {
	if n.Check(contextID) == nil {
		return true, nil
	}
	n.connMu.Lock()
	defer n.connMu.Unlock()
	n.mu.RLock()
	held, stopped := n.held[contextID], n.stopped
	n.mu.RUnlock()
	switch {
	case stopped:
		return false, ErrStopped
	case held:
		return true, nil
	case n.conn == nil:
		return false, fmt.Errorf("cluster: context %s: this replica's lease connection is down; it reconnects within %v", contextID, n.cfg.PingInterval)
	}
	k := n.key(contextID)
	var ok bool
	if err := n.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, k).Scan(&ok); err != nil {
		return false, fmt.Errorf("cluster: lease of context %s: %w", contextID, err)
	}
	if !ok {
		return false, nil
	}
	undo := func(err error) (bool, error) {
		_, _ = n.conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, k)
		return false, fmt.Errorf("cluster: take context %s: %w", contextID, err)
	}
	// Nobody else runs the context now: what a dead holder left
	// unfinished will never finish.
	failed, err := n.cfg.Tasks.FailContext(ctx, contextID, TakeoverMessage)
	if err != nil {
		return undo(err)
	}
	if err := n.appendTakeover(ctx, contextID); err != nil {
		return undo(err)
	}
	if _, err := n.db.ExecContext(ctx, `INSERT INTO agentry_context_owners (context_id, replica_id, since) VALUES ($1, $2, $3)
		ON CONFLICT (context_id) DO UPDATE SET replica_id = EXCLUDED.replica_id, since = EXCLUDED.since`,
		contextID, n.cfg.ID, n.cfg.Now().UnixMicro()); err != nil {
		return undo(err)
	}
	if failed > 0 {
		n.log.Warn("cluster: took over a context whose replica stopped", "context", contextID, "failedTasks", failed)
	}
	n.mu.Lock()
	n.held[contextID] = true
	n.mu.Unlock()
	return true, nil
}

// owner reads the recorded holder of a context held elsewhere.
func (n *Node) owner(ctx context.Context, contextID string) (Owner, error) {
	var o Owner
	err := n.db.QueryRowContext(ctx, `SELECT o.replica_id, COALESCE(r.url, '') FROM agentry_context_owners o
		LEFT JOIN agentry_replicas r ON r.replica_id = o.replica_id WHERE o.context_id = $1`, contextID).Scan(&o.ReplicaID, &o.URL)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Owner{}, fmt.Errorf("cluster: context %s: %w", contextID, ErrNoOwner)
	case err != nil:
		return Owner{}, fmt.Errorf("cluster: owner of context %s: %w", contextID, err)
	case o.ReplicaID == n.cfg.ID, o.URL == "":
		// The row is this replica's from before it lost the lease, or
		// names a replica gone from the registry.
		return Owner{}, fmt.Errorf("cluster: context %s: %w", contextID, ErrNoOwner)
	}
	return o, nil
}

// Release gives up the context's lease, if held.
func (n *Node) Release(ctx context.Context, contextID string) error {
	n.connMu.Lock()
	defer n.connMu.Unlock()
	n.mu.Lock()
	held := n.held[contextID]
	delete(n.held, contextID)
	n.mu.Unlock()
	if !held || n.conn == nil {
		return nil
	}
	if _, err := n.db.ExecContext(ctx, `DELETE FROM agentry_context_owners WHERE context_id = $1 AND replica_id = $2`, contextID, n.cfg.ID); err != nil {
		return fmt.Errorf("cluster: release context %s: %w", contextID, err)
	}
	if _, err := n.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, n.key(contextID)); err != nil {
		return fmt.Errorf("cluster: release context %s: %w", contextID, err)
	}
	return nil
}

// Held returns the contexts whose leases this replica holds, sorted.
func (n *Node) Held() []string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	ids := make([]string, 0, len(n.held))
	for id := range n.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Recover fails the unfinished tasks of every context whose recorded
// holder is gone: what replicas that died (or the previous run of this
// one) left. A context is checked by taking its lease, which proves its
// holder gone, and released afterwards. A context no replica ever
// recorded is left alone: its first task is written before its replica
// takes the lease, so it may be a new context a live replica is starting;
// if it is not, the next request for the context fails its tasks when it
// takes the lease. It returns the contexts recovered.
func (n *Node) Recover(ctx context.Context) ([]string, error) {
	ids, err := n.cfg.Tasks.UnfinishedContexts(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: recover: %w", err)
	}
	var done []string
	for _, id := range ids {
		if n.Check(id) == nil {
			continue
		}
		var recorded bool
		if err := n.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM agentry_context_owners WHERE context_id = $1)`, id).Scan(&recorded); err != nil {
			return done, fmt.Errorf("cluster: recover: %w", err)
		}
		if !recorded {
			continue
		}
		self, err := n.tryAcquire(ctx, id)
		if err != nil {
			return done, fmt.Errorf("cluster: recover: %w", err)
		}
		if !self {
			continue // a live replica runs it
		}
		done = append(done, id)
		if err := n.Release(ctx, id); err != nil {
			return done, fmt.Errorf("cluster: recover: %w", err)
		}
	}
	return done, nil
}

// watch pings the lease connection every PingInterval and beats the
// replica's heart every HeartbeatEvery pings, until Stop.
func (n *Node) watch() {
	defer close(n.done)
	beats := 0
	for {
		select {
		case <-n.stop:
			return
		case <-n.cfg.After(n.cfg.PingInterval):
		}
		n.ping()
		if beats++; beats >= n.cfg.HeartbeatEvery {
			beats = 0
			n.heartbeat()
		}
	}
}

// ping checks the lease connection. When it is broken every lease is
// lost at once: OnLost hears them, and a new connection is opened (now,
// or at a later ping) for the contexts to come.
func (n *Node) ping() {
	n.connMu.Lock()
	var lost []string
	if n.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(n.cfg.PingInterval, time.Second))
		err := n.conn.Ping(ctx)
		cancel()
		if err != nil {
			n.log.Warn("cluster: the lease connection broke: every context of this replica is lost", "err", err)
			pid := n.conn.PgConn().PID()
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = n.conn.Close(closeCtx)
			cancel()
			n.conn = nil
			n.mu.Lock()
			for id := range n.held {
				lost = append(lost, id)
			}
			n.held = map[string]bool{}
			n.mu.Unlock()
			// If the server still runs the old session (the network
			// failed, not the server), end it so that its locks are
			// freed now rather than when its TCP keepalive gives up.
			killCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, _ = n.db.ExecContext(killCtx, `SELECT pg_terminate_backend($1)`, pid)
			_, _ = n.db.ExecContext(killCtx, `DELETE FROM agentry_context_owners WHERE replica_id = $1`, n.cfg.ID)
			cancel()
		}
	}
	if n.conn == nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(n.cfg.PingInterval, time.Second))
		conn, err := connect(ctx, n.cfg.DSN, n.cfg.ID)
		cancel()
		if err != nil {
			n.log.Warn("cluster: cannot reopen the lease connection", "err", err)
		} else {
			n.conn = conn
		}
	}
	n.connMu.Unlock()
	if len(lost) > 0 && n.cfg.OnLost != nil {
		slices.Sort(lost)
		n.cfg.OnLost(lost)
	}
}

// heartbeat records that the replica is alive.
func (n *Node) heartbeat() {
	ctx, cancel := context.WithTimeout(context.Background(), max(n.cfg.PingInterval, time.Second))
	defer cancel()
	if _, err := n.db.ExecContext(ctx, `INSERT INTO agentry_replicas (replica_id, url, started, heartbeat) VALUES ($1, $2, $3, $3)
		ON CONFLICT (replica_id) DO UPDATE SET heartbeat = EXCLUDED.heartbeat`,
		n.cfg.ID, n.cfg.AdvertiseURL, n.cfg.Now().UnixMicro()); err != nil {
		n.log.Warn("cluster: heartbeat", "err", err)
	}
}

// connect opens replica id's lease connection, named "agentry lease <id>"
// in pg_stat_activity. Its server-side TCP keepalives are
// short: when a replica's machine vanishes without closing the
// connection, PostgreSQL ends the session, and frees its leases, within
// about 8 s (5 s idle, then 3 probes 1 s apart) rather than the server's
// default two hours.
func connect(ctx context.Context, dsn, id string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "1", "tcp_keepalives_count": "3", "application_name": LeaseApplicationName(id)} {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// LeaseApplicationName is the application_name of replica id's lease
// connection, by which an operator finds it in pg_stat_activity.
func LeaseApplicationName(id string) string { return "agentry lease " + id }
