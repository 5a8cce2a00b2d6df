package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/batchq"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime"
)

// defaultWorkerGrace is how long a stopping worker lets its running
// prompts finish before it cancels them.
const defaultWorkerGrace = 30 * time.Second

type workerFlags struct {
	dsn         string
	concurrency int
	jobTimeout  time.Duration
	rescueAfter time.Duration
	maxAttempts int
	grace       time.Duration
}

func newWorkerCommand(io stdio, in *interrupts, exit *int) *cobra.Command {
	f := &workerFlags{}
	cmd := &cobra.Command{
		Use:   "worker --queue DSN [-c N]",
		Short: "Run the prompts of batches on a queue",
		Long: `Run the prompts that "agentry batch --queue DSN" enqueued, of any batch,
N at a time, each with its batch's recorded settings (model, approval
mode, allowed tools, workspace) over this machine's own settings and
credentials. Run as many workers, on as many machines, as the batch needs.

A prompt that runs and fails (a model error) is an error result, as in the
in-process batch. A job that does not finish — its run cancelled by
--job-timeout, the batch's settings failing to load
here — is retried by the queue, up to --max-attempts. A worker that dies
mid-prompt leaves its jobs running until --rescue-after, when the queue's
rescuer makes them available to the other workers again; every id keeps
exactly one result.

SIGTERM or Ctrl-C stops fetching and gives the running prompts --grace to
finish; those still running then are cancelled and put back in the queue
for another worker. A second signal exits at once. Logs go to stderr.`,
		Args: cobra.NoArgs,
		PreRun: func(*cobra.Command, []string) {
			in.handle()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = workerMain(cmd.Context(), f, io, in.c)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dsn, "queue", "", "the queue's PostgreSQL `DSN`")
	fl.IntVarP(&f.concurrency, "concurrency", "c", defaultBatchConcurrency, "how many prompts run at once")
	fl.DurationVar(&f.jobTimeout, "job-timeout", batchq.DefaultJobTimeout, "cancel a prompt's run after this long; its job is retried")
	fl.DurationVar(&f.rescueAfter, "rescue-after", 0, "take a job running this long for one whose worker died, and run it again (default the job timeout plus 1m)")
	fl.IntVar(&f.maxAttempts, "max-attempts", batchq.DefaultMaxAttempts, "attempts at a job that does not finish before it is given up")
	fl.DurationVar(&f.grace, "grace", defaultWorkerGrace, "on SIGTERM, how long running prompts have to finish")
	return cmd
}

func workerMain(ctx context.Context, f *workerFlags, io stdio, sigs <-chan os.Signal) int {
	fail := func(err error) int {
		code, _ := exitFor(err)
		writeErrorLine(io.err, err)
		return code
	}
	if f.concurrency < 1 {
		return fail(&inputError{fmt.Sprintf("--concurrency must be at least 1, not %d", f.concurrency)})
	}
	if f.jobTimeout <= 0 {
		return fail(&inputError{fmt.Sprintf("--job-timeout must be positive, not %v", f.jobTimeout)})
	}
	if f.rescueAfter != 0 && f.rescueAfter <= f.jobTimeout {
		return fail(&inputError{fmt.Sprintf("--rescue-after (%v) must exceed --job-timeout (%v): a job still running would be run twice", f.rescueAfter, f.jobTimeout)})
	}
	if f.maxAttempts < 1 {
		return fail(&inputError{fmt.Sprintf("--max-attempts must be at least 1, not %d", f.maxAttempts)})
	}
	log := slog.New(slog.NewTextHandler(io.err, nil))

	// River's producer, notifier, completer and leader each hold a
	// connection beside the running jobs'.
	pool, err := openQueuePool(ctx, f.dsn, f.concurrency+8)
	if err != nil {
		return fail(err)
	}
	defer pool.Close()
	// The workers of a queue are a fleet: they share model health (a 429
	// storm falls back once for all of them) and the user's
	// cluster.modelLimits through the queue's database.
	fleet, err := config.Load(config.LoadOptions{})
	if err != nil {
		return fail(&inputError{err.Error()})
	}
	fleet.Cluster.Enabled = true
	fleet.Session.Store, fleet.Session.PostgresDSN = config.SessionStorePostgres, f.dsn
	avail, closeAvail, err := newAvailability(ctx, fleet, log)
	if err != nil {
		return fail(err)
	}
	defer closeAvail()
	w := &queueWorker{log: log, stderr: io, avail: avail, batches: map[string]*batch{}}
	defer w.close()
	q, err := batchq.New(ctx, batchq.Config{
		Pool: pool, Run: w.run, Workers: f.concurrency,
		JobTimeout: f.jobTimeout, RescueAfter: f.rescueAfter, MaxAttempts: f.maxAttempts, Logger: log,
	})
	if err != nil {
		return fail(err)
	}
	// Not ctx: a cancelled Start context would stop River without the
	// grace period; stopping is Shutdown's.
	if err := q.Start(context.WithoutCancel(ctx)); err != nil {
		return fail(err)
	}
	log.Info("worker started", "concurrency", f.concurrency, "job_timeout", f.jobTimeout, "pid", os.Getpid())
	select {
	case s := <-sigs:
		log.Info("stopping: running prompts have the grace period to finish", "signal", s.String(), "grace", f.grace)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.grace+30*time.Second)
	defer cancel()
	if err := q.Shutdown(stop, f.grace); err != nil {
		return fail(fmt.Errorf("stopping the worker: %w", err))
	}
	log.Info("worker stopped")
	return runtime.ExitOK
}

// queueWorker runs queued prompts with the in-process batch's runner, a
// batch (settings, workspaces, resolvers) per queued batch.
type queueWorker struct {
	log    *slog.Logger
	stderr stdio
	// avail is the worker's one availability state, shared by its
	// batches as the in-process batch shares one.
	avail *routing.Availability

	mu      sync.Mutex
	batches map[string]*batch
}

// run is the batchq.RunFunc.
func (w *queueWorker) run(ctx context.Context, job batchq.Job) (batchq.Line, error) {
	b, err := w.batch(job.Batch, job.Settings)
	if err != nil {
		return batchq.Line{}, err
	}
	var qr queuedRequest
	if err := json.Unmarshal(job.Request, &qr); err != nil {
		return batchq.Line{}, fmt.Errorf("batch %q: the job of %q does not hold a request: %w", job.Batch, job.ID, err)
	}
	res := b.runOne(ctx, batchRequest{
		line: qr.Line, ID: job.ID, Prompt: qr.Prompt, Model: qr.Model, Agent: qr.Agent,
		Workspace: qr.Workspace, ApprovalMode: qr.ApprovalMode,
	})
	if res.Status == batchCancelled {
		return batchq.Line{}, fmt.Errorf("the prompt was stopped before its end: %w", context.Cause(ctx))
	}
	line, err := encodeResult(res)
	if err != nil {
		return batchq.Line{}, err
	}
	return batchq.Line{Status: res.Status, Line: line}, nil
}

// batch returns the runner of a queued batch, made from its settings
// snapshot the first time. Settings that do not load are not kept: the
// job is retried, here or on another worker.
func (w *queueWorker) batch(name string, raw json.RawMessage) (*batch, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.batches[name]; b != nil {
		return b, nil
	}
	var s queuedSettings
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("batch %q: settings snapshot: %w", name, err)
	}
	flags := s.flags()
	load := func(workspace string) (*config.Settings, error) {
		return config.Load(config.LoadOptions{
			Workspace: workspace, Flags: flags, FlagKeys: batchFlagKeys(), TrustWorkspace: s.TrustWorkspace,
		})
	}
	base, err := load(s.Workspace)
	if err != nil {
		return nil, fmt.Errorf("batch %q: loading its settings on this worker: %w", name, err)
	}
	for _, warn := range base.Warnings {
		w.log.Warn(warn, "batch", name)
	}
	b := &batch{
		flags: &batchFlags{}, load: load, base: base, stderr: w.stderr.err,
		avail: w.avail, log: w.log.With("batch", name), spaces: map[string]*batchSpace{},
	}
	w.batches[name] = b
	return b, nil
}

// close shuts down the telemetry of every batch run here.
func (w *queueWorker) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.batches {
		b.close()
	}
}

// flags is the snapshot as the batch flags it stands for, set as given on
// the enqueuing command line.
func (s queuedSettings) flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("batch", pflag.ContinueOnError)
	fs.String("model", "", "")
	fs.String("approval-mode", "", "")
	fs.StringSlice("allowed-tools", nil, "")
	addPolicyFlags(fs)
	for name, vals := range map[string][]string{
		"policy": s.Policy, "admin-policy": s.AdminPolicy, "allowed-mcp-server-names": s.AllowedMCPServerNames,
	} {
		if vals != nil {
			f := fs.Lookup(name)
			_ = f.Value.(pflag.SliceValue).Replace(vals)
			f.Changed = true
		}
	}
	if s.Model != "" {
		_ = fs.Set("model", s.Model)
	}
	if s.ApprovalMode != "" {
		_ = fs.Set("approval-mode", s.ApprovalMode)
	}
	if s.AllowedTools != nil {
		f := fs.Lookup("allowed-tools")
		_ = f.Value.(pflag.SliceValue).Replace(s.AllowedTools)
		f.Changed = true
	}
	return fs
}
