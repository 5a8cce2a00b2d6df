// Package pgtest gives tests a PostgreSQL schema of their own on the
// machine's test server, named by AGENTRY_TEST_POSTGRES_DSN. Without the
// variable a test is skipped, or failed under CI (CI set), where .ci/run
// sets it and starts the server: a database test must never skip silently
// there.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	// The pgx driver for database/sql.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// DSNEnv names the PostgreSQL server the tests use.
const DSNEnv = "AGENTRY_TEST_POSTGRES_DSN"

// DSN returns the test server's DSN. Without one it skips t, or fails it
// under CI; what names the tests in the messages ("session store").
func DSN(t testing.TB, what string) string {
	t.Helper()
	dsn := os.Getenv(DSNEnv)
	if dsn != "" {
		return dsn
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: under CI the PostgreSQL %s tests must run (.ci/run sets it and starts the server)", DSNEnv, what)
	}
	t.Skipf("PostgreSQL %s tests skipped: %s is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", what, DSNEnv)
	return ""
}

// Schema creates a schema named prefix plus random hex on the test server,
// drops it when t ends, and returns a DSN whose search_path is that
// schema, so parallel runs and tests never see each other's tables.
func Schema(t testing.TB, what, prefix string) string {
	t.Helper()
	dsn := DSN(t, what)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := prefix + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", DSNEnv, err)
	}
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close()
		t.Fatalf("PostgreSQL at %s=%s: create schema: %v", DSNEnv, dsn, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		_ = admin.Close()
	})
	return WithSearchPath(t, dsn, schema)
}

// WithSearchPath returns dsn (a URL or key=value string) with its
// search_path set to schema.
func WithSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", DSNEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}
