// Package taskdb stores A2A tasks and push-notification configs in
// agentry's session database (SQLite or PostgreSQL, the database handle of
// a sessions.Store), in tables of its own: a2a_tasks, a2a_push_configs and
// a2a_schema_version. Store implements a2a-go's taskstore.Store and
// PushStore its push.ConfigStore.
//
// # Write-behind for running tasks
//
// a2a-go calls Update on every event of a running task, each time with the
// whole task. Writing each to the database would cap throughput far below
// what a server with hundreds of concurrent tasks needs, so a Store keeps
// running tasks (state submitted or working) in memory and writes a task
// to the database only when its progress matters after a crash:
//
//   - on Create;
//   - on every Update that changes the task's state;
//   - on every Update whose new state is terminal (completed, failed,
//     canceled, rejected) or interrupted (input-required, auth-required),
//     or has no state at all.
//
// An Update that keeps a task in the same running state changes only
// memory. A task leaves memory when an Update takes it out of the running
// states, after its row is written, so memory holds exactly the running
// tasks and the database holds the latest state of every other one. (An
// interrupted task is written whole on every update, so keeping it in
// memory would buy nothing and would keep abandoned ones forever.) The
// version check of Update is made against memory for a running task and
// against the row otherwise; Get and List answer from memory first, and
// List merges the two, a task in memory replacing its row.
//
// A crash therefore loses only intermediate progress of running tasks
// (the events since their last state change), never a finished one: a
// restarted process answers Get and List for every task that reached a
// terminal or input-required state, as last written. A task that was
// running when the process died would stay "working" forever, so Open
// marks every task left in submitted or working failed, with a status
// message saying the server restarted (see [RecoveryMessage]), and, with
// WithParkedRuns, every task left input-required, whose parked run died
// with the process ([ParkedRecoveryMessage]); that is
// wrong when several processes share the database and one of them opens
// it while another runs tasks, hence [WithoutRecovery].
//
// Two Stores on one database (WithoutRecovery) see each other's written
// rows but not each other's memory; a write is conditional on the version
// the Store last read or wrote, so a task changed by the other Store fails
// with taskstore.ErrConcurrentModification instead of being overwritten.
//
// # Copies
//
// A Store never shares mutable data with its callers except where a2a-go
// guarantees nobody writes it. Create, Get, List and most Updates copy the
// task deeply (a hand-written copy; gob, as a2a-go's utils.DeepCopy uses,
// costs tens of microseconds for a task with some history). The Updates
// a2a-go makes for task events (UpdateRequest.Event a TaskStatusUpdateEvent
// or TaskArtifactUpdateEvent) are the hot path, hundreds per task, and copy
// only the task struct, its History and Artifacts slices, its Metadata and
// its status message: a2a-go's internal/taskupdate.Manager builds every
// such task from a gob deep copy of the previous one (updateStatus,
// updateArtifact; the new artifact is itself a deep copy of the event's),
// never changes a task after passing it to Update, and copies again before
// applying the next event, so the messages and artifacts it references are
// a2a-go's own and never written again. What the task may share with
// others is its Metadata (the event's metadata values are copied in
// shallowly, and ADK's executor keeps nested maps) and the status message
// (the event's own), which are therefore copied. The Update that appends
// a user's message (a2asrv's loadExecutionContext, Event a Message) shares
// the task with the agent executor and so takes the deep copy.
//
// Tasks read back from the database went through encoding/json: metadata
// and data-part numbers come back as float64, like any JSON client sees them.
//
// A Store holds no resource but memory and needs no Close: the database
// handle belongs to its opener (sessions.Store closes it), and there is
// nothing buffered to flush beyond the policy above (flushing running
// tasks at shutdown would buy nothing: the next Open fails them anyway).
package taskdb

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// ErrSchemaTooNew is returned by Open when the database's task tables were
// written by a newer agentry whose schema this one does not know.
var ErrSchemaTooNew = errors.New("taskdb: database schema is newer than this version of agentry supports")

// RecoveryMessage is the text of the status message Open gives the tasks
// it fails because a previous process died while running them.
const RecoveryMessage = "agentry server restarted while the task was running"

// ParkedRecoveryMessage is the text of the status message Open gives the
// tasks it fails because a previous process died while they waited for
// input: in agentry a task waits for a tool call's confirmation with its
// run parked in memory, and the run died with the process.
const ParkedRecoveryMessage = "agentry server restarted while the task was waiting for a confirmation; its run is gone: send a new message in its context to go on"

// schemaVersion is the version migrations bring the task tables to.
const schemaVersion = 1

// List page sizes, as a2a-go's in-memory store has them.
const (
	defaultPageSize = 50
	maxPageSize     = 100
	// defaultMaxHistoryLength bounds the history of listed tasks when the
	// request does not say.
	defaultMaxHistoryLength = 100
)

// dialect holds what differs between SQLite and PostgreSQL; both accept
// $n placeholders and INSERT … ON CONFLICT.
type dialect struct {
	name string
	// lock serialises Open between processes; SQLite needs nothing, its
	// transactions begin IMMEDIATE and so take the write lock.
	lock string
	// idType is the type of text key columns. PostgreSQL's "C" collation
	// makes task ids sort bytewise, as Go's strings.Compare does, so List
	// pages are the same whichever of memory and database a task is in.
	idType string
	// notInJSON is a predicate excluding the task ids of a JSON array
	// passed as parameter $n: one parameter however many tasks are in
	// memory.
	notInJSON func(n int) string
}

func dialectNamed(name string) (dialect, error) {
	switch name {
	case "sqlite":
		return dialect{
			name:   name,
			idType: "TEXT",
			notInJSON: func(n int) string {
				return fmt.Sprintf("task_id NOT IN (SELECT value FROM json_each($%d))", n)
			},
		}, nil
	case "postgres":
		return dialect{
			name: name,
			// An arbitrary constant naming agentry's A2A task schema lock
			// (the session schema's is 7461726).
			lock:   "SELECT pg_advisory_xact_lock(7461727)",
			idType: `TEXT COLLATE "C"`,
			notInJSON: func(n int) string {
				return fmt.Sprintf("task_id NOT IN (SELECT jsonb_array_elements_text($%d::jsonb))", n)
			},
		}, nil
	}
	return dialect{}, fmt.Errorf("taskdb: unknown dialect %q (want sqlite or postgres)", name)
}

// migrations[i] brings the task tables from version i to version i+1.
// Times are Unix microseconds in BIGINT columns, as in the session tables;
// the task itself is the JSON in data, the other columns are for queries.
func migrations(d dialect) [][]string {
	return [][]string{{
		`CREATE TABLE IF NOT EXISTS a2a_tasks (
			task_id ` + d.idType + ` PRIMARY KEY,
			context_id TEXT NOT NULL,
			state TEXT NOT NULL,
			user_name TEXT NOT NULL,
			version BIGINT NOT NULL,
			status_time BIGINT,
			update_time BIGINT NOT NULL,
			data TEXT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS a2a_tasks_context_id ON a2a_tasks (context_id)`,
		`CREATE INDEX IF NOT EXISTS a2a_tasks_update_time ON a2a_tasks (update_time)`,
		`CREATE TABLE IF NOT EXISTS a2a_push_configs (
			task_id TEXT NOT NULL,
			config_id TEXT NOT NULL,
			data TEXT NOT NULL,
			PRIMARY KEY (task_id, config_id))`,
	}}
}

// Store is a taskstore.Store on agentry's session database that keeps
// running tasks in memory (see the package doc). It is safe for concurrent
// use.
type Store struct {
	db      *sql.DB
	d       dialect
	clock   func() time.Time
	log     *slog.Logger
	auth    taskstore.Authenticator
	recover bool
	// parked: input-required tasks wait on runs held in memory, which a
	// restart loses (WithParkedRuns).
	parked bool

	mu sync.RWMutex // guards tasks (the map, not the entries)
	// tasks holds an entry for every running task, and for the time of
	// an operation on another, so that writers of one task are
	// serialised by its entry's lock.
	tasks map[a2a.TaskID]*entry
}

var _ taskstore.Store = (*Store)(nil)

// entry is a task's place in memory.
type entry struct {
	// mu serialises the writers of the task (Create, Update), and is
	// held across their database write, so updates of one task apply
	// in version order while other tasks go on. Readers never take it.
	mu sync.Mutex
	// snap is the task as last updated while it is running, nil when
	// the database holds its latest state. Set only under mu; readers
	// load it without a lock.
	snap atomic.Pointer[snapshot]
	// dbVersion is the version of the task's row, which a write requires
	// to be unchanged. Guarded by mu.
	dbVersion taskstore.TaskVersion
	// gone marks an entry removed from the map: a writer that waited
	// for it takes the next one. Guarded by mu.
	gone bool
}

// snapshot is an immutable state of a task in memory.
type snapshot struct {
	task    *a2a.Task // never changed after the snapshot is published
	version taskstore.TaskVersion
	user    string
	updated int64 // Unix microseconds of the update, List's order
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock for update times (List's order) and for the
// status of tasks failed on Open; by default time.Now.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.clock = now } }

// WithLogger sets the logger for schema creation and restart recovery; by
// default slog.Default. Push configs are never logged: they hold tokens.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithAuthenticator sets the function naming the user of a call, as
// a2a-go's in-memory store takes it (a2asrv.NewTaskStoreAuthenticator
// names the authenticated caller). Create records the user as the task's
// owner; Get and Update of another user's task fail with
// a2a.ErrTaskNotFound, and List shows a user their tasks only and refuses
// an anonymous caller (a2a.ErrUnauthenticated). By default every call is
// the anonymous user "", so List always fails, as in a2a-go.
func WithAuthenticator(auth taskstore.Authenticator) Option {
	return func(s *Store) { s.auth = auth }
}

// WithoutRecovery keeps Open from failing the tasks left running, for
// databases that several live Stores share (a cluster, or tests opening a
// second Store to see what the first one wrote).
func WithoutRecovery() Option { return func(s *Store) { s.recover = false } }

// WithParkedRuns says that the serving process keeps an input-required
// task's run parked in memory until the input comes, as agentry's A2A
// server does with a tool call awaiting confirmation: such a task cannot
// go on after a restart, so Open's recovery fails it too (with
// ParkedRecoveryMessage). Without it an input-required task is left as
// it is, for a2a-go's executors, which resume from the stored task.
func WithParkedRuns() Option { return func(s *Store) { s.parked = true } }

// Open creates the task tables in db if they are missing and returns a
// Store on them. dialect is "sqlite" or "postgres", as sessions.Store's
// Dialect names it. Unless WithoutRecovery is given, every task left in
// submitted or working state is marked failed (see the package doc).
// Schema creation and recovery are one transaction.
func Open(ctx context.Context, db *sql.DB, dialect string, opts ...Option) (*Store, error) {
	d, err := dialectNamed(dialect)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:      db,
		d:       d,
		clock:   time.Now,
		log:     slog.Default(),
		auth:    func(context.Context) (string, error) { return "", nil },
		recover: true,
		tasks:   map[a2a.TaskID]*entry{},
	}
	for _, o := range opts {
		o(s)
	}
	if err := s.open(ctx); err != nil {
		return nil, fmt.Errorf("taskdb: open %s: %w", d.name, err)
	}
	return s, nil
}

// open migrates the schema and recovers tasks, in one transaction.
func (s *Store) open(ctx context.Context) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS a2a_schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create a2a_schema_version: %w", err)
	}
	var from int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM a2a_schema_version`).Scan(&from); err != nil {
		return fmt.Errorf("read a2a_schema_version: %w", err)
	}
	if from > schemaVersion {
		return fmt.Errorf("%w (database %d, supported %d)", ErrSchemaTooNew, from, schemaVersion)
	}
	steps := migrations(s.d)
	for v := from; v < schemaVersion; v++ {
		for _, stmt := range steps[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO a2a_schema_version (version) VALUES ($1)`, v+1); err != nil {
			return fmt.Errorf("record version %d: %w", v+1, err)
		}
	}
	if from < schemaVersion {
		s.log.Debug("taskdb: schema created or upgraded", "db", s.d.name, "from", from, "to", schemaVersion)
	}
	if s.recover {
		if err := s.failRunning(ctx, tx); err != nil {
			return fmt.Errorf("recover running tasks: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// failRunning marks failed the tasks a previous process left running: their
// progress since the last state change is lost and nothing will finish
// them. The previous status message joins the history, as a2a-go's task
// manager does on a status change.
func (s *Store) failRunning(ctx context.Context, tx *sql.Tx) error {
	type stuck struct {
		id      string
		version int64
		data    string
	}
	var tasks []stuck
	// Read every row before writing: on SQLite the transaction is the
	// one connection, which cannot interleave a write with open rows.
	rows, err := tx.QueryContext(ctx, `SELECT task_id, version, data FROM a2a_tasks WHERE state IN ($1, $2, $3)`, s.unfinishedStates()...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var t stuck
		if err := rows.Scan(&t.id, &t.version, &t.data); err != nil {
			_ = rows.Close()
			return err
		}
		tasks = append(tasks, t)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	now := s.clock()
	for _, t := range tasks {
		var task a2a.Task
		if err := json.Unmarshal([]byte(t.data), &task); err != nil {
			return fmt.Errorf("task %s: decode: %w", t.id, err)
		}
		why := RecoveryMessage
		if task.Status.State == a2a.TaskStateInputRequired {
			why = ParkedRecoveryMessage
		}
		failTask(&task, why, now)
		data, err := json.Marshal(&task)
		if err != nil {
			return fmt.Errorf("task %s: encode: %w", t.id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE a2a_tasks SET state = $2, version = $3, status_time = $4, update_time = $4, data = $5 WHERE task_id = $1`,
			t.id, string(a2a.TaskStateFailed), t.version+1, now.UnixMicro(), string(data)); err != nil {
			return fmt.Errorf("task %s: %w", t.id, err)
		}
		s.log.Debug("taskdb: failed a task left running by a previous process", "task", t.id)
	}
	if len(tasks) > 0 {
		s.log.Warn("taskdb: failed the tasks a previous process left running", "count", len(tasks))
	}
	return nil
}

// running reports whether a task in state st is kept in memory: its
// updates that keep the state are not written.
func running(st a2a.TaskState) bool {
	return st == a2a.TaskStateSubmitted || st == a2a.TaskStateWorking
}

// user names the caller; a failure reads as a2a-go's in-memory store
// reports it.
func (s *Store) user(ctx context.Context) (string, error) {
	u, err := s.auth(ctx)
	if err != nil {
		return "", fmt.Errorf("taskstore auth failed: %w", err)
	}
	return u, nil
}

// now is the update time in Unix microseconds, the precision of the
// database's update_time, so memory and rows order tasks alike.
func (s *Store) now() int64 { return s.clock().UnixMicro() }

// acquire returns the task's entry with its lock held, creating one
// without a snapshot if the task is not in memory. release undoes it.
func (s *Store) acquire(id a2a.TaskID) *entry {
	for {
		s.mu.RLock()
		e := s.tasks[id]
		s.mu.RUnlock()
		if e == nil {
			s.mu.Lock()
			if e = s.tasks[id]; e == nil {
				e = &entry{}
				e.mu.Lock()
				s.tasks[id] = e
				s.mu.Unlock()
				return e
			}
			s.mu.Unlock()
		}
		e.mu.Lock()
		if !e.gone {
			return e
		}
		// Removed while we waited: take the next one.
		e.mu.Unlock()
	}
}

// release unlocks an entry taken by acquire, removing it from the map if
// the task is not (or no longer) in memory. So an unlocked entry in the
// map always has a snapshot.
func (s *Store) release(id a2a.TaskID, e *entry) {
	if e.snap.Load() == nil {
		s.mu.Lock()
		if s.tasks[id] == e {
			delete(s.tasks, id)
		}
		s.mu.Unlock()
		e.gone = true
	}
	e.mu.Unlock()
}

// hot returns the snapshot of a task in memory, or nil.
func (s *Store) hot(id a2a.TaskID) *snapshot {
	s.mu.RLock()
	e := s.tasks[id]
	s.mu.RUnlock()
	if e == nil {
		return nil
	}
	return e.snap.Load()
}

// Create implements taskstore.Store: it writes the task, version 1, owned
// by the caller, and keeps it in memory if it is running. A task id in use
// fails with taskstore.ErrTaskAlreadyExists.
func (s *Store) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	if task == nil {
		return taskstore.TaskVersionMissing, errors.New("taskdb: create: nil task")
	}
	if err := validateTask(task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	user, err := s.user(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	next := &snapshot{task: cloneTask(task), version: 1, user: user, updated: s.now()}
	data, err := json.Marshal(next.task)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("taskdb: task %s: encode: %w", task.ID, err)
	}

	e := s.acquire(task.ID)
	defer s.release(task.ID, e)
	if e.snap.Load() != nil {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	t := next.task
	res, err := s.db.ExecContext(ctx, `INSERT INTO a2a_tasks (task_id, context_id, state, user_name, version, status_time, update_time, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (task_id) DO NOTHING`,
		string(t.ID), t.ContextID, string(t.Status.State), user, int64(next.version), statusTime(t), next.updated, string(data))
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("taskdb: create task %s: %w", t.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("taskdb: create task %s: %w", t.ID, err)
	} else if n == 0 {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	e.dbVersion = next.version
	if running(t.Status.State) {
		e.snap.Store(next)
	}
	return next.version, nil
}

// Update implements taskstore.Store: it replaces the task if
// req.PrevVersion is its current version (or TaskVersionMissing) and
// returns the next version. Whether the database is written depends on
// the states (see the package doc). An unknown task, or another user's,
// fails with a2a.ErrTaskNotFound; a stale PrevVersion with
// taskstore.ErrConcurrentModification.
func (s *Store) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil || req.Task == nil {
		return taskstore.TaskVersionMissing, errors.New("taskdb: update: nil task")
	}
	if err := validateTask(req.Task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	user, err := s.user(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	var task *a2a.Task
	switch req.Event.(type) {
	case *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
		task = copyEventTask(req.Task) // the hot path: see "Copies" in the package doc
	default:
		task = cloneTask(req.Task)
	}
	id := task.ID

	e := s.acquire(id)
	defer s.release(id, e)
	// Read under the task's lock, so a task's update times grow with its
	// versions.
	updated := s.now()
	cur := e.snap.Load()
	var curState a2a.TaskState
	if cur != nil {
		curState = cur.task.Status.State
	} else {
		// Not in memory: the row is the latest state.
		var version int64
		var owner, state string
		err := s.db.QueryRowContext(ctx, `SELECT version, user_name, state FROM a2a_tasks WHERE task_id = $1`, string(id)).
			Scan(&version, &owner, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
		}
		if err != nil {
			return taskstore.TaskVersionMissing, fmt.Errorf("taskdb: update task %s: %w", id, err)
		}
		cur = &snapshot{version: taskstore.TaskVersion(version), user: owner}
		curState = a2a.TaskState(state)
		e.dbVersion = cur.version
	}
	if cur.user != user {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != cur.version {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	next := &snapshot{task: task, version: cur.version + 1, user: cur.user, updated: updated}
	newState := task.Status.State
	if newState != curState || !running(newState) {
		if err := s.write(ctx, e, next); err != nil {
			return taskstore.TaskVersionMissing, err
		}
	}
	if running(newState) {
		e.snap.Store(next)
	} else {
		// Written above; the row is now the latest state.
		e.snap.Store(nil)
	}
	return next.version, nil
}

// write stores a task's new state in its row, provided the row is still
// at the version this Store last read or wrote; the caller holds e.mu.
func (s *Store) write(ctx context.Context, e *entry, next *snapshot) error {
	t := next.task
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("taskdb: task %s: encode: %w", t.ID, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE a2a_tasks SET context_id = $2, state = $3, version = $4, status_time = $5, update_time = $6, data = $7
		WHERE task_id = $1 AND version = $8`,
		string(t.ID), t.ContextID, string(t.Status.State), int64(next.version), statusTime(t), next.updated, string(data), int64(e.dbVersion))
	if err != nil {
		return fmt.Errorf("taskdb: update task %s: %w", t.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("taskdb: update task %s: %w", t.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("taskdb: task %s was changed by another store on the database: %w", t.ID, taskstore.ErrConcurrentModification)
	}
	e.dbVersion = next.version
	return nil
}

// statusTime is the status_time column: the status timestamp in Unix
// microseconds, NULL without one.
func statusTime(t *a2a.Task) any {
	if t.Status.Timestamp == nil {
		return nil
	}
	return t.Status.Timestamp.UnixMicro()
}

// Get implements taskstore.Store: a copy of the task, from memory if it is
// running, else from the database. An unknown task, or another user's,
// fails with a2a.ErrTaskNotFound.
func (s *Store) Get(ctx context.Context, taskID a2a.TaskID) (*taskstore.StoredTask, error) {
	snap := s.hot(taskID)
	var data string
	if snap == nil {
		var version int64
		var owner string
		err := s.db.QueryRowContext(ctx, `SELECT version, user_name, data FROM a2a_tasks WHERE task_id = $1`, string(taskID)).
			Scan(&version, &owner, &data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, a2a.ErrTaskNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("taskdb: get task %s: %w", taskID, err)
		}
		snap = &snapshot{version: taskstore.TaskVersion(version), user: owner}
	}
	// Another user's task is reported missing, as A2A requires (§3.3.2).
	user, err := s.user(ctx)
	if err != nil {
		return nil, err
	}
	if snap.user != user {
		return nil, a2a.ErrTaskNotFound
	}
	var task *a2a.Task
	if snap.task != nil {
		// A snapshot is never changed, so it is copied without a lock.
		task = cloneTask(snap.task)
	} else if task, err = decodeTask(taskID, data); err != nil {
		return nil, err
	}
	return &taskstore.StoredTask{Task: task, Version: snap.version, User: snap.user}, nil
}

func decodeTask(id a2a.TaskID, data string) (*a2a.Task, error) {
	var t a2a.Task
	if err := json.Unmarshal([]byte(data), &t); err != nil {
		return nil, fmt.Errorf("taskdb: task %s: decode: %w", id, err)
	}
	return &t, nil
}

// listed is a task on its way into a List page: from memory (snap) or a
// row (data).
type listed struct {
	id      a2a.TaskID
	updated int64
	snap    *snapshot
	data    string
}

// before reports whether a comes before b in List's order: the most
// recently updated first, ties broken by descending task id.
func (a *listed) before(b *listed) bool {
	if a.updated != b.updated {
		return a.updated > b.updated
	}
	return a.id > b.id
}

// List implements taskstore.Store with the semantics of a2a-go's in-memory
// store: the caller's tasks (an anonymous caller fails with
// a2a.ErrUnauthenticated) matching ContextID, Status and
// StatusTimestampAfter (a task without a status timestamp matches; the
// database compares microseconds), most recently updated first; PageSize
// 1 to 100, 50 if zero (else a2a.ErrInvalidRequest); an opaque page token
// (a2a.ErrParseError if malformed); HistoryLength (100 if unset, negative
// for all) and IncludeArtifacts trim the copies. TotalSize counts every
// matching task, ignoring the page token. Running tasks come from memory
// and replace their rows.
func (s *Store) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if req == nil {
		req = &a2a.ListTasksRequest{}
	}
	user, err := s.auth(ctx)
	if user == "" || err != nil {
		return nil, a2a.ErrUnauthenticated
	}
	pageSize := req.PageSize
	if pageSize == 0 {
		pageSize = defaultPageSize
	} else if pageSize < 1 || pageSize > maxPageSize {
		return nil, fmt.Errorf("page size must be between 1 and %d inclusive, got %d: %w", maxPageSize, pageSize, a2a.ErrInvalidRequest)
	}
	var cursor *listed
	if req.PageToken != "" {
		if cursor, err = decodePageToken(req.PageToken); err != nil {
			return nil, err
		}
	}

	// Memory first: the ids of the caller's running tasks keep their
	// (stale) rows out of the queries below. A task that leaves memory
	// meanwhile is listed as it was when we looked.
	var hotIDs []string
	var mem []*listed
	s.mu.RLock()
	for id, e := range s.tasks {
		snap := e.snap.Load()
		if snap == nil || snap.user != user {
			continue
		}
		hotIDs = append(hotIDs, string(id))
		if matches(snap.task, req) {
			mem = append(mem, &listed{id: id, updated: snap.updated, snap: snap})
		}
	}
	s.mu.RUnlock()
	total := len(mem)
	slices.SortFunc(mem, func(a, b *listed) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	if cursor != nil {
		// Skip to the first task after the cursor.
		i, _ := slices.BinarySearchFunc(mem, cursor, func(l, c *listed) int {
			if c.before(l) {
				return 1
			}
			return -1
		})
		mem = mem[i:]
	}

	where := []string{"user_name = $1"}
	args := []any{user}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if req.ContextID != "" {
		where = append(where, "context_id = "+arg(req.ContextID))
	}
	if req.Status != a2a.TaskStateUnspecified {
		where = append(where, "state = "+arg(string(req.Status)))
	}
	if req.StatusTimestampAfter != nil {
		where = append(where, "(status_time IS NULL OR status_time >= "+arg(req.StatusTimestampAfter.UnixMicro())+")")
	}
	if len(hotIDs) > 0 {
		ids, err := json.Marshal(hotIDs)
		if err != nil {
			return nil, fmt.Errorf("taskdb: list: %w", err)
		}
		args = append(args, string(ids))
		where = append(where, s.d.notInJSON(len(args)))
	}
	var dbTotal int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM a2a_tasks WHERE `+strings.Join(where, " AND "), args...).Scan(&dbTotal); err != nil {
		return nil, fmt.Errorf("taskdb: list: %w", err)
	}
	total += dbTotal
	if cursor != nil {
		t, id := arg(cursor.updated), arg(string(cursor.id))
		where = append(where, "(update_time < "+t+" OR (update_time = "+t+" AND task_id < "+id+"))")
	}
	// One row more than a page tells whether there is a next page.
	limit := arg(pageSize + 1)
	rows, err := s.db.QueryContext(ctx, `SELECT task_id, update_time, data FROM a2a_tasks WHERE `+strings.Join(where, " AND ")+
		` ORDER BY update_time DESC, task_id DESC LIMIT `+limit, args...)
	if err != nil {
		return nil, fmt.Errorf("taskdb: list: %w", err)
	}
	var stored []*listed
	for rows.Next() {
		l := &listed{}
		if err := rows.Scan(&l.id, &l.updated, &l.data); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("taskdb: list: %w", err)
		}
		stored = append(stored, l)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("taskdb: list: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("taskdb: list: %w", err)
	}

	// Merge the two ordered lists into the page.
	page := make([]*listed, 0, pageSize)
	more := false
	for len(mem) > 0 || len(stored) > 0 {
		var next *listed
		if len(stored) == 0 || (len(mem) > 0 && mem[0].before(stored[0])) {
			next, mem = mem[0], mem[1:]
		} else {
			next, stored = stored[0], stored[1:]
		}
		if len(page) == pageSize {
			more = true
			break
		}
		page = append(page, next)
	}
	tasks := make([]*a2a.Task, 0, len(page))
	for _, l := range page {
		var t *a2a.Task
		if l.snap != nil {
			t = cloneTask(l.snap.task)
		} else if t, err = decodeTask(l.id, l.data); err != nil {
			return nil, err
		}
		historyLength := defaultMaxHistoryLength
		if req.HistoryLength != nil {
			historyLength = *req.HistoryLength
		}
		if historyLength == 0 {
			t.History = []*a2a.Message{}
		} else if historyLength > 0 && len(t.History) > historyLength {
			t.History = t.History[len(t.History)-historyLength:]
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		tasks = append(tasks, t)
	}
	var nextToken string
	if more {
		last := page[len(page)-1]
		nextToken = encodePageToken(last.updated, last.id)
	}
	return &a2a.ListTasksResponse{Tasks: tasks, TotalSize: total, PageSize: pageSize, NextPageToken: nextToken}, nil
}

// matches applies List's filters to a task in memory, as a2a-go's
// in-memory store does.
func matches(t *a2a.Task, req *a2a.ListTasksRequest) bool {
	if req.ContextID != "" && t.ContextID != req.ContextID {
		return false
	}
	if req.Status != a2a.TaskStateUnspecified && t.Status.State != req.Status {
		return false
	}
	if req.StatusTimestampAfter != nil && t.Status.Timestamp != nil && t.Status.Timestamp.Before(*req.StatusTimestampAfter) {
		return false
	}
	return true
}

// encodePageToken names the last task of a page by its place in List's
// order: update time (Unix microseconds) and id.
func encodePageToken(updated int64, id a2a.TaskID) string {
	return base64.URLEncoding.EncodeToString([]byte(strconv.FormatInt(updated, 10) + "_" + string(id)))
}

func decodePageToken(token string) (*listed, error) {
	raw, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		return nil, fmt.Errorf("taskdb: malformed page token: %w", a2a.ErrParseError)
	}
	// The time has no "_"; the id may.
	t, id, ok := strings.Cut(string(raw), "_")
	if !ok {
		return nil, fmt.Errorf("taskdb: malformed page token: %w", a2a.ErrParseError)
	}
	updated, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("taskdb: malformed page token: %w", a2a.ErrParseError)
	}
	return &listed{id: a2a.TaskID(id), updated: updated}, nil
}

// validateTask refuses metadata a2a-go's in-memory store refuses, with its
// messages: values other than nil, bool, signed integers, floats,
// strings, []any and map[string]any, and cycles.
func validateTask(t *a2a.Task) error {
	if err := validateMessage(t.Status.Message); err != nil {
		return err
	}
	for _, m := range t.History {
		if err := validateMessage(m); err != nil {
			return err
		}
	}
	for _, a := range t.Artifacts {
		if a == nil {
			continue
		}
		if err := validateParts(a.Parts); err != nil {
			return err
		}
		if err := validateMeta(a.Metadata); err != nil {
			return err
		}
	}
	return validateMeta(t.Metadata)
}

func validateMessage(m *a2a.Message) error {
	if m == nil {
		return nil
	}
	if err := validateParts(m.Parts); err != nil {
		return err
	}
	return validateMeta(m.Metadata)
}

func validateParts(parts a2a.ContentParts) error {
	for _, p := range parts {
		if p == nil {
			continue
		}
		if err := validateMeta(p.Metadata); err != nil {
			return err
		}
	}
	return nil
}

// validateMeta checks a metadata map; a nil one costs nothing, which is
// most of them on the hot path.
func validateMeta(m map[string]any) error {
	if m == nil {
		return nil
	}
	return validateValue(m, nil)
}

// validateValue walks a metadata value; path holds the maps and slices
// being walked, to find cycles.
func validateValue(v any, path []uintptr) error {
	switch v.(type) {
	case nil, bool, int, int8, int16, int32, int64, float32, float64, string:
		return nil
	}
	switch c := v.(type) {
	case map[string]any:
		if c == nil {
			return nil
		}
		return validateElems(reflect.ValueOf(c).Pointer(), maps.Values(c), path)
	case []any:
		if len(c) == 0 {
			return nil
		}
		return validateElems(reflect.ValueOf(c).Pointer(), slices.Values(c), path)
	}
	return fmt.Errorf("%T is not permitted in Metadata, must be one of nil, bool, int, float, string, []any, map[string]any", v)
}

// validateElems validates the elements of the map or slice at p, unless
// p is already being walked (a cycle).
func validateElems(p uintptr, elems iter.Seq[any], path []uintptr) error {
	if slices.Contains(path, p) {
		return errors.New("circular reference in Metadata")
	}
	path = append(path, p)
	for e := range elems {
		if err := validateValue(e, path); err != nil {
			return err
		}
	}
	return nil
}

// copyEventTask is the hot path's copy of a task a2a-go built for an event:
// what a2a-go may share with others is copied, the history's messages and
// the artifacts are shared (see "Copies" in the package doc).
func copyEventTask(t *a2a.Task) *a2a.Task {
	c := *t
	c.History = slices.Clone(t.History)
	c.Artifacts = slices.Clone(t.Artifacts)
	c.Metadata = cloneMeta(t.Metadata)
	c.Status.Message = cloneMessage(t.Status.Message)
	c.Status.Timestamp = cloneTime(t.Status.Timestamp)
	return &c
}

// cloneTask copies a task deeply. Nil and empty slices and maps stay as
// they are. Data values other than JSON's (maps, slices, scalars) are
// shared: the copy cannot know their types.
func cloneTask(t *a2a.Task) *a2a.Task {
	c := *t
	if t.History != nil {
		c.History = make([]*a2a.Message, len(t.History))
		for i, m := range t.History {
			c.History[i] = cloneMessage(m)
		}
	}
	if t.Artifacts != nil {
		c.Artifacts = make([]*a2a.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			c.Artifacts[i] = cloneArtifact(a)
		}
	}
	c.Metadata = cloneMeta(t.Metadata)
	c.Status.Message = cloneMessage(t.Status.Message)
	c.Status.Timestamp = cloneTime(t.Status.Timestamp)
	return &c
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func cloneMessage(m *a2a.Message) *a2a.Message {
	if m == nil {
		return nil
	}
	c := *m
	c.Extensions = slices.Clone(m.Extensions)
	c.ReferenceTasks = slices.Clone(m.ReferenceTasks)
	c.Metadata = cloneMeta(m.Metadata)
	c.Parts = cloneParts(m.Parts)
	return &c
}

func cloneArtifact(a *a2a.Artifact) *a2a.Artifact {
	if a == nil {
		return nil
	}
	c := *a
	c.Extensions = slices.Clone(a.Extensions)
	c.Metadata = cloneMeta(a.Metadata)
	c.Parts = cloneParts(a.Parts)
	return &c
}

func cloneParts(parts a2a.ContentParts) a2a.ContentParts {
	if parts == nil {
		return nil
	}
	c := make(a2a.ContentParts, len(parts))
	for i, p := range parts {
		if p == nil {
			continue
		}
		cp := *p
		cp.Metadata = cloneMeta(p.Metadata)
		switch v := p.Content.(type) {
		case a2a.Raw:
			cp.Content = a2a.Raw(slices.Clone([]byte(v)))
		case a2a.Data:
			cp.Content = a2a.Data{Value: cloneValue(v.Value)}
		}
		c[i] = &cp
	}
	return c
}

func cloneMeta(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = cloneValue(v)
	}
	return c
}

// cloneValue copies JSON-like values deeply; validation keeps metadata
// cycle-free and data parts come from JSON or agents, which do not build
// cycles.
func cloneValue(v any) any {
	switch c := v.(type) {
	case map[string]any:
		return cloneMeta(c)
	case []any:
		if c == nil {
			return c
		}
		s := make([]any, len(c))
		for i, e := range c {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}

// ContextOf returns the context of a task, from memory or its row, for
// any user; a2a.ErrTaskNotFound when there is none. A cluster's router
// uses it to find the replica a request about a task belongs to.
func (s *Store) ContextOf(ctx context.Context, taskID string) (string, error) {
	if snap := s.hot(a2a.TaskID(taskID)); snap != nil && snap.task != nil {
		return snap.task.ContextID, nil
	}
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT context_id FROM a2a_tasks WHERE task_id = $1`, taskID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", a2a.ErrTaskNotFound
	}
	if err != nil {
		return "", fmt.Errorf("taskdb: context of task %s: %w", taskID, err)
	}
	return id, nil
}

// unfinishedStates are the states of a task whose run a dead process
// leaves behind: running, and (with WithParkedRuns) parked on input.
func (s *Store) unfinishedStates() []any {
	parked := a2a.TaskStateWorking // a state already asked for: none more
	if s.parked {
		parked = a2a.TaskStateInputRequired
	}
	return []any{string(a2a.TaskStateSubmitted), string(a2a.TaskStateWorking), string(parked)}
}

// UnfinishedContexts returns the contexts that have tasks left
// unfinished in the database (submitted, working and, with
// WithParkedRuns, input-required) and not running in this Store's
// memory. A replica opened WithoutRecovery asks which of them have no
// live owner and fails their tasks with FailContext.
func (s *Store) UnfinishedContexts(ctx context.Context) ([]string, error) {
	st := s.unfinishedStates()
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT context_id FROM a2a_tasks WHERE state IN ($1, $2, $3) ORDER BY context_id`, st...)
	if err != nil {
		return nil, fmt.Errorf("taskdb: unfinished contexts: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("taskdb: unfinished contexts: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// FailContext marks failed, with why as the status message, every task
// of the context left unfinished in the database (see
// UnfinishedContexts) by a process that no longer runs it, and returns
// how many it failed. Tasks running in this Store's memory are this
// process's own and are left alone. The caller must be the context's
// only runner (a cluster replica holding its lease): a task another
// process changed meanwhile is skipped, not overwritten.
func (s *Store) FailContext(ctx context.Context, contextID, why string) (int, error) {
	st := s.unfinishedStates()
	rows, err := s.db.QueryContext(ctx, `SELECT task_id, version, data FROM a2a_tasks WHERE context_id = $1 AND state IN ($2, $3, $4)`,
		append([]any{contextID}, st...)...)
	if err != nil {
		return 0, fmt.Errorf("taskdb: fail context %s: %w", contextID, err)
	}
	type stuck struct {
		id      string
		version int64
		data    string
	}
	var tasks []stuck
	for rows.Next() {
		var t stuck
		if err := rows.Scan(&t.id, &t.version, &t.data); err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("taskdb: fail context %s: %w", contextID, err)
		}
		tasks = append(tasks, t)
	}
	if err := errors.Join(rows.Close(), rows.Err()); err != nil {
		return 0, fmt.Errorf("taskdb: fail context %s: %w", contextID, err)
	}
	n := 0
	for _, t := range tasks {
		if s.hot(a2a.TaskID(t.id)) != nil {
			continue // running here
		}
		var task a2a.Task
		if err := json.Unmarshal([]byte(t.data), &task); err != nil {
			return n, fmt.Errorf("taskdb: task %s: decode: %w", t.id, err)
		}
		now := s.clock()
		failTask(&task, why, now)
		data, err := json.Marshal(&task)
		if err != nil {
			return n, fmt.Errorf("taskdb: task %s: encode: %w", t.id, err)
		}
		res, err := s.db.ExecContext(ctx, `UPDATE a2a_tasks SET state = $2, version = $3, status_time = $4, update_time = $4, data = $5 WHERE task_id = $1 AND version = $6`,
			t.id, string(a2a.TaskStateFailed), t.version+1, now.UnixMicro(), string(data), t.version)
		if err != nil {
			return n, fmt.Errorf("taskdb: task %s: %w", t.id, err)
		}
		if k, _ := res.RowsAffected(); k == 1 {
			n++
		}
	}
	return n, nil
}

// failTask ends task failed with why as its status message; the previous
// status message joins the history, as a2a-go's task manager does on a
// status change.
func failTask(task *a2a.Task, why string, now time.Time) {
	if task.Status.Message != nil {
		task.History = append(task.History, task.Status.Message)
	}
	task.Status = a2a.TaskStatus{
		State:     a2a.TaskStateFailed,
		Message:   a2a.NewMessageForTask(a2a.MessageRoleAgent, task, a2a.NewTextPart(why)),
		Timestamp: &now,
	}
}
