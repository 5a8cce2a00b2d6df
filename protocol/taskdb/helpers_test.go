package taskdb_test

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/agentry-dev/agentry/protocol/taskdb"
	"github.com/agentry-dev/agentry/sessions"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// backend is one fresh database. connect opens a new connection pool to
// it (a sessions.Store, as agentry opens it), so a second connect is what
// a restarted process sees.
type backend struct {
	name    string
	connect func(t testing.TB) (*sql.DB, string)
}

// open connects and opens a task Store with a discarded log.
func (b backend) open(t testing.TB, opts ...taskdb.Option) *taskdb.Store {
	t.Helper()
	db, dialect := b.connect(t)
	return openOn(t, db, dialect, opts...)
}

// openOn opens a task Store on an existing connection pool: a second Store
// on the same database, as a cluster's other process would have.
func openOn(t testing.TB, db *sql.DB, dialect string, opts ...taskdb.Option) *taskdb.Store {
	t.Helper()
	s, err := taskdb.Open(context.Background(), db, dialect, append([]taskdb.Option{quiet()}, opts...)...)
	if err != nil {
		t.Fatalf("taskdb.Open: %v", err)
	}
	return s
}

// quiet drops the Store's log: schema creation and recovery are expected.
func quiet() taskdb.Option { return taskdb.WithLogger(slog.New(slog.DiscardHandler)) }

// forEachBackend runs f in a subtest per backend, each on a fresh, empty
// database. The PostgreSQL subtest skips without a server (fails in CI).
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { f(t, sqliteBackend(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, postgresBackend(t)) })
}

// sqliteBackend is a database file in a temporary directory.
func sqliteBackend(t testing.TB) backend {
	path := filepath.Join(t.TempDir(), "agentry", "sessions.db")
	return backend{name: "sqlite", connect: func(t testing.TB) (*sql.DB, string) {
		t.Helper()
		s, err := sessions.OpenSQLite(context.Background(), path, sessions.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatalf("sessions.OpenSQLite: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s.DB(), s.Dialect()
	}}
}

// postgresBackend is a schema of its own on the test server, dropped when
// t ends, so parallel runs and tests never see each other's tasks.
func postgresBackend(t testing.TB) backend {
	t.Helper()
	scoped := pgtest.Schema(t, "task store", "agentry_taskdb_test_")
	return backend{name: "postgres", connect: func(t testing.TB) (*sql.DB, string) {
		t.Helper()
		s, err := sessions.OpenPostgres(context.Background(), scoped, sessions.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatalf("sessions.OpenPostgres: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s.DB(), s.Dialect()
	}}
}

type userKey struct{}

// as returns a context whose caller is user, for byUser.
func as(user string) context.Context {
	return context.WithValue(context.Background(), userKey{}, user)
}

// byUser is the tests' Authenticator: the user as names it.
func byUser() taskdb.Option {
	return taskdb.WithAuthenticator(func(ctx context.Context) (string, error) {
		u, _ := ctx.Value(userKey{}).(string)
		return u, nil
	})
}

var startTime = time.Date(2026, 3, 4, 15, 50, 0, 0, time.UTC)

// ticking is a clock a second further on at every reading, so update
// times order tasks as they were written.
func ticking() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return startTime.Add(time.Duration(n.Add(1)) * time.Second) }
}

// newTask is a task in state st with a user message in its history.
func newTask(st a2a.TaskState) *a2a.Task {
	id := a2a.NewTaskID()
	ctxID := a2a.NewContextID()
	msg := a2a.NewMessageForTask(a2a.MessageRoleUser, a2a.TaskInfo{TaskID: id, ContextID: ctxID}, a2a.NewTextPart("hello"))
	return &a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: st}, History: []*a2a.Message{msg}}
}

// statusEvent is the event a2a-go passes with the hot path's updates.
func statusEvent(t *a2a.Task) a2a.Event {
	return &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}
}

func mustCreate(t testing.TB, ctx context.Context, s *taskdb.Store, task *a2a.Task) taskstore.TaskVersion {
	t.Helper()
	v, err := s.Create(ctx, task)
	if err != nil {
		t.Fatalf("Create(%s): %v", task.ID, err)
	}
	return v
}

func mustUpdate(t testing.TB, ctx context.Context, s *taskdb.Store, task *a2a.Task, prev taskstore.TaskVersion) taskstore.TaskVersion {
	t.Helper()
	v, err := s.Update(ctx, &taskstore.UpdateRequest{Task: task, Event: statusEvent(task), PrevVersion: prev})
	if err != nil {
		t.Fatalf("Update(%s, %s, prev %d): %v", task.ID, task.Status.State, prev, err)
	}
	return v
}

func mustGet(t testing.TB, ctx context.Context, s *taskdb.Store, id a2a.TaskID) *taskstore.StoredTask {
	t.Helper()
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return got
}
