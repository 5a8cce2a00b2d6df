package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrSchemaTooNew is returned by Start when the database's cluster tables
// were written by a newer agentry whose schema this one does not know.
var ErrSchemaTooNew = errors.New("cluster: database schema is newer than this version of agentry supports")

// schemaLock is the advisory lock serialising migrations (the session
// schema's is 7461726, the task tables' 7461727).
const schemaLock = 7461728

// migrations[i] brings the cluster tables from version i to i+1. Times
// are Unix microseconds, as in the session and task tables.
var migrations = [][]string{{
	`CREATE TABLE IF NOT EXISTS agentry_replicas (
		replica_id TEXT PRIMARY KEY,
		url TEXT NOT NULL,
		started BIGINT NOT NULL,
		heartbeat BIGINT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS agentry_context_owners (
		context_id TEXT PRIMARY KEY,
		replica_id TEXT NOT NULL,
		since BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS agentry_context_owners_replica ON agentry_context_owners (replica_id)`,
}, {
	// The event log: every event of every task a replica runs, in order
	// (seq from 1 per task), as its A2A stream response JSON; final marks
	// the task's last event.
	`CREATE TABLE IF NOT EXISTS agentry_task_events (
		task_id TEXT NOT NULL,
		seq BIGINT NOT NULL,
		context_id TEXT NOT NULL,
		final BOOLEAN NOT NULL,
		created BIGINT NOT NULL,
		event JSONB NOT NULL,
		PRIMARY KEY (task_id, seq))`,
	`CREATE INDEX IF NOT EXISTS agentry_task_events_context ON agentry_task_events (context_id)`,
}}

// SchemaVersion is the version Start migrates the cluster tables to.
var SchemaVersion = len(migrations)

// migrate creates or upgrades the tables in one transaction under an
// advisory lock, so that replicas starting at once migrate once.
func migrate(ctx context.Context, db *sql.DB) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLock); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS agentry_cluster_schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var from int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM agentry_cluster_schema_version`).Scan(&from); err != nil {
		return err
	}
	if from > SchemaVersion {
		return fmt.Errorf("%w (database %d, supported %d)", ErrSchemaTooNew, from, SchemaVersion)
	}
	for v := from; v < SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agentry_cluster_schema_version (version) VALUES ($1)`, v+1); err != nil {
			return fmt.Errorf("record version %d: %w", v+1, err)
		}
	}
	return tx.Commit()
}
