package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/agents/remote"
	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runstats"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/subagents"
	"github.com/agentry-dev/agentry/telemetry"
)

// Batch result statuses.
const (
	batchSuccess   = "success"
	batchError     = "error"
	batchCancelled = "cancelled"
)

const (
	// defaultBatchConcurrency is how many prompts run at once by default:
	// enough to hide model latency, few enough to stay under a free tier's
	// per-minute request quota most of the time.
	defaultBatchConcurrency = 4
	// maxBatchLine bounds one input line, as run bounds stdin: a prompt
	// larger than that belongs in a file the agent reads.
	maxBatchLine = maxStdinBytes
	// progressEvery throttles the progress bar's redraws.
	progressEvery = 100 * time.Millisecond
	// progressWidth is the number of cells of the progress bar.
	progressWidth = 20
)

// batchFields returns the fields of an input line, in the order error
// messages list them (a function, so that no package state can change).
func batchFields() []string {
	return []string{"id", "prompt", "model", "agent", "workspace", "approval_mode"}
}

type batchFlags struct {
	model          string
	approvalMode   string
	yolo           bool
	allowedTools   []string
	workspace      string
	trustWorkspace bool
	concurrency    int
	output         string
	resume         bool
	retryFailed    bool
}

// batchFlagKeys maps batch's flags to settings keys, as flagKeys does
// run's. It is a function so that no caller can change run's or batch's
// mapping for the other.
func batchFlagKeys() map[string]string {
	return withPolicyFlags(map[string]string{
		"model":         "model.name",
		"approval-mode": "general.defaultApprovalMode",
		"allowed-tools": "tools.allowed",
	})
}

func newBatchCommand(io stdio, sigs <-chan os.Signal, exit *int) *cobra.Command {
	f := &batchFlags{}
	qf := &queueFlags{}
	cmd := &cobra.Command{
		Use:   "batch FILE.jsonl",
		Short: "Run the agent on many prompts from a JSON lines file",
		Long: `Run the agent once on each prompt of a JSON lines file ("-" for stdin),
several at a time, and write one JSON result line per prompt as it finishes.

Each input line is an object: {"id": "…", "prompt": "…"} with optional
"model", "workspace" (relative to -w, and inside it), "approval_mode" and "agent": the
name of a subagent ("agentry agents list") that takes the prompt itself;
its result is the response, and a subagent that ends at a limit or without
complete_task gives an error result.
Blank lines are skipped; a bad line gives an error result and the rest run.

Each result line is {"id", "status": "success"|"error", "response", "usage",
"error" (unless success), "duration_ms"}. Every prompt runs in its own
in-memory session; the prompts share one model availability state, so when a
model runs out of quota the batch falls back once, not once per prompt.

A replay: model replays its file from the start for each prompt. A line
whose id an earlier line has is not run: its error result is named
line-N.

With --resume, ids already in the -o file are skipped and new results are
appended; a line cut short by a crash is removed first. With
--retry-failed too, the ids whose result is an error run again and their
lines are replaced, so the file keeps one line per id. Ctrl-C stops the
batch: running prompts are aborted and not written, so --resume runs them
again; the exit code is then 130. Otherwise it is 0 when every prompt
succeeded and 1 when any failed.

With --queue DSN the prompts are enqueued on a PostgreSQL job queue instead
(unique by batch and id: running the same command again enqueues nothing
twice) and run by "agentry worker --queue DSN" processes on any number of
machines; this command prints the batch's name (--batch, default the file's
name and a hash of its content and flags), follows its progress until every
id has its result and writes the result lines, one per id in input order.
--no-wait prints the name on stdout and exits. "agentry batch status" and
"agentry batch results" show a queued batch's progress and write its lines.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case qf.dsn != "" || cmd.Flags().Changed("queue"):
				*exit = queueBatchMain(cmd.Context(), cmd, f, qf, args[0], io, sigs)
			case qf.name != "" || qf.noWait:
				writeErrorLine(io.err, &inputError{"--batch and --no-wait go with --queue DSN"})
				*exit = runtime.ExitInput
			default:
				*exit = batchMain(cmd.Context(), cmd, f, args[0], io, sigs)
			}
			return nil
		},
	}
	cmd.AddCommand(newBatchStatusCommand(io, exit), newBatchResultsCommand(io, exit))
	fl := cmd.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "the default model: gemini-2.5-flash, flash, openai:<model>, replay:<file.jsonl> …")
	fl.BoolVarP(&f.yolo, "yolo", "y", false, "approve every tool call (same as --approval-mode yolo)")
	fl.StringVar(&f.approvalMode, "approval-mode", "", "the default approval mode: plan, default, auto_edit or yolo (default default)")
	fl.StringSliceVar(&f.allowedTools, "allowed-tools", nil, allowedToolsUsage)
	addPolicyFlags(fl)
	fl.StringVarP(&f.workspace, "workspace", "w", "", "the default workspace directory (default the current directory)")
	fl.BoolVar(&f.trustWorkspace, "trust-workspace", false, "trust the workspaces of this batch: read their settings and .env")
	fl.IntVarP(&f.concurrency, "concurrency", "c", defaultBatchConcurrency, "how many prompts run at once")
	fl.StringVarP(&f.output, "output", "o", "", "write the results to `FILE` (default stdout)")
	fl.BoolVar(&f.resume, "resume", false, "skip the ids already in the -o file and append to it")
	fl.BoolVar(&f.retryFailed, "retry-failed", false, "with --resume: run the ids whose result in the -o file is an error again, replacing their lines")
	fl.StringVar(&qf.dsn, "queue", "", "enqueue the prompts on the PostgreSQL job queue at `DSN` for agentry worker processes")
	fl.StringVar(&qf.name, "batch", "", "with --queue: the batch's `NAME` (default the file's name and a hash of its content and flags)")
	fl.BoolVar(&qf.noWait, "no-wait", false, "with --queue: print the batch's name and exit once it is enqueued")
	return cmd
}

// batchRequest is one valid input line.
type batchRequest struct {
	line         int
	ID           string
	Prompt       string
	Model        string
	Agent        string
	Workspace    string
	ApprovalMode string
}

// batchResult is one output line. The field order is the line's.
type batchResult struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	Response   string     `json:"response"`
	Usage      batchUsage `json:"usage"`
	Error      *batchErr  `json:"error,omitempty"`
	DurationMs int64      `json:"duration_ms"`
}

// batchUsage is a prompt's token usage, in stream-json's terms.
type batchUsage struct {
	InputTokens  int                                   `json:"input_tokens"`
	OutputTokens int                                   `json:"output_tokens"`
	TotalTokens  int                                   `json:"total_tokens"`
	Models       map[string]runstats.ModelStreamTokens `json:"models"`
}

// batchErr is why a prompt did not succeed, with the exit code and error
// class `agentry run` would have given it.
type batchErr struct {
	Type     string `json:"type"`
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code"`
}

// failed turns r into an error result.
func (r batchResult) failed(code int, errType, msg string) batchResult {
	r.Status = batchError
	r.Error = &batchErr{Type: errType, Message: stripANSI(msg), ExitCode: code}
	return r
}

// newBatchResult is an empty result for id, usage included, so that every
// line has the same shape.
func newBatchResult(id string) batchResult {
	return batchResult{ID: id, Usage: batchUsage{Models: map[string]runstats.ModelStreamTokens{}}}
}

// inputFailure is the error result of a bad input line.
func inputFailure(id, msg string) batchResult {
	return newBatchResult(id).failed(runtime.ExitInput, "FatalInputError", msg)
}

// encodeResult is r as one JSON line. Like the other JSON outputs it
// leaves <, > and & unescaped.
func encodeResult(r batchResult) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding the result of %q: %w", r.ID, err)
	}
	return b.Bytes(), nil
}

// readBatchLine reads input line n (1-based): its request, or the error
// result a bad line gets; blank reports a line to skip. A first line's BOM
// (from an editor) is dropped.
func readBatchLine(line []byte, n int, tooLong bool, seen map[string]int) (req batchRequest, bad *batchResult, blank bool) {
	if n == 1 {
		line = bytes.TrimPrefix(line, []byte("\ufeff"))
	}
	switch {
	case tooLong:
		r := inputFailure("line-"+strconv.Itoa(n), fmt.Sprintf("line %d: longer than %d MB", n, maxBatchLine>>20))
		return batchRequest{}, &r, false
	case len(bytes.TrimSpace(line)) == 0:
		return batchRequest{}, nil, true
	}
	req, bad = parseBatchLine(line, n, seen)
	return req, bad, false
}

// parseBatchLine parses input line n (from 1). It returns the request, or
// the error result that stands for a bad line, naming every problem of
// the line: its id is the line's id when one can be read, else line-N.
// seen maps the ids of the earlier lines to their line numbers; a
// readable id is added to it, valid line or not, so that a later line
// cannot reuse the id of a failed one.
func parseBatchLine(line []byte, n int, seen map[string]int) (batchRequest, *batchResult) {
	bad := func(id string, problems []string) (batchRequest, *batchResult) {
		r := inputFailure(id, fmt.Sprintf("line %d: %s", n, strings.Join(problems, "; ")))
		return batchRequest{}, &r
	}
	lineID := "line-" + strconv.Itoa(n)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return bad(lineID, []string{fmt.Sprintf("not a JSON object: %v", err)})
	}
	if raw == nil {
		return bad(lineID, []string{"not a JSON object: null"})
	}
	known := batchFields()
	fields := map[string]string{}
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(known, k) {
			problems = append(problems, fmt.Sprintf("unknown field %q (the fields are %s)", k, strings.Join(known, ", ")))
			continue
		}
		var s string
		if err := json.Unmarshal(raw[k], &s); err != nil {
			problems = append(problems, fmt.Sprintf("%q must be a string", k))
			continue
		}
		fields[k] = s
	}
	// The id names the error result whenever it can, so that a user can
	// tell which request failed.
	id, hasID := fields["id"]
	_, gaveID := raw["id"]
	switch {
	case !gaveID:
		problems = append(problems, `missing "id"`)
	case hasID && strings.TrimSpace(id) == "":
		problems = append(problems, `"id" is empty`)
	}
	if strings.TrimSpace(id) == "" {
		id = lineID
	} else if first, dup := seen[id]; dup {
		// The id has its result, from its first line: this line's error
		// goes under the line's name, so that no id has two results.
		return bad(lineID, []string{fmt.Sprintf("duplicate id %q: line %d has it already; this line is not run", id, first)})
	} else {
		seen[id] = n
	}
	req := batchRequest{
		line: n, ID: id, Prompt: fields["prompt"], Model: fields["model"], Agent: fields["agent"],
		Workspace: fields["workspace"], ApprovalMode: fields["approval_mode"],
	}
	if _, ok := raw["prompt"]; !ok {
		problems = append(problems, `missing "prompt"`)
	} else if _, isString := fields["prompt"]; isString && strings.TrimSpace(req.Prompt) == "" {
		problems = append(problems, `"prompt" is empty`)
	}
	if req.ApprovalMode != "" && config.ApprovalRank(req.ApprovalMode) < 0 {
		problems = append(problems, fmt.Sprintf("unknown approval_mode %q (want plan, default, auto_edit or yolo)", req.ApprovalMode))
	}
	if req.Model != "" {
		if _, err := llm.ParseModel(req.Model); err != nil {
			problems = append(problems, fmt.Sprintf("model: %v", err))
		}
	}
	if len(problems) > 0 {
		return bad(id, problems)
	}
	return req, nil
}

// readLine reads one line without its newline. A line longer than limit
// is read to its end but not kept: tooLong reports it. err is io.EOF only
// when nothing was left to read.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(line) > 0 || tooLong):
			return line, tooLong, nil
		default:
			return nil, false, err
		}
	}
}

// scanResults reads an output file that --resume continues: it returns
// the ids of its result lines, each with whether its (last) result is a
// success, and the length of its complete lines. A last line without its
// newline was cut short by a crash and is left out, so its prompt runs
// again; any other line that is not a result is an error, since appending
// to a file that is not ours would corrupt it.
func scanResults(r io.Reader) (done map[string]bool, complete int64, err error) {
	done = map[string]bool{}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return done, complete, nil // line, if any, is the torn one
		}
		if err != nil {
			return nil, 0, err
		}
		complete += int64(len(line))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		res, err := readStoredResult(line)
		if err != nil {
			return nil, 0, &inputError{fmt.Sprintf("--resume: line %d of the output file is not a batch result: %v", n, err)}
		}
		done[res.id] = res.status == batchSuccess
	}
}

// storedResult is what --resume reads of a result line.
type storedResult struct{ id, status string }

func readStoredResult(line []byte) (storedResult, error) {
	var res struct {
		ID     *string `json:"id"`
		Status string  `json:"status"`
	}
	if err := json.Unmarshal(line, &res); err != nil {
		return storedResult{}, err
	}
	if res.ID == nil {
		return storedResult{}, errors.New(`no "id"`)
	}
	return storedResult{*res.ID, res.Status}, nil
}

// openBatchOutput opens the -o file: truncated, or with --resume read for
// the ids it holds, cut back to its last complete line and opened for
// appending. With retryFailed, the lines of the ids whose result is an
// error are removed first (the file is rewritten whole and renamed over
// the old one, so a crash leaves one or the other), and those ids are not
// done: their prompts run again and append their new results, so the file
// keeps one line per id.
func openBatchOutput(path string, resume, retryFailed bool) (*os.File, map[string]bool, error) {
	if !resume {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, nil, &inputError{fmt.Sprintf("-o: %v", err)}
		}
		return f, map[string]bool{}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, &inputError{fmt.Sprintf("-o: %v", err)}
	}
	results, complete, err := scanResults(f)
	if err == nil {
		err = f.Truncate(complete)
	}
	if err == nil && retryFailed && slices.Contains(slices.Collect(maps.Values(results)), false) {
		f.Close()
		if err = dropFailedResults(path); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--retry-failed: rewriting %s: %w", path, err)
		}
	}
	if err != nil {
		f.Close()
		var ie *inputError
		if errors.As(err, &ie) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("--resume: reading %s: %w", path, err)
	}
	done := map[string]bool{}
	for id, ok := range results {
		if ok || !retryFailed {
			done[id] = true
		}
	}
	return f, done, nil
}

// dropFailedResults rewrites the result file at path without the lines
// whose status is not a success: into a temporary file beside it, then
// renamed over it.
func dropFailedResults(path string) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 64<<10)
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, rerr := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			res, err := readStoredResult(line)
			if err != nil {
				return err // scanResults read it a moment ago
			}
			if res.status != batchSuccess {
				continue
			}
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// countLines counts the non-blank lines of the file at path, for the
// progress bar's total; 0 when it cannot tell.
func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	n, blank := 0, true
	for {
		chunk, err := r.ReadSlice('\n')
		if blank && len(bytes.TrimSpace(chunk)) > 0 {
			blank = false
		}
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			if !blank {
				n++
			}
			blank = true
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return n
		}
	}
}

// batchSpace is what the prompts of one workspace share: the settings,
// the model resolver (one genai client for the whole batch; replay models
// are each prompt's own, see promptResolver) and the telemetry.
type batchSpace struct {
	once     sync.Once
	settings *config.Settings
	// agents are the workspace's subagent definitions, read once for
	// every prompt; never nil, so that no session reads them again.
	agents   []agents.Definition
	policies *compose.Policies // the workspace's policies, loaded once
	resolver runtime.ModelResolver
	tel      *telemetry.Telemetry
	closeTel func() error
	err      error
	// toolsChecked makes the workspace's first session check the allow
	// rules, so that a misspelt tool is reported once, not per prompt.
	toolsChecked sync.Once
}

// batch runs the prompts of one input.
type batch struct {
	flags  *batchFlags
	load   func(workspace string) (*config.Settings, error)
	base   *config.Settings
	avail  *routing.Availability
	log    *slog.Logger
	stderr io.Writer

	mu     sync.Mutex
	spaces map[string]*batchSpace
}

func batchMain(ctx context.Context, cmd *cobra.Command, f *batchFlags, path string, io stdio, sigs <-chan os.Signal) int {
	fail := func(err error) int {
		code, _ := exitFor(err)
		writeErrorLine(io.err, err)
		return code
	}
	if f.concurrency < 1 {
		return fail(&inputError{fmt.Sprintf("--concurrency must be at least 1, not %d", f.concurrency)})
	}
	if f.resume && f.output == "" {
		return fail(&inputError{"--resume needs -o FILE: it continues the results already in that file"})
	}
	if f.retryFailed && !f.resume {
		return fail(&inputError{"--retry-failed goes with --resume -o FILE: it runs again the ids whose result in FILE is an error"})
	}
	if err := applyYolo(cmd, f.yolo, f.approvalMode); err != nil {
		return fail(err)
	}
	load := func(workspace string) (*config.Settings, error) {
		return config.Load(config.LoadOptions{
			Workspace: workspace, Flags: cmd.Flags(), FlagKeys: batchFlagKeys(), TrustWorkspace: f.trustWorkspace,
		})
	}
	settings, err := load(f.workspace)
	if err != nil {
		return fail(err)
	}
	for _, w := range settings.Warnings {
		fmt.Fprintf(io.err, "[WARNING] %s\n", w)
	}

	var in *bufio.Reader
	if path == "-" {
		in = bufio.NewReaderSize(io.in, 64<<10)
	} else {
		file, err := os.Open(path)
		if err != nil {
			return fail(&inputError{fmt.Sprintf("batch input: %v", err)})
		}
		defer file.Close()
		in = bufio.NewReaderSize(file, 64<<10)
	}
	out, done := io.out, map[string]bool{}
	if f.output != "" {
		file, d, err := openBatchOutput(f.output, f.resume, f.retryFailed)
		if err != nil {
			return fail(err)
		}
		defer file.Close()
		out, done = file, d
	}

	prog := newBatchProgress(io.err)
	if prog.enabled && path != "-" {
		prog.total = countLines(path)
	}
	avail, closeAvail, err := newAvailability(ctx, settings, slog.Default())
	if err != nil {
		return fail(err)
	}
	defer closeAvail()
	b := &batch{
		flags: f, load: load, base: settings, stderr: io.err,
		// One availability for the whole batch: a model out of quota is
		// skipped by every later prompt instead of being tried by each.
		avail:  avail,
		log:    slog.Default(),
		spaces: map[string]*batchSpace{},
	}
	defer b.close()
	return b.run(ctx, in, out, done, prog, sigs)
}

// close flushes and shuts down the telemetry the workspaces share.
func (b *batch) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sp := range b.spaces {
		if sp.closeTel != nil {
			if err := sp.closeTel(); err != nil {
				b.log.Warn("telemetry shutdown failed", "err", err)
			}
		}
	}
}

// batchCounts is what the writer tallied.
type batchCounts struct {
	ok, failed, cancelled int
}

// run reads the input, runs its prompts on f.concurrency workers and
// writes their results, one whole line at a time, from this goroutine
// alone. It returns the exit code.
func (b *batch) run(parent context.Context, in *bufio.Reader, out io.Writer, done map[string]bool, prog *batchProgress, sigs <-chan os.Signal) int {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)

	// Ctrl-C stops the batch (exit 130, results so far kept); a second
	// one exits at once.
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-sigs:
			cancel(runtime.ErrAborted)
		case <-finished:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(b.stderr, "\nForced exit.")
			os.Exit(runtime.ExitCancelled)
		case <-finished:
		}
	}()

	// Unbuffered: the reader stays one line ahead of the workers, so a
	// large input is never held in memory.
	jobs := make(chan batchRequest)
	results := make(chan batchResult, b.flags.concurrency)
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		readErr = b.read(ctx, in, done, prog, jobs, results)
	})
	for range b.flags.concurrency {
		wg.Go(func() {
			for req := range jobs {
				if ctx.Err() != nil {
					continue // drain: the reader stops on its own
				}
				results <- b.runOne(ctx, req)
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	var counts batchCounts
	var writeErr error
	for r := range results {
		switch {
		case r.Status == batchCancelled:
			// Not written: --resume runs it again.
			counts.cancelled++
			continue
		case writeErr != nil:
			continue
		}
		line, err := encodeResult(r)
		if err == nil {
			// One write per line: a crash leaves at most the last line
			// torn, which --resume removes.
			_, err = out.Write(line)
		}
		if err != nil {
			writeErr = fmt.Errorf("writing results: %w", err)
			cancel(writeErr)
			continue
		}
		if r.Status == batchSuccess {
			counts.ok++
		} else {
			counts.failed++
		}
		prog.update(counts, false)
	}
	prog.update(counts, true)
	prog.finish()

	switch {
	case errors.Is(context.Cause(ctx), runtime.ErrAborted):
		fmt.Fprintf(b.stderr, "Batch cancelled: %d succeeded, %d failed, %d stopped; run it again with --resume to finish it.\n",
			counts.ok, counts.failed, counts.cancelled)
		return runtime.ExitCancelled
	case writeErr != nil:
		writeErrorLine(b.stderr, writeErr)
		return runtime.ExitGeneric
	case readErr != nil:
		writeErrorLine(b.stderr, readErr)
		code, _ := exitFor(readErr)
		return code
	case counts.failed > 0:
		return runtime.ExitGeneric
	}
	return runtime.ExitOK
}

// read parses the input and hands out its prompts; bad lines become
// error results at once and lines whose id is done are skipped.
func (b *batch) read(ctx context.Context, in *bufio.Reader, done map[string]bool, prog *batchProgress, jobs chan<- batchRequest, results chan<- batchResult) error {
	seen := map[string]int{}
	for n := 1; ; n++ {
		line, tooLong, err := readLine(in, maxBatchLine)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the batch input: %w", err)
		}
		req, bad, blank := readBatchLine(line, n, tooLong, seen)
		if blank {
			continue
		}
		id := req.ID
		if bad != nil {
			id = bad.ID
		}
		if done[id] {
			prog.skip()
			continue
		}
		if bad != nil {
			select {
			case results <- *bad:
			case <-ctx.Done():
				return nil
			}
			continue
		}
		select {
		case jobs <- req:
		case <-ctx.Done():
			return nil
		}
	}
}

// lineWorkspace returns the directory of a line's workspace, relative to
// -w, symlinks resolved; "" for -w itself. It must lie inside -w: a line
// cannot send a prompt, and the trust --trust-workspace gives -w, to
// another directory (whose settings, hooks and .env would then run).
func (b *batch) lineWorkspace(req batchRequest) (string, error) {
	if req.Workspace == "" {
		return "", nil
	}
	base := b.base.Workspace
	p := req.Workspace
	if !filepath.IsAbs(p) {
		// Joined without cleaning: ".." after a symlink climbs from the
		// link's target, as the kernel (and EvalSymlinks) would.
		p = base + string(filepath.Separator) + p
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", &inputError{fmt.Sprintf("line %d: workspace %q in %s cannot be used: %v", req.line, req.Workspace, base, err)}
	}
	if !within(real, base) {
		return "", &inputError{fmt.Sprintf(
			"line %d: workspace %q resolves to %s, outside the batch's workspace %s: a line's workspace must lie inside -w; give a path inside it or run that directory's prompts with its own -w",
			req.line, req.Workspace, real, base)}
	}
	if real == base {
		return "", nil
	}
	// The resolved directory is what the prompt gets: the settings loader
	// resolves nothing further.
	return real, nil
}

// within reports whether the clean absolute path p is dir or lies below
// it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// space returns the shared state of a prompt's workspace (a directory
// from lineWorkspace, "" for -w), loading it the first time.
func (b *batch) space(ctx context.Context, key string) *batchSpace {
	b.mu.Lock()
	sp := b.spaces[key]
	if sp == nil {
		sp = &batchSpace{}
		b.spaces[key] = sp
	}
	b.mu.Unlock()
	sp.once.Do(func() {
		s := b.base
		if key != "" {
			s, sp.err = b.load(key)
			if sp.err != nil {
				return
			}
			for _, w := range s.Warnings {
				b.log.Warn(w, "workspace", s.Workspace)
			}
		}
		sp.settings = s
		var errs []error
		sp.agents, errs = compose.LoadAgents(s)
		for _, err := range errs {
			b.log.Warn("subagent definition left out", "err", err)
		}
		sp.policies = compose.LoadPolicies(s, false)
		for _, w := range sp.policies.Warnings {
			fmt.Fprintf(b.stderr, "[WARNING] %s\n", w)
		}
		sp.resolver = compose.NewResolver(s, nil, nil)
		sp.tel, sp.closeTel, sp.err = compose.OpenTelemetry(ctx, s, b.log)
	})
	return sp
}

// promptResolver is the model resolver of one prompt of a batch: a replay
// model replays its file from the start, for this prompt (and its
// subagents) alone, as it would for one "agentry run" — so a recording
// answers every prompt, in any order, at any concurrency. The other
// backends are the batch's shared ones.
type promptResolver struct {
	shared   runtime.ModelResolver
	settings *config.Settings

	mu  sync.Mutex
	own *llm.Resolver // made for the prompt's first replay model
}

func newPromptResolver(shared runtime.ModelResolver, s *config.Settings) *promptResolver {
	return &promptResolver{shared: shared, settings: s}
}

// Resolve implements runtime.ModelResolver.
func (r *promptResolver) Resolve(ctx context.Context, name string) (llm.Target, error) {
	ref, err := llm.ParseModel(name)
	if err != nil || (ref.Scheme != llm.SchemeReplay && ref.Scheme != llm.SchemeReplayNonStric) {
		return r.shared.Resolve(ctx, name)
	}
	r.mu.Lock()
	if r.own == nil {
		r.own = compose.NewResolver(r.settings, nil, nil)
	}
	own := r.own
	r.mu.Unlock()
	return own.Resolve(ctx, name)
}

// runOne runs one prompt in a session of its own and returns its result;
// the session is closed before it returns, so a finished prompt holds no
// memory.
func (b *batch) runOne(ctx context.Context, req batchRequest) (res batchResult) {
	start := time.Now()
	res = newBatchResult(req.ID)
	defer func() {
		res.DurationMs = time.Since(start).Milliseconds()
		if res.Status != batchSuccess && ctx.Err() != nil {
			// Whatever failed, the batch was stopping: run it again on
			// --resume rather than record a failure it did not earn.
			res.Status, res.Error = batchCancelled, nil
		}
	}()
	failWith := func(err error) batchResult {
		code, name := exitFor(err)
		return res.failed(code, name, err.Error())
	}
	ws, err := b.lineWorkspace(req)
	if err != nil {
		return failWith(err)
	}
	sp := b.space(ctx, ws)
	if sp.err != nil {
		return failWith(sp.err)
	}
	s := *sp.settings
	if req.Model != "" {
		s.Model.Name = req.Model
	}
	if req.ApprovalMode != "" {
		s.General.DefaultApprovalMode = req.ApprovalMode
	}
	// No session service: each prompt gets an in-memory one, dropped with
	// the session, so prompts never queue on the SQLite store's single
	// writer and the batch's memory does not grow with its length.
	sess, err := compose.FromSettings(ctx, &s, compose.Options{
		Availability: b.avail, Resolver: newPromptResolver(sp.resolver, sp.settings), Telemetry: sp.tel, Logger: b.log.With("id", req.ID),
		Agents: sp.agents, RemoteAgents: remote.Invokers, Policies: sp.policies,
	})
	if err != nil {
		return failWith(err)
	}
	defer sess.Close()
	sp.toolsChecked.Do(func() {
		if w := sess.AllowedToolsWarning(); w != "" {
			fmt.Fprintf(b.stderr, "[WARNING] %s\n", w)
		}
	})
	if req.Agent != "" {
		return b.runAgent(ctx, sess, req, res)
	}
	streamID, err := sess.Send(ctx, runtime.Send{Message: &runtime.SendMessage{Content: []runtime.ContentPart{runtime.TextPart(req.Prompt)}}})
	if err != nil {
		return failWith(err)
	}
	// Registered after Send, so a stop that came first still aborts the
	// stream (AfterFunc runs at once on a done context).
	stop := context.AfterFunc(ctx, func() { sess.Abort(runtime.ErrAborted) })
	defer stop()

	c := &batchCollector{metrics: runstats.New()}
	// The stream is followed to its agent_end even when the batch stops:
	// the abort above ends it promptly.
	for ev, err := range sess.Stream(context.WithoutCancel(ctx), streamID) {
		if err != nil {
			return failWith(err)
		}
		c.observe(ev)
	}
	return c.result(res)
}

// runAgent runs a line that names an agent: the agent itself takes the
// prompt, as invoke_agent would hand it over, and its result is the
// line's response.
func (b *batch) runAgent(ctx context.Context, sess *runtime.Session, req batchRequest, res batchResult) batchResult {
	sub, err := subagents.Run(ctx, sess, req.Agent, req.Prompt, nil)
	if err != nil {
		code, name := exitFor(err)
		return res.failed(code, name, err.Error())
	}
	m := runstats.New()
	for _, ev := range sub.Usage {
		m.Observe(ev)
	}
	c := &batchCollector{metrics: m}
	res.Usage = c.usage()
	res.Response = stripANSI(sub.Result)
	switch sub.TerminateReason {
	case subagents.TerminateGoal:
		res.Status = batchSuccess
		return res
	case subagents.TerminateMaxTurns:
		return res.failed(runtime.ExitTurnLimit, "FatalTurnLimitedError", sub.Result)
	case subagents.TerminateAborted:
		res.Status = batchCancelled
		return res
	}
	// The error says how the agent ended; its message is the agent's
	// result, which says why.
	name := map[string]string{
		subagents.TerminateTimeout:        "SubagentTimeoutError",
		subagents.TerminateNoCompleteTask: "SubagentNoCompleteTaskError",
	}[sub.TerminateReason]
	return res.failed(runtime.ExitGeneric, firstNonEmpty(name, "SubagentError"), sub.Result)
}

// batchCollector folds a stream's events into a result, as the json
// output format does: the answer is the text after the last tool call.
type batchCollector struct {
	metrics  *runstats.Metrics
	response string
	fatal    *runtime.Event
	end      *runtime.AgentEnd
}

func (c *batchCollector) observe(ev runtime.Event) {
	c.metrics.Observe(ev)
	switch ev.Type {
	case runtime.EventMessage:
		if ev.Message.Role == runtime.RoleAgent {
			c.response += contentText(ev.Message.Content)
		}
	case runtime.EventToolRequest:
		c.response = ""
	case runtime.EventError:
		if ev.Error.Fatal {
			e := ev
			c.fatal = &e
		}
	case runtime.EventAgentEnd:
		c.end = ev.AgentEnd
	}
}

// result completes res from the stream, as printer.end maps a stream's
// end to an exit code: an abort is a cancelled prompt, a turn limit or a
// fatal error an error, any other end a success.
func (c *batchCollector) result(res batchResult) batchResult {
	res.Response = stripANSI(c.response)
	res.Usage = c.usage()
	if c.end == nil {
		return res.failed(runtime.ExitGeneric, "Error", "the agent's stream ended without an agent_end event")
	}
	switch c.end.Reason {
	case runtime.EndAborted:
		res.Status = batchCancelled
		return res
	case runtime.EndMaxTurns:
		return res.failed(runtime.ExitTurnLimit, "FatalTurnLimitedError", runtime.TurnLimitMessage)
	case runtime.EndFailed:
		if c.fatal == nil {
			return res.failed(runtime.ExitGeneric, "Error", "the agent stopped because of a failure")
		}
		code := metaInt(c.fatal.Meta, "exitCode")
		if code == 0 {
			code = runtime.ExitGeneric
		}
		name, _ := c.fatal.Meta["errorName"].(string)
		return res.failed(code, firstNonEmpty(name, "Error"), c.fatal.Error.Message)
	}
	res.Status = batchSuccess
	return res
}

func (c *batchCollector) usage() batchUsage {
	st := c.metrics.StreamStats(0)
	return batchUsage{InputTokens: st.InputTokens, OutputTokens: st.OutputTokens, TotalTokens: st.TotalTokens, Models: st.Models}
}

// batchProgress is the one-line progress bar on stderr, drawn only when
// stderr is a terminal so that logs and pipes get no control characters.
// Only the writer goroutine draws; skip is called by the reader.
type batchProgress struct {
	w       io.Writer
	enabled bool
	start   time.Time
	now     func() time.Time
	total   int // non-blank input lines; 0 when unknown
	skipped atomic.Int64
	last    time.Time
	drawn   bool
}

func newBatchProgress(w io.Writer) *batchProgress {
	return &batchProgress{w: w, enabled: isTerminal(w), start: time.Now(), now: time.Now}
}

// skip counts a line --resume skipped.
func (p *batchProgress) skip() { p.skipped.Add(1) }

// render is the bar's text, e.g. "[####----] 37/200  ok 35  err 2  4.1/s".
// Skipped lines count as done, so the bar reaches its end on a resumed
// batch too.
func (p *batchProgress) render(c batchCounts) string {
	skipped := int(p.skipped.Load())
	done := c.ok + c.failed + skipped
	rate := 0.0
	if secs := p.now().Sub(p.start).Seconds(); secs > 0 {
		rate = float64(c.ok+c.failed) / secs
	}
	var b strings.Builder
	if p.total > 0 {
		filled := min(progressWidth, progressWidth*done/p.total)
		fmt.Fprintf(&b, "[%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat("-", progressWidth-filled), done, p.total)
	} else {
		fmt.Fprintf(&b, "%d done", done)
	}
	fmt.Fprintf(&b, "  ok %d  err %d", c.ok, c.failed)
	if skipped > 0 {
		fmt.Fprintf(&b, "  skipped %d", skipped)
	}
	fmt.Fprintf(&b, "  %.1f/s", rate)
	return b.String()
}

// update redraws the bar in place, at most every progressEvery unless
// force.
func (p *batchProgress) update(c batchCounts, force bool) {
	if !p.enabled {
		return
	}
	now := p.now()
	if !force && now.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = now, true
	fmt.Fprintf(p.w, "\r\x1b[K%s", p.render(c))
}

// finish ends the bar's line, leaving the final counts on screen.
func (p *batchProgress) finish() {
	if p.enabled && p.drawn {
		fmt.Fprintln(p.w)
	}
}
