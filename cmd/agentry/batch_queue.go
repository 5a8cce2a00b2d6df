package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/batchq"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
)

const (
	// queuePollEvery is how often a followed batch's counts are read.
	queuePollEvery = 250 * time.Millisecond
	// queueIdleHint is how long a followed batch may sit with nothing
	// running before agentry says that workers are needed.
	queueIdleHint = 5 * time.Second
	// queueConnectTimeout bounds the first contact with PostgreSQL.
	queueConnectTimeout = 10 * time.Second
)

// queueFlags are the flags of batch's queue mode.
type queueFlags struct {
	dsn    string
	name   string
	noWait bool
}

// queuedSettings is a batch's settings snapshot: the batch flags that
// were given, which every worker applies over its own settings exactly as
// the flags would have been on the enqueuing machine. Flags not given are
// left out, so the worker's settings files decide them.
type queuedSettings struct {
	Model        string   `json:"model,omitempty"`
	ApprovalMode string   `json:"approval_mode,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// The policy flags, paths absolute.
	Policy                []string `json:"policy,omitempty"`
	AdminPolicy           []string `json:"admin_policy,omitempty"`
	AllowedMCPServerNames []string `json:"allowed_mcp_server_names,omitempty"`
	Workspace             string   `json:"workspace"`
	TrustWorkspace        bool     `json:"trust_workspace,omitempty"`
}

// queuedRequest is a valid input line as a job carries it.
type queuedRequest struct {
	Line         int    `json:"line"`
	Prompt       string `json:"prompt"`
	Model        string `json:"model,omitempty"`
	Agent        string `json:"agent,omitempty"`
	Workspace    string `json:"workspace,omitempty"`
	ApprovalMode string `json:"approval_mode,omitempty"`
}

// openQueuePool connects to the queue's PostgreSQL, with room for conns
// connections at once. A DSN that does not parse is an input error; a
// server that does not answer is named without the DSN's password.
func openQueuePool(ctx context.Context, dsn string, conns int) (*pgxpool.Pool, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, &inputError{"--queue needs a PostgreSQL DSN, e.g. postgres://user@host:5432/db"}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &inputError{fmt.Sprintf("--queue: not a PostgreSQL DSN: %v", err)}
	}
	cfg.MaxConns = max(cfg.MaxConns, int32(conns))
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--queue: PostgreSQL at %s: %w", where, err)
	}
	pctx, cancel := context.WithTimeout(ctx, queueConnectTimeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("--queue: cannot reach PostgreSQL at %s: %w", where, err)
	}
	return pool, nil
}

// openQueue opens the queue at dsn for enqueueing and reading.
func openQueue(ctx context.Context, dsn string) (*batchq.Queue, func(), error) {
	pool, err := openQueuePool(ctx, dsn, 4)
	if err != nil {
		return nil, nil, err
	}
	q, err := batchq.New(ctx, batchq.Config{Pool: pool, Logger: warnLogger(os.Stderr)})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return q, pool.Close, nil
}

// batchItems reads a batch input whole: each non-blank line is a prompt
// to enqueue or, when it is not valid, its error result, numbered by its
// line as the in-process batch numbers them.
func batchItems(data []byte) ([]batchq.Item, error) {
	in := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
	seen := map[string]int{}
	var items []batchq.Item
	for n := 1; ; n++ {
		line, tooLong, err := readLine(in, maxBatchLine)
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the batch input: %w", err)
		}
		req, bad, blank := readBatchLine(line, n, tooLong, seen)
		if blank {
			continue
		}
		if bad != nil {
			l, err := encodeResult(*bad)
			if err != nil {
				return nil, err
			}
			items = append(items, batchq.Item{Seq: n, ID: bad.ID, Done: &batchq.Line{Status: bad.Status, Line: l}})
			continue
		}
		raw, err := json.Marshal(queuedRequest{
			Line: n, Prompt: req.Prompt, Model: req.Model, Agent: req.Agent, Workspace: req.Workspace, ApprovalMode: req.ApprovalMode,
		})
		if err != nil {
			return nil, err
		}
		items = append(items, batchq.Item{Seq: n, ID: req.ID, Request: raw})
	}
}

// batchNameChars are the characters a derived batch name keeps.
var batchNameChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// defaultBatchName names a batch after its file and a short hash of its
// content and settings, so that the same command enqueues the same batch
// again and a changed file or flag makes another.
func defaultBatchName(path string, data, settings []byte) string {
	base := "stdin"
	if path != "-" {
		base = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		base = strings.Trim(batchNameChars().ReplaceAllString(base, "-"), "-")
		if base == "" {
			base = "batch"
		}
	}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0})
	h.Write(settings)
	return base + "-" + hex.EncodeToString(h.Sum(nil))[:10]
}

// queueSettings is the snapshot of the batch's flags.
func queueSettings(cmd *cobra.Command, f *batchFlags, workspace string) queuedSettings {
	s := queuedSettings{Workspace: workspace, TrustWorkspace: f.trustWorkspace}
	fl := cmd.Flags()
	if fl.Changed("model") {
		s.Model = f.model
	}
	if fl.Changed("approval-mode") {
		s.ApprovalMode, _ = fl.GetString("approval-mode")
	}
	if fl.Changed("allowed-tools") {
		s.AllowedTools = f.allowedTools
	}
	s.Policy, s.AdminPolicy = absSlice(fl, "policy"), absSlice(fl, "admin-policy")
	if fl.Changed("allowed-mcp-server-names") {
		s.AllowedMCPServerNames, _ = fl.GetStringSlice("allowed-mcp-server-names")
	}
	return s
}

// queueBatchMain is "agentry batch --queue DSN FILE": the input enqueued,
// then followed until every id has its result, which are written as the
// in-process batch writes them.
func queueBatchMain(ctx context.Context, cmd *cobra.Command, f *batchFlags, qf *queueFlags, path string, io stdio, sigs <-chan os.Signal) int {
	fail := func(err error) int {
		code, _ := exitFor(err)
		writeErrorLine(io.err, err)
		return code
	}
	switch {
	case f.resume || f.retryFailed:
		return fail(&inputError{"--resume and --retry-failed are for the in-process batch: a queued batch keeps its results in PostgreSQL; run the same command again to follow it"})
	case cmd.Flags().Changed("concurrency"):
		return fail(&inputError{"--concurrency does not apply with --queue: give each worker its own (agentry worker -c N)"})
	case qf.noWait && f.output != "":
		return fail(&inputError{"--no-wait writes no results: leave out -o, and write them later with agentry batch results"})
	}
	if err := applyYolo(cmd, f.yolo, f.approvalMode); err != nil {
		return fail(err)
	}
	settings, err := loadBatchSettings(cmd, f)
	if err != nil {
		return fail(err)
	}
	for _, w := range settings.Warnings {
		fmt.Fprintf(io.err, "[WARNING] %s\n", w)
	}
	var data []byte
	if path == "-" {
		data, err = readAllLimited(io.in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return fail(&inputError{fmt.Sprintf("batch input: %v", err)})
	}
	items, err := batchItems(data)
	if err != nil {
		return fail(err)
	}
	if len(items) == 0 {
		return fail(&inputError{fmt.Sprintf("batch input %s has no prompt lines", path)})
	}
	snap, err := json.Marshal(queueSettings(cmd, f, settings.Workspace))
	if err != nil {
		return fail(err)
	}
	name := qf.name
	if name == "" {
		name = defaultBatchName(path, data, snap)
	}
	sum := sha256.Sum256(data)

	q, closeQ, err := openQueue(ctx, qf.dsn)
	if err != nil {
		return fail(err)
	}
	defer closeQ()
	res, err := q.Enqueue(ctx, batchq.Batch{Name: name, Digest: hex.EncodeToString(sum[:]), Settings: snap}, items)
	if err != nil {
		if errors.Is(err, batchq.ErrBatchConflict) {
			return fail(&inputError{err.Error()})
		}
		return fail(err)
	}
	if qf.noWait {
		fmt.Fprintln(io.out, name)
	}
	fmt.Fprintf(io.err, "Batch %s: %d lines; %d jobs enqueued, %d already queued, %d with their result.\n",
		name, len(items), res.Inserted, res.Duplicates, res.Finished)
	if qf.noWait {
		return runtime.ExitOK
	}
	st, code := followBatch(ctx, q, name, io, sigs)
	if code != runtime.ExitOK {
		return code
	}
	out := io.out
	if f.output != "" {
		file, err := os.OpenFile(f.output, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return fail(&inputError{fmt.Sprintf("-o: %v", err)})
		}
		defer file.Close()
		out = file
	}
	if _, err := writeQueuedResults(ctx, q, name, out); err != nil {
		return fail(err)
	}
	if st.Failed > 0 {
		return runtime.ExitGeneric
	}
	return runtime.ExitOK
}

// readAllLimited reads stdin whole, refusing more than a batch should be.
func readAllLimited(r io.Reader) ([]byte, error) {
	const limit = 1 << 30
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && len(data) > limit {
		err = errors.New("stdin is larger than 1 GB: give a file")
	}
	return data, err
}

// followBatch draws the progress bar until every id of batch has its
// result; a signal stops following (exit 130) and leaves the batch queued.
func followBatch(ctx context.Context, q *batchq.Queue, name string, io stdio, sigs <-chan os.Signal) (batchq.Status, int) {
	prog := newBatchProgress(io.err)
	tick := time.NewTicker(queuePollEvery)
	defer tick.Stop()
	idleSince, hinted := time.Now(), false
	for {
		st, err := q.Status(ctx, name)
		if err != nil {
			writeErrorLine(io.err, err)
			return st, runtime.ExitGeneric
		}
		prog.total = st.Total
		prog.update(batchCounts{ok: st.Done, failed: st.Failed}, st.Finished())
		if st.Finished() {
			prog.finish()
			return st, runtime.ExitOK
		}
		if st.Running > 0 {
			idleSince = time.Now()
		} else if !hinted && time.Since(idleSince) > queueIdleHint {
			hinted = true
			prog.finish()
			fmt.Fprintf(io.err, "Waiting for workers: nothing of batch %s is running; start some with agentry worker --queue DSN.\n", name)
		}
		select {
		case <-tick.C:
		case <-sigs:
			prog.finish()
			fmt.Fprintf(io.err, "Stopped following batch %s (%d of %d done); it stays queued: run the same command again to follow it, or agentry batch results to write its results.\n",
				name, st.Done+st.Failed, st.Total)
			return st, runtime.ExitCancelled
		case <-ctx.Done():
			return st, runtime.ExitCancelled
		}
	}
}

// writeQueuedResults writes batch's result lines in input order, an id
// whose job River discarded as an error line; it returns how many lines
// it wrote.
func writeQueuedResults(ctx context.Context, q *batchq.Queue, name string, out io.Writer) (int, error) {
	w := bufio.NewWriterSize(out, 64<<10)
	n := 0
	for r, err := range q.Results(ctx, name) {
		if err != nil {
			return n, err
		}
		line := r.Line
		if line == nil {
			res := newBatchResult(r.ID).failed(runtime.ExitGeneric, "JobDiscardedError",
				fmt.Sprintf("the prompt's job was given up after %d attempts: %s", r.Attempts, r.Error))
			if line, err = encodeResult(res); err != nil {
				return n, err
			}
		}
		if _, err := w.Write(line); err != nil {
			return n, fmt.Errorf("writing results: %w", err)
		}
		n++
	}
	if err := w.Flush(); err != nil {
		return n, fmt.Errorf("writing results: %w", err)
	}
	return n, nil
}

// loadBatchSettings loads the batch's settings from its flags, as
// batchMain does, to refuse bad ones before anything is enqueued.
func loadBatchSettings(cmd *cobra.Command, f *batchFlags) (*config.Settings, error) {
	return config.Load(config.LoadOptions{
		Workspace: f.workspace, Flags: cmd.Flags(), FlagKeys: batchFlagKeys(), TrustWorkspace: f.trustWorkspace,
	})
}

// warnLogger logs warnings and errors to w.
func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// newBatchStatusCommand is "agentry batch status --queue DSN BATCH".
func newBatchStatusCommand(io stdio, exit *int) *cobra.Command {
	var dsn string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --queue DSN BATCH",
		Short: "Show the progress of a batch on a queue",
		Long: `Show how many of a queued batch's prompts are queued, running, done
(succeeded), failed (an error result, or a job given up after its
attempts) and retried (more than one attempt). --json prints the counts,
the batch's creation time and its settings snapshot as one JSON object.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = batchStatusMain(cmd.Context(), dsn, args[0], asJSON, io)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "queue", "", "the queue's PostgreSQL `DSN`")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// openBatchOnQueue opens the queue at dsn and reads batch name's status;
// an unknown batch is the user's error.
func openBatchOnQueue(ctx context.Context, dsn, name string) (*batchq.Queue, batchq.Status, func(), error) {
	q, closeQ, err := openQueue(ctx, dsn)
	if err != nil {
		return nil, batchq.Status{}, nil, err
	}
	st, err := q.Status(ctx, name)
	if errors.Is(err, batchq.ErrUnknownBatch) {
		err = &inputError{fmt.Sprintf("no batch %q on this queue", name)}
	}
	if err != nil {
		closeQ()
		return nil, batchq.Status{}, nil, err
	}
	return q, st, closeQ, nil
}

func batchStatusMain(ctx context.Context, dsn, name string, asJSON bool, io stdio) int {
	fail := func(err error) int {
		code, _ := exitFor(err)
		writeErrorLine(io.err, err)
		return code
	}
	_, st, closeQ, err := openBatchOnQueue(ctx, dsn, name)
	if err != nil {
		return fail(err)
	}
	defer closeQ()
	if asJSON {
		b, err := json.Marshal(st)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(io.out, "%s\n", b)
		return runtime.ExitOK
	}
	state := "running"
	if st.Finished() {
		state = "finished"
	}
	fmt.Fprintf(io.out, "batch %s (%s, created %s)\n", st.Batch, state, st.Created.Local().Format(time.DateTime))
	fmt.Fprintf(io.out, "total %d  queued %d  running %d  done %d  failed %d  retried %d\n",
		st.Total, st.Queued, st.Running, st.Done, st.Failed, st.Retried)
	return runtime.ExitOK
}

// newBatchResultsCommand is "agentry batch results --queue DSN BATCH".
func newBatchResultsCommand(io stdio, exit *int) *cobra.Command {
	var dsn, output string
	cmd := &cobra.Command{
		Use:   "results --queue DSN BATCH [-o FILE]",
		Short: "Write the result lines of a batch on a queue",
		Long: `Write a queued batch's result lines, one per id in input order, as the
in-process batch writes them. An id whose job was given up after its
attempts gets an error line (JobDiscardedError). The exit code is 0 when
every prompt succeeded, 1 when any failed or some have no result yet (the
lines written are those that have one).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = batchResultsMain(cmd.Context(), dsn, args[0], output, io)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "queue", "", "the queue's PostgreSQL `DSN`")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the results to `FILE` (default stdout)")
	return cmd
}

func batchResultsMain(ctx context.Context, dsn, name, output string, io stdio) int {
	fail := func(err error) int {
		code, _ := exitFor(err)
		writeErrorLine(io.err, err)
		return code
	}
	q, st, closeQ, err := openBatchOnQueue(ctx, dsn, name)
	if err != nil {
		return fail(err)
	}
	defer closeQ()
	out := io.out
	if output != "" {
		file, err := os.OpenFile(output, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return fail(&inputError{fmt.Sprintf("-o: %v", err)})
		}
		defer file.Close()
		out = file
	}
	n, err := writeQueuedResults(ctx, q, name, out)
	if err != nil {
		return fail(err)
	}
	switch {
	case n < st.Total:
		fmt.Fprintf(io.err, "Batch %s is not finished: %d of %d ids have their result (%d queued, %d running).\n",
			name, n, st.Total, st.Queued, st.Running)
		return runtime.ExitGeneric
	case st.Failed > 0:
		return runtime.ExitGeneric
	}
	return runtime.ExitOK
}
