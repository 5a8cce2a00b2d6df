package sessions

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// postgresDSNEnv names the PostgreSQL server the tests use.
const postgresDSNEnv = "AGENTRY_TEST_POSTGRES_DSN"

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

// postgresDSN returns the test server's DSN. Without one it skips t, or
// fails it under CI, where the server is part of the machine.
func postgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(postgresDSNEnv)
	if dsn != "" {
		return dsn
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: under CI the PostgreSQL session tests must run (.ci/run sets it and starts the server)", postgresDSNEnv)
	}
	t.Skipf("PostgreSQL session tests skipped: %s is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", postgresDSNEnv)
	return ""
}

// postgresBackend opens stores on a schema of their own on the test
// server, dropped when t ends, so runs and tests never see each other's
// sessions.
func postgresBackend(t testing.TB) backend {
	t.Helper()
	dsn := postgresDSN(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "agentry_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", postgresDSNEnv, err)
	}
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close()
		t.Fatalf("PostgreSQL at %s=%s: create schema: %v", postgresDSNEnv, dsn, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		_ = admin.Close()
	})
	scoped := withSearchPath(t, dsn, schema)
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

// withSearchPath adds search_path to a URL or key=value DSN; pgx sends
// unknown parameters to the server as run-time settings.
func withSearchPath(t testing.TB, dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", postgresDSNEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}
