package fleethealth

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions, applied in order; version i+1 is
// migrations[i]. Never edit an applied one: append.
var migrations = []string{
	// 1: model health and the requests-per-minute windows.
	`CREATE TABLE agentry_model_health (
		model      text PRIMARY KEY,
		state      text NOT NULL,
		reason     text NOT NULL DEFAULT '',
		until      timestamptz,
		updated_at timestamptz NOT NULL DEFAULT now(),
		version    bigint NOT NULL,
		origin     text NOT NULL DEFAULT ''
	);
	CREATE TABLE agentry_model_rate (
		model        text NOT NULL,
		window_start timestamptz NOT NULL,
		count        integer NOT NULL,
		PRIMARY KEY (model, window_start)
	);`,
}

// SchemaVersion is the schema version this package migrates to.
const SchemaVersion = 1

// migrate brings the schema to SchemaVersion in one transaction under a
// transaction-level advisory lock keyed by the schema, so processes
// starting together apply each version once: the others wait for the
// lock, then find the versions recorded.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "agentry.fleethealth.migrate|"+schema); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agentry_fleethealth_migrations (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM agentry_fleethealth_migrations`).Scan(&have); err != nil {
		return err
	}
	if have > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this agentry's %d", have, len(migrations))
	}
	for v := have + 1; v <= len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v-1], pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agentry_fleethealth_migrations (version) VALUES ($1)`, v); err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
	}
	return tx.Commit(ctx)
}
