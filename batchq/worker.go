package batchq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// worker is River's worker of prompt jobs.
type worker struct {
	river.WorkerDefaults[jobArgs]
	q *Queue
}

// Work runs one prompt through Config.Run and stores its line. An id
// with a final result already (its job rescued after a run that stored
// it, or enqueued again after River dropped the completed job) is not run
// again.
func (w *worker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	q := w.q
	a := job.Args
	var done bool
	if err := q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agentry_batch_results WHERE batch = $1 AND id = $2 AND final)`,
		a.Batch, a.ID).Scan(&done); err != nil {
		return fmt.Errorf("batchq: reading the result of %q in batch %q: %w", a.ID, a.Batch, err)
	}
	if done {
		q.log.Info("prompt has its result already", "batch", a.Batch, "id", a.ID, "attempt", job.Attempt)
		return nil
	}
	settings, err := q.batchSettings(ctx, a.Batch)
	if err != nil {
		return err
	}
	line, err := q.cfg.Run(ctx, Job{Batch: a.Batch, Settings: settings, ID: a.ID, Seq: a.Seq, Request: a.Request, Attempt: job.Attempt})
	if err != nil {
		q.log.Warn("prompt did not finish; River retries it", "batch", a.Batch, "id", a.ID, "attempt", job.Attempt, "err", err)
		return err
	}
	// Stored even when ctx ended after the run finished: the line is the
	// work done.
	stored, err := storeResult(context.WithoutCancel(ctx), q.pool, a.Batch, a.ID, a.Seq, line, job.Attempt, q.cfg.ID)
	if err != nil {
		return err
	}
	if !stored {
		q.log.Info("prompt ran twice; the first result is kept", "batch", a.Batch, "id", a.ID, "attempt", job.Attempt)
	}
	return nil
}

// batchSettings returns the settings snapshot of batch, read once per
// process.
func (q *Queue) batchSettings(ctx context.Context, batch string) (json.RawMessage, error) {
	q.mu.Lock()
	s, ok := q.settings[batch]
	q.mu.Unlock()
	if ok {
		return s, nil
	}
	var raw string
	err := q.pool.QueryRow(ctx, `SELECT settings::text FROM agentry_batches WHERE batch = $1`, batch).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w %q", ErrUnknownBatch, batch)
	}
	if err != nil {
		return nil, fmt.Errorf("batchq: reading the settings of batch %q: %w", batch, err)
	}
	s = json.RawMessage(raw)
	q.mu.Lock()
	q.settings[batch] = s
	q.mu.Unlock()
	return s, nil
}
