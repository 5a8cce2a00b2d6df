// Package batchq is the queue of batch prompts on River, a PostgreSQL job
// queue: a batch's prompts are enqueued as River jobs unique by batch and
// id, any number of worker processes run them, and each id's result line
// is stored once in agentry's own table, whatever retries River made.
//
// The package knows neither the input format nor how a prompt runs: the
// caller hands [Enqueue] opaque requests and a [Config.Run] function that
// turns one into a result line, so that the queue stores exactly the lines
// the in-process batch writes.
package batchq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// Result statuses, the values of a result line's "status".
const (
	StatusSuccess = "success"
	StatusError   = "error"
	// StatusDiscarded marks an id whose job River gave up on (its
	// attempts ran out, each failing for reasons other than the prompt):
	// it has no stored line; [Result.Error] says why.
	StatusDiscarded = "discarded"
)

// Defaults of [Config].
const (
	DefaultJobTimeout  = 5 * time.Minute
	DefaultMaxAttempts = 5
	// rescueMargin is how long after its timeout a running job is taken
	// for dead when RescueAfter is not set.
	rescueMargin = time.Minute
	// DefaultFetchCooldown is the least time between two fetches of one
	// worker (River's default is 100 ms, which caps a worker at Workers
	// jobs per 100 ms whatever their length: a batch of short prompts
	// would wait on the queue rather than on the model).
	DefaultFetchCooldown = 10 * time.Millisecond
	// insertChunk bounds the jobs of one InsertManyTx call.
	insertChunk = 1000
)

// ErrUnknownBatch is returned for a batch name the queue has never seen.
var ErrUnknownBatch = errors.New("batchq: unknown batch")

// ErrBatchConflict is returned by Enqueue when the batch name is taken by
// other input or other settings.
var ErrBatchConflict = errors.New("batchq: batch exists with other input")

// Job is one prompt handed to [Config.Run].
type Job struct {
	// Batch is the batch's name.
	Batch string
	// Settings is the batch's settings snapshot, as given to Enqueue.
	Settings json.RawMessage
	// ID is the prompt's id, unique in its batch.
	ID string
	// Seq is the prompt's position in the input (from 1).
	Seq int
	// Request is the prompt as given to Enqueue.
	Request json.RawMessage
	// Attempt counts River's attempts at this job, from 1.
	Attempt int
}

// Line is what a prompt's run produced: its result line and the line's
// status ([StatusSuccess] or [StatusError]).
type Line struct {
	Status string
	Line   []byte
}

// RunFunc runs one prompt. A prompt that ran and failed (a model error, a
// turn limit) is a Line with [StatusError]; an error return means the
// prompt did not finish (the job's timeout, the worker stopping, settings
// the worker cannot load) and makes River retry the job.
type RunFunc func(ctx context.Context, job Job) (Line, error)

// Config configures a [Queue].
type Config struct {
	// Pool is the PostgreSQL pool; its search_path names the schema of
	// River's and agentry's tables.
	Pool *pgxpool.Pool
	// Run runs a prompt; needed only to work jobs (Workers > 0).
	Run RunFunc
	// Workers is how many jobs this process runs at once; 0 makes a
	// queue that enqueues and reads but works nothing.
	Workers int
	// JobTimeout cancels a job's run after this long (DefaultJobTimeout
	// when 0); the job is then retried.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before River's
	// rescuer takes its worker for dead and makes it available again
	// (JobTimeout plus a minute when 0). It must exceed JobTimeout.
	RescueAfter time.Duration
	// MaxAttempts bounds River's attempts at a job
	// (DefaultMaxAttempts when 0).
	MaxAttempts int
	// FetchCooldown is the least time between two fetches of jobs by
	// this worker (DefaultFetchCooldown when 0).
	FetchCooldown time.Duration
	// ID names this worker in River and in the results (host-pid when
	// empty).
	ID string
	// Logger receives River's and the worker's logs (slog.Default when
	// nil).
	Logger *slog.Logger
}

// Queue is the batch queue on one PostgreSQL schema.
type Queue struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	cfg    Config
	log    *slog.Logger

	mu       sync.Mutex
	settings map[string]json.RawMessage // batch settings read by the worker
}

// jobKind is the River kind of a batch prompt.
const jobKind = "agentry_batch_prompt"

// jobArgs are a prompt job's River args; uniqueness is by batch and id.
type jobArgs struct {
	Batch   string          `json:"batch" river:"unique"`
	ID      string          `json:"id" river:"unique"`
	Seq     int             `json:"seq"`
	Request json.RawMessage `json:"request"`
}

// Kind implements river.JobArgs.
func (jobArgs) Kind() string { return jobKind }

// InsertOpts implements river.JobArgsWithInsertOpts: one job per batch
// and id while one is queued, running, or completed.
func (jobArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// New makes a queue on cfg.Pool. It applies the migrations (see
// [Migrate]) first, so every process that starts on a database brings it
// up to date. Call Start to work jobs.
func New(ctx context.Context, cfg Config) (*Queue, error) {
	if cfg.Pool == nil {
		return nil, errors.New("batchq: Config.Pool is nil")
	}
	if cfg.Workers > 0 && cfg.Run == nil {
		return nil, errors.New("batchq: Config.Run is nil with Workers > 0")
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = cfg.JobTimeout + rescueMargin
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		return nil, fmt.Errorf("batchq: the rescue delay (%v) must exceed the job timeout (%v)", cfg.RescueAfter, cfg.JobTimeout)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.FetchCooldown <= 0 {
		cfg.FetchCooldown = DefaultFetchCooldown
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = host + "-" + strconv.Itoa(os.Getpid())
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := Migrate(ctx, cfg.Pool); err != nil {
		return nil, err
	}
	q := &Queue{pool: cfg.Pool, cfg: cfg, log: cfg.Logger, settings: map[string]json.RawMessage{}}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{q: q})
	rc := &river.Config{
		ID:                   cfg.ID,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		MaxAttempts:          cfg.MaxAttempts,
		FetchCooldown:        cfg.FetchCooldown,
		Logger:               cfg.Logger,
		Workers:              workers,
		// Results live in agentry_batch_results; River's finished jobs
		// are kept a day, as by default, for inspection.
	}
	if cfg.Workers > 0 {
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}}
	}
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), rc)
	if err != nil {
		return nil, fmt.Errorf("batchq: river client: %w", err)
	}
	q.client = client
	return q, nil
}

// Start starts working jobs until ctx is done or Shutdown is called.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("batchq: start: %w", err)
	}
	return nil
}

// Shutdown stops working: no new jobs are fetched and the running ones
// have grace to finish; then their runs are cancelled (River's
// StopAndCancel), and River puts their jobs back in the queue, the
// attempt not counted, for another worker. It returns when the client has stopped or ctx is
// done.
func (q *Queue) Shutdown(ctx context.Context, grace time.Duration) error {
	soft, cancel := context.WithTimeout(ctx, grace)
	err := q.client.Stop(soft)
	cancel()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return err
	}
	q.log.Warn("jobs still running after the grace period: cancelling them", "grace", grace)
	return q.client.StopAndCancel(ctx)
}

// Batch is a batch as Enqueue records it.
type Batch struct {
	// Name names the batch; re-enqueueing under the same name is
	// idempotent.
	Name string
	// Digest identifies the input (e.g. a hash of its bytes); a name
	// enqueued again with another digest is refused with
	// ErrBatchConflict. Empty: not checked.
	Digest string
	// Settings is the snapshot every worker runs the prompts with.
	Settings json.RawMessage
}

// Item is one input line of a batch: a prompt to run (Request set) or a
// line that has its result already (Done set: an invalid input line's
// error result).
type Item struct {
	Seq     int
	ID      string
	Request json.RawMessage
	Done    *Line
}

// Enqueued says what Enqueue did.
type Enqueued struct {
	// Inserted counts new jobs; Duplicates the prompts whose job was
	// there already; Finished the ids with a result already stored
	// (not enqueued again).
	Inserted, Duplicates, Finished int
}

// Enqueue records the batch and inserts its prompts as River jobs unique
// by batch and id, in one transaction: enqueueing the same batch again
// inserts nothing new. Items with a result are stored as final results.
func (q *Queue) Enqueue(ctx context.Context, b Batch, items []Item) (Enqueued, error) {
	var out Enqueued
	if b.Name == "" {
		return out, errors.New("batchq: empty batch name")
	}
	settings := b.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("{}")
	}
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		return out, fmt.Errorf("batchq: enqueue: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	tag, err := tx.Exec(ctx, `INSERT INTO agentry_batches (batch, total, digest, settings) VALUES ($1, $2, $3, $4)
		ON CONFLICT (batch) DO NOTHING`, b.Name, len(items), b.Digest, string(settings))
	if err != nil {
		return out, fmt.Errorf("batchq: enqueue: %w", err)
	}
	if tag.RowsAffected() == 0 {
		var total int
		var digest string
		var same bool
		if err := tx.QueryRow(ctx, `SELECT total, digest, settings = $2::jsonb FROM agentry_batches WHERE batch = $1`,
			b.Name, string(settings)).Scan(&total, &digest, &same); err != nil {
			return out, fmt.Errorf("batchq: enqueue: %w", err)
		}
		switch {
		case b.Digest != "" && digest != b.Digest, total != len(items):
			return out, fmt.Errorf("%w: batch %q was enqueued from other input (%d lines); give another batch name", ErrBatchConflict, b.Name, total)
		case !same:
			return out, fmt.Errorf("%w: batch %q was enqueued with other settings; give another batch name", ErrBatchConflict, b.Name)
		}
	}
	final, err := finalIDs(ctx, tx, b.Name)
	if err != nil {
		return out, err
	}
	var params []river.InsertManyParams
	flush := func() error {
		if len(params) == 0 {
			return nil
		}
		res, err := q.client.InsertManyTx(ctx, tx, params)
		if err != nil {
			return fmt.Errorf("batchq: enqueue: %w", err)
		}
		for _, r := range res {
			if r.UniqueSkippedAsDuplicate {
				out.Duplicates++
			} else {
				out.Inserted++
			}
		}
		params = params[:0]
		return nil
	}
	for _, it := range items {
		if final[it.ID] {
			out.Finished++
			continue
		}
		if it.Done != nil {
			if _, err := storeResult(ctx, tx, b.Name, it.ID, it.Seq, *it.Done, 0, "enqueue"); err != nil {
				return out, err
			}
			out.Finished++
			continue
		}
		params = append(params, river.InsertManyParams{Args: jobArgs{Batch: b.Name, ID: it.ID, Seq: it.Seq, Request: it.Request}})
		if len(params) == insertChunk {
			if err := flush(); err != nil {
				return out, err
			}
		}
	}
	if err := flush(); err != nil {
		return out, err
	}
	if err := tx.Commit(ctx); err != nil {
		return out, fmt.Errorf("batchq: enqueue: %w", err)
	}
	return out, nil
}

// finalIDs returns the ids of batch that have a final result.
func finalIDs(ctx context.Context, tx pgx.Tx, batch string) (map[string]bool, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM agentry_batch_results WHERE batch = $1 AND final`, batch)
	if err != nil {
		return nil, fmt.Errorf("batchq: enqueue: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("batchq: enqueue: %w", err)
	}
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m, nil
}

// dbExec is what storeResult needs of a pool or a transaction.
type dbExec interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// storeResult stores id's result line unless a final one is stored
// already: a second run of the same id (a job rescued while its first run
// was finishing, a slow worker) leaves the first line in place. It
// reports whether the line was stored.
func storeResult(ctx context.Context, db dbExec, batch, id string, seq int, l Line, attempts int, worker string) (bool, error) {
	tag, err := db.Exec(ctx, `INSERT INTO agentry_batch_results (batch, id, seq, line, status, final, attempts, worker)
		VALUES ($1, $2, $3, $4, $5, true, $6, $7)
		ON CONFLICT (batch, id) DO UPDATE SET
			line = EXCLUDED.line, status = EXCLUDED.status, final = EXCLUDED.final,
			attempts = EXCLUDED.attempts, worker = EXCLUDED.worker, finished = now()
		WHERE NOT agentry_batch_results.final`,
		batch, id, seq, string(l.Line), l.Status, attempts, worker)
	if err != nil {
		return false, fmt.Errorf("batchq: storing the result of %q in batch %q: %w", id, batch, err)
	}
	return tag.RowsAffected() > 0, nil
}
