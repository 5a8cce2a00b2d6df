package batchq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"
)

// Status counts a batch's ids. Every id is in exactly one of Queued,
// Running, Done and Failed; Retried counts those that took, or are
// taking, more than one attempt.
type Status struct {
	Batch    string          `json:"batch"`
	Created  time.Time       `json:"created"`
	Settings json.RawMessage `json:"settings"`
	Total    int             `json:"total"`
	Queued   int             `json:"queued"`
	Running  int             `json:"running"`
	// Done counts the successes, Failed the error results and the ids
	// River discarded.
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Retried int `json:"retried"`
}

// Finished reports whether every id has its result.
func (s Status) Finished() bool { return s.Done+s.Failed >= s.Total }

// Status returns the counts of batch, or ErrUnknownBatch.
func (q *Queue) Status(ctx context.Context, batch string) (Status, error) {
	st := Status{Batch: batch}
	var settings string
	err := q.pool.QueryRow(ctx, `SELECT created, total, settings::text FROM agentry_batches WHERE batch = $1`, batch).
		Scan(&st.Created, &st.Total, &settings)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("%w %q", ErrUnknownBatch, batch)
	}
	if err != nil {
		return st, fmt.Errorf("batchq: status of %q: %w", batch, err)
	}
	st.Settings = json.RawMessage(settings)
	if err := q.pool.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE status = $2),
			count(*) FILTER (WHERE status <> $2),
			count(*) FILTER (WHERE attempts > 1)
		FROM agentry_batch_results WHERE batch = $1 AND final`, batch, StatusSuccess).
		Scan(&st.Done, &st.Failed, &st.Retried); err != nil {
		return st, fmt.Errorf("batchq: status of %q: %w", batch, err)
	}
	// The jobs of the ids without a result: the newest job of each id
	// (one enqueued again after a discard supersedes the old one).
	var running, discarded, retried int
	if err := q.pool.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE state = 'running'),
			count(*) FILTER (WHERE state IN ('discarded', 'cancelled')),
			count(*) FILTER (WHERE attempt > 1 OR (attempt >= 1 AND state <> 'running'))
		FROM (
			SELECT DISTINCT ON (j.args->>'id') j.state, j.attempt
			FROM river_job j
			WHERE j.kind = $1 AND j.args @> jsonb_build_object('batch', $2::text)
				AND NOT EXISTS (SELECT 1 FROM agentry_batch_results r
					WHERE r.batch = $2 AND r.id = j.args->>'id' AND r.final)
			ORDER BY j.args->>'id', j.id DESC
		) AS open`, jobKind, batch).Scan(&running, &discarded, &retried); err != nil {
		return st, fmt.Errorf("batchq: status of %q: %w", batch, err)
	}
	st.Running = running
	st.Failed += discarded
	st.Retried += retried
	st.Queued = max(0, st.Total-st.Done-st.Failed-st.Running)
	return st, nil
}

// Result is one id's result.
type Result struct {
	Seq    int
	ID     string
	Status string
	// Line is the stored result line, nil for a discarded job.
	Line []byte
	// Error is River's last error for a discarded job.
	Error    string
	Attempts int
	Worker   string
	Finished time.Time
}

// Results yields the results of batch in input order: the stored lines
// and the ids River discarded without one. Ids still queued or running
// are not yielded. An unknown batch yields ErrUnknownBatch.
func (q *Queue) Results(ctx context.Context, batch string) iter.Seq2[Result, error] {
	return func(yield func(Result, error) bool) {
		var exists bool
		if err := q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agentry_batches WHERE batch = $1)`, batch).Scan(&exists); err != nil {
			yield(Result{}, fmt.Errorf("batchq: results of %q: %w", batch, err))
			return
		}
		if !exists {
			yield(Result{}, fmt.Errorf("%w %q", ErrUnknownBatch, batch))
			return
		}
		rows, err := q.pool.Query(ctx, `SELECT seq, id, status, line, '', attempts, worker, finished
			FROM agentry_batch_results WHERE batch = $1 AND final
			UNION ALL
			SELECT (j.args->>'seq')::integer, j.args->>'id', $3, NULL,
				coalesce(j.errors[array_length(j.errors, 1)]->>'error', ''), j.attempt,
				coalesce(j.attempted_by[array_length(j.attempted_by, 1)], ''), coalesce(j.finalized_at, now())
			FROM river_job j
			WHERE j.kind = $2 AND j.args @> jsonb_build_object('batch', $1::text) AND j.state = 'discarded'
				AND NOT EXISTS (SELECT 1 FROM agentry_batch_results r
					WHERE r.batch = $1 AND r.id = j.args->>'id' AND r.final)
				AND NOT EXISTS (SELECT 1 FROM river_job k
					WHERE k.kind = $2 AND k.args @> jsonb_build_object('batch', $1::text, 'id', j.args->>'id') AND k.id > j.id)
			ORDER BY 1`, batch, jobKind, StatusDiscarded)
		if err != nil {
			yield(Result{}, fmt.Errorf("batchq: results of %q: %w", batch, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var r Result
			var line *string
			if err := rows.Scan(&r.Seq, &r.ID, &r.Status, &line, &r.Error, &r.Attempts, &r.Worker, &r.Finished); err != nil {
				yield(Result{}, fmt.Errorf("batchq: results of %q: %w", batch, err))
				return
			}
			if line != nil {
				r.Line = []byte(*line)
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(Result{}, fmt.Errorf("batchq: results of %q: %w", batch, err))
		}
	}
}
