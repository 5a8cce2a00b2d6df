package batchq

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// migrations are agentry's own schema versions, applied in order after
// River's; a version once released is never edited, only followed.
func migrations() []string {
	return []string{
		// 1: batches and their results.
		`CREATE TABLE agentry_batches (
			batch    text PRIMARY KEY,
			created  timestamptz NOT NULL DEFAULT now(),
			total    integer NOT NULL,
			digest   text NOT NULL DEFAULT '',
			settings jsonb NOT NULL
		);
		CREATE TABLE agentry_batch_results (
			batch    text NOT NULL REFERENCES agentry_batches (batch) ON DELETE CASCADE,
			id       text NOT NULL,
			seq      integer NOT NULL,
			line     text NOT NULL,
			status   text NOT NULL,
			final    boolean NOT NULL DEFAULT true,
			attempts integer NOT NULL,
			worker   text NOT NULL,
			finished timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (batch, id)
		);
		CREATE INDEX agentry_batch_results_seq ON agentry_batch_results (batch, seq);`,
	}
}

// Migrate brings the schema of the pool's search_path up to date: River's
// tables (rivermigrate, a transaction per version, as River needs) then
// agentry's, under a session advisory lock keyed by the schema, so that
// processes starting at once apply each version once: the others wait for
// the lock and then find nothing left to do. The lock dies with its
// connection, so a process killed while migrating blocks nobody.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("batchq: river migrator: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("batchq: migrate: %w", err)
	}
	defer conn.Release()
	const key = `hashtextextended('agentry.batchq.migrate.' || current_schema(), 0)`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
		return fmt.Errorf("batchq: migrate: taking the migration lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`); err != nil {
			// The lock goes with the connection.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("batchq: river migrations: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("batchq: migrate: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if err := migrateOwn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("batchq: migrate: %w", err)
	}
	return nil
}

// migrateOwn applies agentry's versions that tx's schema lacks.
func migrateOwn(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agentry_batchq_migrations (
		version integer PRIMARY KEY,
		applied timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("batchq: migrate: %w", err)
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM agentry_batchq_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("batchq: migrate: %w", err)
	}
	all := migrations()
	if have > len(all) {
		return fmt.Errorf("batchq: the database is at schema version %d, newer than this agentry's %d: upgrade agentry", have, len(all))
	}
	for v := have + 1; v <= len(all); v++ {
		if _, err := tx.Exec(ctx, all[v-1]); err != nil {
			return fmt.Errorf("batchq: migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agentry_batchq_migrations (version) VALUES ($1)`, v); err != nil {
			return fmt.Errorf("batchq: migration %d: %w", v, err)
		}
	}
	return nil
}
