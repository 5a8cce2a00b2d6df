package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/pgtest"
)

// proc is an agentry process started in the background.
type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	exited chan struct{} // closed when Wait returned
}

// start starts agentry with args in e; the process is killed when the
// test ends if it is still running.
func (e *env) start(args ...string) *proc {
	e.t.Helper()
	p := &proc{cmd: e.cmd(args...), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	p.cmd.Stderr = &lockedWriter{w: p.stderr}
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	e.t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// wait waits for the process to end within limit and returns its exit
// code.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Fatalf("agentry %q did not end within %v; stderr:\n%s", p.cmd.Args[1:], limit, p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// lockedWriter serialises writes to a buffer read by the test.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// promptID finds a prompt's id in the text the model is sent.
var promptID = regexp.MustCompile(`q[0-9]{4}`)

// TestBatchQueueWorkerKilled: 500 prompts enqueued on PostgreSQL, run by
// three worker processes against the fake Gemini server, whose batch
// model is out of daily quota (the fleet falls back to flash once, for
// every worker) and which answers each prompt with its id (every tenth
// prompt's first call gets a capacity 429, retried); one worker is
// SIGKILLed once results exist, with prompts in flight. River's rescuer makes its jobs available again after the job
// timeout: the follower writes every id exactly once with its own answer,
// as "batch results" does, and the other workers stop gracefully on
// SIGTERM.
func TestBatchQueueWorkerKilled(t *testing.T) {
	dsn := pgtest.Schema(t, "batch queue", "e2e_batchq_")
	const n = 500
	var mu sync.Mutex
	calls := map[string]int{}
	var proCalls atomic.Int32
	srv := fakegemini.New(t, fakegemini.WithResponder(func(r *fakegemini.Request) (fakegemini.Step, bool) {
		id := promptID.FindString(r.LastUserText())
		if id == "" {
			return fakegemini.Step{}, false
		}
		if r.Model == "gemini-2.5-pro" {
			// The batch's model is out of daily quota: the fleet falls
			// back to flash.
			proCalls.Add(1)
			return fakegemini.RateLimitPerDay(), true
		}
		mu.Lock()
		calls[id]++
		first := calls[id] == 1
		mu.Unlock()
		if num, _ := strconv.Atoi(id[1:]); first && num%10 == 0 {
			return capacity429(10 * time.Millisecond), true
		}
		// Slow enough that every worker has prompts in flight.
		return fakegemini.Slow(fakegemini.Text("answer for ", id), 40*time.Millisecond), true
	}))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"model": {"fallbackChains": [[
		{"model": "gemini-2.5-pro", "actions": {"terminal": "silent"}},
		{"model": "gemini-2.5-flash", "lastResort": true, "actions": {"terminal": "silent"}}
	]]}}`)
	var in []string
	for i := range n {
		id := fmt.Sprintf("q%04d", i)
		in = append(in, request(id, "Answer with the code "+id+".", ""))
	}
	input := e.batchInput(in...)
	out := filepath.Join(t.TempDir(), "out.jsonl")

	follower := e.start("batch", "--queue", dsn, "--batch", "kill", "-m", "gemini-2.5-pro", "-o", out, input)
	worker := func(c string) *proc {
		return e.start("worker", "--queue", dsn, "-c", c, "--job-timeout", "2s", "--rescue-after", "3s", "--grace", "5s")
	}

	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	count := func(q string) int {
		var c int
		if err := pool.QueryRow(t.Context(), q).Scan(&c); err != nil {
			return -1 // the tables may not exist yet
		}
		return c
	}
	// The first worker, one prompt at a time, meets the quota 429 and
	// falls back; the workers started after its first result know it
	// from the queue's database and never ask the exhausted model.
	workers := []*proc{worker("1")}
	waitFor(t, "a first result", 30*time.Second, func() bool {
		return count(`SELECT count(*) FROM agentry_batch_results WHERE batch = 'kill'`) >= 1
	})
	workers = append(workers, worker("4"), worker("4"))
	waitFor(t, "100 results", 30*time.Second, func() bool {
		return count(`SELECT count(*) FROM agentry_batch_results WHERE batch = 'kill'`) >= 100
	})
	victim := workers[1]
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	victim.wait(t, 10*time.Second)
	killedAt := time.Now()

	if code := follower.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("batch --queue: exit %d\nstderr:\n%s", code, follower.stderr)
	}
	t.Logf("all results %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := results(t, string(data))
	if len(got) != n {
		t.Errorf("%d results, want %d", len(got), n)
	}
	for i := range n {
		id := fmt.Sprintf("q%04d", i)
		if res := got[id]; res["status"] != "success" || res["response"] != "answer for "+id {
			t.Errorf("%s: %v", id, res)
		}
	}
	// The lines are in input order, as "batch results" writes them.
	r := e.run("", "batch", "results", "--queue", dsn, "kill")
	if r.code != 0 || r.stdout != string(data) {
		t.Errorf("batch results: exit %d, same lines as the follower's: %v\nstderr:\n%s", r.code, r.stdout == string(data), r.stderr)
	}
	var ids []string
	for _, l := range lines(t, r.stdout) {
		ids = append(ids, l["id"].(string))
	}
	for i, id := range ids {
		if want := fmt.Sprintf("q%04d", i); id != want {
			t.Errorf("line %d is %s, want %s", i+1, id, want)
			break
		}
	}

	// The killed worker's prompts took a second attempt.
	r = e.run("", "batch", "status", "--json", "--queue", dsn, "kill")
	var st struct{ Total, Queued, Running, Done, Failed, Retried int }
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("batch status --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if st.Total != n || st.Done != n || st.Failed != 0 || st.Queued != 0 || st.Running != 0 || st.Retried < 1 {
		t.Errorf("status = %+v, want %d done and at least one retried", st, n)
	}
	if w := count(`SELECT count(DISTINCT worker) FROM agentry_batch_results WHERE batch = 'kill'`); w != 3 {
		t.Errorf("results from %d workers, want 3", w)
	}

	if got := proCalls.Load(); got != 1 {
		t.Errorf("the exhausted model was called %d times, want once for the fleet", got)
	}
	survivors := []*proc{workers[0], workers[2]}
	for _, w := range survivors {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range survivors {
		if code := w.wait(t, 20*time.Second); code != 0 || !strings.Contains(w.stderr.String(), "worker stopped") {
			t.Errorf("worker after SIGTERM: exit %d\nstderr:\n%s", code, w.stderr)
		}
	}
}

// waitFor polls cond until it holds, failing t after limit (a hang
// guard).
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// BenchmarkBatchQueueReplay runs 1,000 replayed prompts (a tool call and
// an answer each) twice per iteration: by today's in-process batch with
// -c 12, and enqueued on PostgreSQL for three workers with -c 4 each
// (started before the clock runs), from the enqueue to the result file.
// It reports each one's ms per prompt and throughput, and the queue's
// overhead per job: the extra wall time per prompt, and the same in
// worker-slot time (times the 12 slots).
func BenchmarkBatchQueueReplay(b *testing.B) {
	const n, slots = 1000, 12
	dsn := pgtest.Schema(b, "batch queue", "bench_batchq_")
	home, ws := b.TempDir(), b.TempDir()
	replay := "replay:" + filepath.Join(repoRoot, "examples", "batch-replay.jsonl")
	var in strings.Builder
	for i := range n {
		in.WriteString(request(fmt.Sprintf("b%04d", i), "What files are in this workspace?", "") + "\n")
	}
	input := filepath.Join(b.TempDir(), "in.jsonl")
	if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	command := func(args ...string) *exec.Cmd {
		c := exec.Command(binary, args...)
		c.Dir = ws
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		return c
	}
	var workers []*exec.Cmd
	for range 3 {
		w := command("worker", "--queue", dsn, "-c", fmt.Sprint(slots/3))
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		workers = append(workers, w)
	}
	defer func() {
		for _, w := range workers {
			_ = w.Process.Signal(syscall.SIGTERM)
			_ = w.Wait()
		}
	}()
	out := filepath.Join(b.TempDir(), "out.jsonl")
	var local, queued time.Duration
	iter := 0
	for b.Loop() {
		iter++
		start := time.Now()
		if o, err := command("batch", "-c", fmt.Sprint(slots), "-m", replay, "-o", out, input).CombinedOutput(); err != nil {
			b.Fatalf("batch: %v\n%s", err, o)
		}
		local += time.Since(start)
		start = time.Now()
		if o, err := command("batch", "--queue", dsn, "--batch", fmt.Sprint("bench-", iter), "-m", replay, "-o", out, input).CombinedOutput(); err != nil {
			b.Fatalf("batch --queue: %v\n%s", err, o)
		}
		queued += time.Since(start)
		if data, err := os.ReadFile(out); err != nil || bytes.Count(data, []byte(`"status":"success"`)) != n {
			b.Fatalf("queued batch: not %d successes (%v)", n, err)
		}
	}
	perLocal := float64(local.Milliseconds()) / float64(iter*n)
	perQueued := float64(queued.Milliseconds()) / float64(iter*n)
	b.ReportMetric(perLocal, "local-ms/prompt")
	b.ReportMetric(perQueued, "queue-ms/prompt")
	b.ReportMetric(1000/perLocal, "local-prompts/s")
	b.ReportMetric(1000/perQueued, "queue-prompts/s")
	b.ReportMetric(perQueued-perLocal, "overhead-ms/prompt")
	b.ReportMetric((perQueued-perLocal)*slots, "overhead-slot-ms/job")
}

// TestBatchQueueErrorsAndReenqueue: the queue commands' errors are plain,
// and enqueueing the same file again (with --no-wait) names the same batch
// and inserts nothing.
func TestBatchQueueErrorsAndReenqueue(t *testing.T) {
	dsn := pgtest.Schema(t, "batch queue", "e2e_batchq_")
	e := newEnv(t)
	input := e.batchInput(request("a", "p", ""), `{"id": "b"}`)
	empty := e.writeFile("empty.jsonl", "\n\n")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"batch", "--queue", "postgres://u:secret@h:notaport/db", input}, 42, "not a PostgreSQL DSN"},
		{[]string{"batch", "--queue", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2", input}, 1, "cannot reach PostgreSQL at 127.0.0.1:1/db"},
		{[]string{"batch", "--queue", dsn, empty}, 42, "has no prompt lines"},
		{[]string{"batch", "status", "--queue", dsn, "nope"}, 42, `no batch "nope" on this queue`},
		{[]string{"batch", "results", "--queue", dsn, "nope"}, 42, `no batch "nope" on this queue`},
		{[]string{"batch", "--queue", dsn, "--resume", "-o", "x", input}, 42, "--resume and --retry-failed are for the in-process batch"},
		{[]string{"batch", "--no-wait", input}, 42, "go with --queue"},
	} {
		r := e.run("", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "secret") {
			t.Errorf("agentry %q: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
	first := e.run("", "batch", "--queue", dsn, "--no-wait", input)
	again := e.run("", "batch", "--queue", dsn, "--no-wait", input)
	name := strings.TrimSpace(first.stdout)
	if first.code != 0 || again.code != 0 || name == "" || strings.TrimSpace(again.stdout) != name {
		t.Fatalf("enqueued twice: %q (exit %d) and %q (exit %d)\n%s%s", first.stdout, first.code, again.stdout, again.code, first.stderr, again.stderr)
	}
	if !strings.Contains(first.stderr, "1 jobs enqueued, 0 already queued, 1 with their result") ||
		!strings.Contains(again.stderr, "0 jobs enqueued, 1 already queued, 1 with their result") {
		t.Errorf("enqueue counts:\n%s%s", first.stderr, again.stderr)
	}
	r := e.run("", "batch", "status", "--queue", dsn, name)
	if r.code != 0 || !strings.Contains(r.stdout, "total 2  queued 1  running 0  done 0  failed 1  retried 0") {
		t.Errorf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Unfinished: the bad line's result is written, and the exit code and
	// stderr say the rest is missing.
	r = e.run("", "batch", "results", "--queue", dsn, name)
	if got := results(t, r.stdout); r.code != 1 || len(got) != 1 || got["line-2"] == nil && got["b"] == nil || !strings.Contains(r.stderr, "1 of 2 ids have their result") {
		t.Errorf("results of an unfinished batch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBatchQueueWorkerSIGTERM: a worker told to stop while a prompt hangs
// waits its grace period, cancels the prompt and exits 0; River releases
// the job (the attempt not counted) and the next worker runs it: the id
// has one result, from the second model call.
func TestBatchQueueWorkerSIGTERM(t *testing.T) {
	dsn := pgtest.Schema(t, "batch queue", "e2e_batchq_")
	var mu sync.Mutex
	calls := 0
	srv := fakegemini.New(t, fakegemini.WithResponder(func(r *fakegemini.Request) (fakegemini.Step, bool) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			return fakegemini.Hang(), true
		}
		return fakegemini.Text("answered"), true
	}))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	r := e.run("", "batch", "--queue", dsn, "--batch", "term", "-m", "gemini-2.5-flash", "--no-wait", e.batchInput(request("h", "p", "")))
	if r.code != 0 {
		t.Fatalf("enqueue: exit %d\n%s", r.code, r.stderr)
	}
	w1 := e.start("worker", "--queue", dsn, "--grace", "1s")
	if _, err := srv.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := w1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := w1.wait(t, 20*time.Second); code != 0 || !strings.Contains(w1.stderr.String(), "cancelling them") {
		t.Fatalf("worker after SIGTERM: exit %d\nstderr:\n%s", code, w1.stderr)
	}
	w2 := e.start("worker", "--queue", dsn)
	follow := e.run("", "batch", "--queue", dsn, "--batch", "term", "-m", "gemini-2.5-flash", e.batchInput(request("h", "p", "")))
	got := results(t, follow.stdout)
	if follow.code != 0 || len(got) != 1 || got["h"]["response"] != "answered" {
		t.Errorf("follow: exit %d\n%s%s", follow.code, follow.stdout, follow.stderr)
	}
	r = e.run("", "batch", "status", "--queue", dsn, "term")
	mu.Lock()
	n := calls
	mu.Unlock()
	if !strings.Contains(r.stdout, "done 1  failed 0") || n != 2 {
		t.Errorf("%d model calls, want 2; status:\n%s%s\nw1:\n%s\nw2:\n%s\nresult: %s", n, r.stdout, r.stderr, w1.stderr, w2.stderr, follow.stdout)
	}
	_ = w2.cmd.Process.Signal(syscall.SIGTERM)
	w2.wait(t, 20*time.Second)
}
