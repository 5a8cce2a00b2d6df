package sessions

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	// database/sql drivers: pgx for PostgreSQL, and modernc's SQLite,
	// which is pure Go so agentry stays one static binary without cgo.
	_ "github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"

	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"
)

// ErrNotFound is wrapped by the errors for a session or event that does
// not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is wrapped by Create's error for a session id already in use,
// and by AppendEvent's for an event id the session already has.
var ErrExists = errors.New("already exists")

// sqliteBusyTimeout is how long a statement waits for another process's
// write lock on the SQLite file before failing.
const sqliteBusyTimeout = 10 * time.Second

// postgresConns bounds the PostgreSQL connections of a Store.
const postgresConns = 8

// Store is a session.Service on SQLite or PostgreSQL that serves live
// session objects (see the package doc). It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// d is what differs between the databases.
	d     dialect
	clock func() time.Time
	log   *slog.Logger
	// stmts holds the prepared hot statements by query text; read-only
	// after open.
	stmts map[string]*sql.Stmt
	// encoders holds *eventEncoder, reused with their buffers.
	encoders sync.Pool

	mu sync.Mutex // guards the maps below
	// live holds an entry for every session that is loaded, and for the
	// time of an operation on one that is not, so that operations on one
	// session, loads included, are serialised by its entry's lock.
	live  map[key]*storedSession
	apps  map[string]*sharedState
	users map[userKey]*sharedState
}

var _ session.Service = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock for session creation and update times (an
// event's own Timestamp is kept as given). By default the time comes from
// the context (ADK's platform.Now).
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.clock = now }
}

// WithLogger sets the logger for loads and schema changes; by default
// slog.Default.
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) { s.log = l }
}

// OpenSQLite opens (creating it, its directory with mode 0700 and the file
// with mode 0600, if missing) the SQLite session database at path.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sessions: create directory: %w", err)
	}
	// Create the file ourselves: SQLite would create it with the umask's
	// mode, and it holds whole conversations. Its -wal and -shm files
	// take the database file's mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sessions: create database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("sessions: create database file: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL: in WAL mode a commit is in the log before it returns, so an
	// acknowledged append survives any crash of the process (the SIGKILL
	// test); the log is synced at checkpoints, so a power cut may drop the
	// last appends, whole — never tear one. FULL would sync every commit:
	// on a virtual disk that makes the median append four to five times
	// slower (about 135 µs against 30 µs, BenchmarkSQLiteAppend) and adds
	// tens of milliseconds to a short run. OFF would also survive the
	// process being killed and only spares the checkpoints' syncs, but a
	// power cut during a checkpoint could corrupt the file. gemini-cli's
	// transcript does not sync at all.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	// IMMEDIATE takes the write lock when a transaction begins, so the
	// busy timeout applies to it; a deferred transaction upgrading its
	// lock could fail with SQLITE_BUSY at once.
	q.Set("_txlock", "immediate")
	// A limit on the log makes SQLite empty it, rather than leave it as
	// it is, when the last connection closes in persistent WAL mode (see
	// persistWAL); 4 MiB is the size of the log at SQLite's automatic
	// checkpoint, which a larger transaction can exceed until the next
	// checkpoint.
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", 4<<20))
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String()
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sessions: open %s: %w", abs, err)
	}
	db := sql.OpenDB(persistWAL{c})
	// One connection: SQLite has one writer anyway, and in-process
	// writers queueing in database/sql wait in order and honour their
	// contexts, where competing connections would poll the file lock.
	db.SetMaxOpenConns(1)
	s, err := open(ctx, db, sqliteDialect(), abs, opts)
	if err != nil {
		return nil, err
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		_ = db.Close()
		return nil, fmt.Errorf("sessions: %s: journal mode is %q, want wal: %v", abs, mode, err)
	}
	return s, nil
}

// OpenPostgres opens the PostgreSQL session database at dsn (a URL or
// key=value connection string, as pgx accepts) and creates the schema in
// the connection's search_path if it is missing.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("sessions: open postgres: %w", err)
	}
	// database/sql keeps 2 idle connections by default, so concurrent
	// sessions would open a connection (a TLS and auth handshake) per
	// append; keep as many as may be open.
	db.SetMaxOpenConns(postgresConns)
	db.SetMaxIdleConns(postgresConns)
	return open(ctx, db, postgresDialect(), "postgres", opts)
}

// persistWAL opens SQLite connections in persistent WAL mode: the log and
// its shared-memory index stay beside the database, emptied, when the last
// connection closes, instead of being deleted and created again by the
// next process. Each run opens and closes the store, and creating and
// removing the two files was about half of what opening and closing an
// existing database cost.
type persistWAL struct{ driver.Connector }

// Connect opens a connection and sets its persistent WAL mode.
func (p persistWAL) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := p.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	fc, ok := conn.(sqlite.FileControl)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("sessions: SQLite connection %T has no file control", conn)
	}
	if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("sessions: persistent WAL mode: %w", err)
	}
	return conn, nil
}

func open(ctx context.Context, db *sql.DB, d dialect, where string, opts []Option) (*Store, error) {
	s := &Store{
		db:    db,
		d:     d,
		log:   slog.Default(),
		live:  map[key]*storedSession{},
		apps:  map[string]*sharedState{},
		users: map[userKey]*sharedState{},
	}
	for _, o := range opts {
		o(s)
	}
	from, err := migrate(ctx, db, d)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sessions: %s: schema: %w", where, err)
	}
	if from < schemaVersion {
		s.log.Debug("session schema created or upgraded", "db", where, "from", from, "to", schemaVersion)
	}
	if err := s.prepare(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sessions: %s: %w", where, err)
	}
	return s, nil
}

// Close closes the database. Live session objects stay readable; writes
// through the Store fail after Close.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sessions: close: %w", err)
	}
	return nil
}

// DB returns the Store's database handle, for packages that keep tables
// of their own beside the sessions (the A2A task store does). They must
// not touch the session tables, whose rows the Store caches in live
// objects. The handle is closed by Close.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect names the database behind DB: "sqlite" or "postgres". It tells
// packages using DB which SQL to write; both accept $n placeholders.
func (s *Store) Dialect() string { return s.d.name }

// now is the time for session bookkeeping.
func (s *Store) now(ctx context.Context) time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return platform.Now(ctx)
}

// key names a session.
type key struct{ app, user, id string }

// String names the session in errors: app/user/id.
func (k key) String() string { return k.app + "/" + k.user + "/" + k.id }

type userKey struct{ app, user string }

// lock returns the session's entry with its operation lock held, creating
// an unloaded entry if there is none. Every operation on a session goes
// through it, so loads, appends, replacements and deletes of one session
// never interleave. unlock undoes it.
func (s *Store) lock(ctx context.Context, k key) (*storedSession, error) {
	for {
		s.mu.Lock()
		e := s.live[k]
		if e == nil {
			e = newEntry(k)
			s.live[k] = e
		}
		e.refs++
		s.mu.Unlock()
		select {
		case e.op <- struct{}{}:
		case <-ctx.Done():
			s.release(e)
			return nil, fmt.Errorf("sessions: %s: %w", k, context.Cause(ctx))
		}
		if !e.gone {
			return e, nil
		}
		// Deleted while we waited: it has left the map; take the next one.
		<-e.op
		s.release(e)
	}
}

// unlock releases the operation lock taken by lock.
func (s *Store) unlock(e *storedSession) {
	<-e.op
	s.release(e)
}

// release drops a reference, forgetting an entry that holds no session.
func (s *Store) release(e *storedSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.refs--
	if e.refs == 0 && !e.loaded && s.live[e.key] == e {
		delete(s.live, e.key)
	}
}

// setLoaded marks an entry as holding its session; the caller holds its
// operation lock.
func (s *Store) setLoaded(e *storedSession) {
	s.mu.Lock()
	e.loaded = true
	s.mu.Unlock()
}

// Unload drops the live object of a session, if this Store has loaded
// it, so that the next Get reads the session from storage again: for a
// session another process may have written since (an agentry serve
// replica taking back a context another replica ran meanwhile). The
// caller must have stopped using the session; a reference to the old
// object sees none of the later appends.
func (s *Store) Unload(ctx context.Context, appName, userID, sessionID string) error {
	e, err := s.lock(ctx, key{appName, userID, sessionID})
	if err != nil {
		return err
	}
	s.mu.Lock()
	e.loaded = false
	s.mu.Unlock()
	// With no session loaded, the last reference's release forgets the
	// entry; the next operation makes a new one.
	s.unlock(e)
	return nil
}

// forget removes a deleted session's entry; the caller holds its
// operation lock.
func (s *Store) forget(e *storedSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.loaded = false
	e.gone = true
	if s.live[e.key] == e {
		delete(s.live, e.key)
	}
}

// appState and userState return the shared state objects, which live as
// long as the Store.
func (s *Store) appState(app string) *sharedState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.apps[app]
	if st == nil {
		st = newSharedState(`SELECT state_key, state_value FROM app_state WHERE app_name = $1`, app)
		s.apps[app] = st
	}
	return st
}

func (s *Store) userState(app, user string) *sharedState {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := userKey{app, user}
	st := s.users[k]
	if st == nil {
		st = newSharedState(`SELECT state_key, state_value FROM user_state WHERE app_name = $1 AND user_id = $2`, app, user)
		s.users[k] = st
	}
	return st
}
