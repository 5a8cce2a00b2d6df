package sessions

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// backend opens stores on one database; every store a backend opens sees
// the same data, so reopening is closing and opening again.
type backend struct {
	name string
	open func(t testing.TB, opts ...Option) *Store
}

// quiet drops the Store's log: schema creation on every fresh test
// database is expected.
func quiet() Option { return WithLogger(slog.New(slog.DiscardHandler)) }

// forEachBackend runs f in a subtest per backend, each on a fresh, empty
// database. The PostgreSQL subtest skips without a server (fails in CI).
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { f(t, sqliteBackend(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, postgresBackend(t)) })
}

// sqliteBackend opens stores on one file in a temporary directory.
func sqliteBackend(t testing.TB) backend {
	path := filepath.Join(t.TempDir(), "agentry", "sessions.db")
	return backend{name: "sqlite", open: func(t testing.TB, opts ...Option) *Store {
		t.Helper()
		s, err := OpenSQLite(context.Background(), path, append([]Option{quiet()}, opts...)...)
		if err != nil {
			t.Fatalf("OpenSQLite: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}}
}

// postgresBackend opens stores on a schema of their own on the test
// server, dropped when t ends, so runs and tests never see each other's
// sessions.
func postgresBackend(t testing.TB) backend {
	t.Helper()
	scoped := pgtest.Schema(t, "session store", "agentry_test_")
	return backend{name: "postgres", open: func(t testing.TB, opts ...Option) *Store {
		t.Helper()
		s, err := OpenPostgres(context.Background(), scoped, append([]Option{quiet()}, opts...)...)
		if err != nil {
			t.Fatalf("OpenPostgres: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}}
}
