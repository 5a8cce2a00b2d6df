// Package cluster lets several agentry serve processes (replicas) share
// the contexts of one PostgreSQL database: each replica registers itself
// (id, advertised URL, start, heartbeat) in agentry_replicas; a context
// runs on exactly one replica at a time, the holder of its lease; a
// request that reaches another replica is forwarded to the holder
// (Node.Handler), and a context whose holder died is taken over by the
// next replica a request for it reaches.
//
// # Leases
//
// A lease is a PostgreSQL session-level advisory lock on a 64-bit hash of
// the schema and the context id, held on one connection per replica kept
// for nothing else. A lock dies with the connection that holds it: a
// replica killed with SIGKILL, or cut off from the database, loses every
// lease as soon as PostgreSQL notices, with no expiry to wait for and no
// clock to trust, and another replica's pg_try_advisory_lock then
// succeeds. (A heartbeated lease row would be held for its whole expiry
// after its holder died, and needs clocks that agree.) Beside the lock,
// agentry_context_owners names the holder of each context, so that the
// others find the URL to forward to.
//
// A goroutine pings the lease connection (Config.PingInterval, 1 s by
// default). When it fails the replica counts every lease lost at once
// (Config.OnLost hears which, so that their runs are stopped), Check
// fails for them, and a new lease connection is opened for the contexts
// to come. Confirm — Check, then a round trip on the lease connection —
// is what a session asks before every model and tool call (package
// plugins/lease), so a replica that lost a context stops its turn before
// the next call: a turn never runs on two replicas.
//
// # Taking over
//
// Acquiring a lease that was not held — a new context, or one whose
// holder died — first fails the tasks the dead holder left unfinished
// (Config.Tasks), with TakeoverMessage, then records the new holder. At
// start, Recover does the same for every context with unfinished tasks
// and no live holder, instead of the task store's recovery at open,
// which would fail the tasks of live replicas too.
//
// # Event log
//
// Every event of every task a replica runs is appended (Append, through
// protocol.Config.EventLog) to agentry_task_events by one writer
// goroutine per replica: each round one multi-row INSERT and one NOTIFY
// naming the tasks written. A subscribe that reaches a replica not
// running the task is served there (Config.SubscribeFromLog): Follow
// replays the task's events and reads the later ones as the replica's
// LISTEN connection is woken, until the execution ends. A takeover
// appends TakeoverEvent for each task the dead holder left unfinished.
//
// # Schema
//
// The tables are created and migrated on Start, in one transaction under
// an advisory lock, so replicas starting at once migrate once; their
// version is kept in agentry_cluster_schema_version.
package cluster

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	// The pgx driver for database/sql.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// TakeoverMessage is the status message of a task failed because the
// replica running it stopped before it finished.
const TakeoverMessage = "the replica running this task stopped; send the message again"

// ErrLeaseLost is the error of Check (and of a stopped turn) for a context
// this replica no longer holds.
var ErrLeaseLost = errors.New("this replica lost the context's lease: another replica may run it now")

// ErrStopped is returned by a Node that was stopped.
var ErrStopped = errors.New("cluster: the replica is stopping")

// Defaults of Config.
const (
	DefaultPingInterval = time.Second
	// DefaultHeartbeatEvery is how many pings go by between two
	// heartbeats of the replica's row.
	DefaultHeartbeatEvery = 5
)

// Tasks is what a Node needs of the task store to take contexts over
// (protocol/taskdb's Store implements it).
type Tasks interface {
	// UnfinishedContexts returns the contexts with tasks left
	// unfinished in the database.
	UnfinishedContexts(ctx context.Context) ([]string, error)
	// FailContext fails the context's unfinished tasks with why.
	FailContext(ctx context.Context, contextID, why string) (int, error)
	// ContextOf returns the context of a task (a2a.ErrTaskNotFound
	// when there is none).
	ContextOf(ctx context.Context, taskID string) (string, error)
}

// Config configures a Node.
type Config struct {
	// DSN is the PostgreSQL database the replicas share (agentry's
	// session.postgresDsn). Required.
	DSN string
	// AdvertiseURL is the base URL the other replicas forward requests
	// to (http://host:port). Required.
	AdvertiseURL string
	// ID names the replica; default a random one.
	ID string
	// Tasks fails the tasks of contexts taken over and resolves task ids
	// to contexts for forwarding. Required.
	Tasks Tasks
	// OnLost hears the contexts whose leases were lost with the lease
	// connection, once; the caller stops their runs.
	OnLost func(contextIDs []string)
	// PingInterval is how often the lease connection is checked; default
	// DefaultPingInterval.
	PingInterval time.Duration
	// HeartbeatEvery is how many pings go by between heartbeats; default
	// DefaultHeartbeatEvery.
	HeartbeatEvery int
	// After is the watcher's time.After (tests fire it); default
	// time.After.
	After func(time.Duration) <-chan time.Time
	// Now is the clock of the registry's times; default time.Now.
	Now func() time.Time
	// Transport carries forwarded requests; default a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// GRPCTransport carries forwarded gRPC calls; default a clone of
	// http.DefaultTransport speaking HTTP/2 only, in clear text to an
	// http:// replica (as serve's listener accepts it).
	GRPCTransport http.RoundTripper
	// MaxMessageBytes bounds the first message of a gRPC call, which the
	// router reads to find its context (a2a.maxBodyBytes); default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// SubscribeFromLog serves a subscribe to a task of a context another
	// replica holds (JSON-RPC SubscribeToTask and tasks/resubscribe, REST
	// :subscribe, gRPC SubscribeToTask) here instead of forwarding it:
	// the handler behind the router follows the task with Follow.
	SubscribeFromLog bool
	// HolderCheckInterval is how often a subscriber waiting on the event
	// log (Follow) checks that the task's replica is alive; default
	// PingInterval.
	HolderCheckInterval time.Duration
	// EventQueue bounds the events waiting for the event log's writer
	// (Append); default DefaultEventQueue.
	EventQueue int
	// EventBatch bounds the events the writer writes with one INSERT;
	// default DefaultEventBatch.
	EventBatch int
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Node is one replica's membership of the cluster. Create it with Start;
// Stop releases its leases and removes it from the registry.
type Node struct {
	cfg    Config
	log    *slog.Logger
	db     *sql.DB
	schema string
	// proxy forwards HTTP requests, grpcProxy gRPC calls.
	proxy, grpcProxy *proxy

	// connMu serialises the use of conn (a pgx.Conn is not safe for
	// concurrent use) and the acquisition of leases.
	connMu sync.Mutex
	conn   *pgx.Conn

	mu      sync.RWMutex
	held    map[string]bool
	stopped bool

	stop chan struct{}
	done chan struct{}

	// channel is the event log's NOTIFY channel; ew its writer, started
	// by the first Append; listener the LISTEN connection of Follow.
	channel    string
	writerOnce sync.Once
	ew         *eventWriter
	listener   eventListener
	// running holds the tasks this replica logs and has not ended.
	running sync.Map
}

// Start migrates the schema, registers the replica and opens its lease
// connection.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	switch {
	case cfg.DSN == "":
		return nil, errors.New("cluster: Config.DSN is required")
	case cfg.AdvertiseURL == "":
		return nil, errors.New("cluster: Config.AdvertiseURL is required")
	case cfg.Tasks == nil:
		return nil, errors.New("cluster: Config.Tasks is required")
	}
	cfg.AdvertiseURL = strings.TrimRight(cfg.AdvertiseURL, "/")
	if cfg.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.ID = hex.EncodeToString(b[:])
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.HeartbeatEvery <= 0 {
		cfg.HeartbeatEvery = DefaultHeartbeatEvery
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.HolderCheckInterval <= 0 {
		cfg.HolderCheckInterval = cfg.PingInterval
	}
	if cfg.EventQueue <= 0 {
		cfg.EventQueue = DefaultEventQueue
	}
	if cfg.EventBatch <= 0 {
		cfg.EventBatch = DefaultEventBatch
	}
	db, err := sql.Open("pgx", cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("cluster: open: %w", err)
	}
	n := &Node{cfg: cfg, log: cfg.Logger, db: db, held: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	if err := n.start(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	n.proxy = newProxy(n, cfg.Transport)
	n.grpcProxy = newGRPCProxy(n, cfg.GRPCTransport)
	go n.watch()
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	if err := migrate(ctx, n.db); err != nil {
		return fmt.Errorf("cluster: migrate: %w", err)
	}
	if err := n.db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&n.schema); err != nil {
		return fmt.Errorf("cluster: schema: %w", err)
	}
	n.channel = eventChannel(n.schema)
	conn, err := connect(ctx, n.cfg.DSN, n.cfg.ID)
	if err != nil {
		return fmt.Errorf("cluster: lease connection: %w", err)
	}
	n.conn = conn
	now := n.cfg.Now().UnixMicro()
	if _, err := n.db.ExecContext(ctx, `INSERT INTO agentry_replicas (replica_id, url, started, heartbeat) VALUES ($1, $2, $3, $3)
		ON CONFLICT (replica_id) DO UPDATE SET url = EXCLUDED.url, started = EXCLUDED.started, heartbeat = EXCLUDED.heartbeat`,
		n.cfg.ID, n.cfg.AdvertiseURL, now); err != nil {
		_ = conn.Close(ctx)
		return fmt.Errorf("cluster: register: %w", err)
	}
	return nil
}

// ID returns the replica's id.
func (n *Node) ID() string { return n.cfg.ID }

// URL returns the replica's advertised URL.
func (n *Node) URL() string { return n.cfg.AdvertiseURL }

// Replica is a registered replica.
type Replica struct {
	ID, URL            string
	Started, Heartbeat time.Time
}

// Replicas lists the registered replicas, oldest first.
func (n *Node) Replicas(ctx context.Context) ([]Replica, error) {
	rows, err := n.db.QueryContext(ctx, `SELECT replica_id, url, started, heartbeat FROM agentry_replicas ORDER BY started, replica_id`)
	if err != nil {
		return nil, fmt.Errorf("cluster: replicas: %w", err)
	}
	defer rows.Close()
	var out []Replica
	for rows.Next() {
		var r Replica
		var started, beat int64
		if err := rows.Scan(&r.ID, &r.URL, &started, &beat); err != nil {
			return nil, fmt.Errorf("cluster: replicas: %w", err)
		}
		r.Started, r.Heartbeat = time.UnixMicro(started), time.UnixMicro(beat)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Stop releases every lease, removes the replica from the registry and
// closes its connections. Runs still going on the replica's contexts are
// the caller's to end first.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	n.held = map[string]bool{}
	n.mu.Unlock()
	close(n.stop)
	<-n.done
	// The events of runs that ended go to the log before the replica
	// leaves.
	n.stopWriter(ctx)
	n.stopListener()
	var errs []error
	n.connMu.Lock()
	if n.conn != nil {
		// Closing the session releases its advisory locks.
		errs = append(errs, n.conn.Close(ctx))
		n.conn = nil
	}
	n.connMu.Unlock()
	_, err := n.db.ExecContext(ctx, `DELETE FROM agentry_context_owners WHERE replica_id = $1`, n.cfg.ID)
	errs = append(errs, err)
	_, err = n.db.ExecContext(ctx, `DELETE FROM agentry_replicas WHERE replica_id = $1`, n.cfg.ID)
	errs = append(errs, err, n.db.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: stop: %w", err)
	}
	return nil
}
