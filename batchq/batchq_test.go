package batchq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentry-dev/agentry/internal/pgtest"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// newPool opens a pool on dsn, closed when t ends.
func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newQueue makes a queue on a schema of its own.
func newQueue(t *testing.T, cfg Config) *Queue {
	t.Helper()
	cfg.Pool = newPool(t, pgtest.Schema(t, "batch queue", "batchq_"))
	cfg.Logger = quiet()
	q, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// items are n prompts p1..pn, and a bad line (its result given) at the
// end.
func items(n int) []Item {
	var out []Item
	for i := 1; i <= n; i++ {
		req, _ := json.Marshal(map[string]string{"prompt": fmt.Sprint("question ", i)})
		out = append(out, Item{Seq: i, ID: fmt.Sprint("p", i), Request: req})
	}
	out = append(out, Item{Seq: n + 1, ID: "line-bad", Done: &Line{Status: StatusError, Line: []byte(`{"id":"line-bad","status":"error"}` + "\n")}})
	return out
}

func countJobs(t *testing.T, q *Queue, batch string) int {
	t.Helper()
	var n int
	if err := q.pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = $1 AND args @> jsonb_build_object('batch', $2::text)`,
		jobKind, batch).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnqueueTwiceInsertsTheSameJobs(t *testing.T) {
	q := newQueue(t, Config{})
	b := Batch{Name: "b1", Digest: "d1", Settings: json.RawMessage(`{"model":"m"}`)}
	got, err := q.Enqueue(t.Context(), b, items(5))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Enqueued{Inserted: 5, Finished: 1}); got != want {
		t.Errorf("first Enqueue = %+v, want %+v", got, want)
	}
	got, err = q.Enqueue(t.Context(), b, items(5))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Enqueued{Duplicates: 5, Finished: 1}); got != want {
		t.Errorf("second Enqueue = %+v, want %+v", got, want)
	}
	if n := countJobs(t, q, "b1"); n != 5 {
		t.Errorf("%d jobs, want 5", n)
	}
	// Another batch with the same ids has jobs of its own.
	if _, err := q.Enqueue(t.Context(), Batch{Name: "b2"}, items(5)); err != nil {
		t.Fatal(err)
	}
	if n := countJobs(t, q, "b2"); n != 5 {
		t.Errorf("b2: %d jobs, want 5", n)
	}
}

func TestEnqueueRefusesATakenName(t *testing.T) {
	q := newQueue(t, Config{})
	if _, err := q.Enqueue(t.Context(), Batch{Name: "b", Digest: "d1"}, items(2)); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]Batch{
		"digest":   {Name: "b", Digest: "d2"},
		"settings": {Name: "b", Digest: "d1", Settings: json.RawMessage(`{"model":"other"}`)},
	} {
		if _, err := q.Enqueue(t.Context(), b, items(2)); !errors.Is(err, ErrBatchConflict) {
			t.Errorf("%s: Enqueue = %v, want ErrBatchConflict", name, err)
		}
	}
	if n := countJobs(t, q, "b"); n != 2 {
		t.Errorf("%d jobs after refused enqueues, want 2", n)
	}
}

func TestResultStoredTwiceKeepsTheFirstLine(t *testing.T) {
	q := newQueue(t, Config{})
	ctx := t.Context()
	if _, err := q.Enqueue(ctx, Batch{Name: "b"}, items(1)); err != nil {
		t.Fatal(err)
	}
	first := Line{Status: StatusSuccess, Line: []byte(`{"id":"p1","first":true}` + "\n")}
	second := Line{Status: StatusError, Line: []byte(`{"id":"p1","first":false}` + "\n")}
	if stored, err := storeResult(ctx, q.pool, "b", "p1", 1, first, 1, "w1"); err != nil || !stored {
		t.Fatalf("first store = %v, %v", stored, err)
	}
	if stored, err := storeResult(ctx, q.pool, "b", "p1", 1, second, 2, "w2"); err != nil || stored {
		t.Fatalf("second store = %v, %v; want not stored", stored, err)
	}
	var lines []string
	for r, err := range q.Results(ctx, "b") {
		if err != nil {
			t.Fatal(err)
		}
		if r.ID == "p1" {
			lines = append(lines, string(r.Line))
			if r.Worker != "w1" || r.Attempts != 1 {
				t.Errorf("p1 from %s attempt %d, want w1 attempt 1", r.Worker, r.Attempts)
			}
		}
	}
	if !slices.Equal(lines, []string{string(first.Line)}) {
		t.Errorf("p1's lines = %q, want the first only", lines)
	}
}

func TestWorkerStatusAndResults(t *testing.T) {
	var mu sync.Mutex
	runs := map[string]int{}
	run := func(_ context.Context, job Job) (Line, error) {
		mu.Lock()
		runs[job.ID]++
		mu.Unlock()
		var req struct{ Prompt string }
		if err := json.Unmarshal(job.Request, &req); err != nil {
			return Line{}, err
		}
		if string(job.Settings) != `{"model": "m"}` {
			return Line{}, fmt.Errorf("settings %s", job.Settings)
		}
		status := StatusSuccess
		if job.ID == "p3" {
			status = StatusError // a model error: a result, not a retry
		}
		return Line{Status: status, Line: fmt.Appendf(nil, `{"id":%q,"status":%q,"response":%q}`+"\n", job.ID, status, req.Prompt)}, nil
	}
	q := newQueue(t, Config{Workers: 3, Run: run, ID: "w1"})
	ctx := t.Context()
	if _, err := q.Enqueue(ctx, Batch{Name: "b", Settings: json.RawMessage(`{"model":"m"}`)}, items(6)); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.Shutdown(context.Background(), 5*time.Second); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	var st Status
	proctest.Eventually(t, "every prompt's result", func() bool {
		var err error
		st, err = q.Status(ctx, "b")
		return err == nil && st.Finished()
	})
	want := Status{Batch: "b", Created: st.Created, Settings: st.Settings, Total: 7, Done: 5, Failed: 2}
	if fmt.Sprint(st) != fmt.Sprint(want) {
		t.Errorf("Status = %+v, want %+v", st, want)
	}
	var ids []string
	for r, err := range q.Results(ctx, "b") {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		switch r.ID {
		case "p3":
			if r.Status != StatusError {
				t.Errorf("p3: status %s, want error", r.Status)
			}
		case "p2":
			if want := `{"id":"p2","status":"success","response":"question 2"}` + "\n"; string(r.Line) != want {
				t.Errorf("p2: line %q, want %q", r.Line, want)
			}
			if r.Worker != "w1" || r.Attempts != 1 {
				t.Errorf("p2: worker %q attempt %d, want w1 1", r.Worker, r.Attempts)
			}
		}
	}
	if want := []string{"p1", "p2", "p3", "p4", "p5", "p6", "line-bad"}; !slices.Equal(ids, want) {
		t.Errorf("Results ids = %q, want %q", ids, want)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range runs {
		if n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
}

func TestUnknownBatch(t *testing.T) {
	q := newQueue(t, Config{})
	if _, err := q.Status(t.Context(), "nope"); !errors.Is(err, ErrUnknownBatch) {
		t.Errorf("Status = %v, want ErrUnknownBatch", err)
	}
	for _, err := range q.Results(t.Context(), "nope") {
		if !errors.Is(err, ErrUnknownBatch) {
			t.Errorf("Results = %v, want ErrUnknownBatch", err)
		}
	}
}

// TestMigrateConcurrently: three processes' worth of connections migrate
// one fresh schema at once; each version is applied once and all succeed.
func TestMigrateConcurrently(t *testing.T) {
	dsn := pgtest.Schema(t, "batch queue", "batchq_")
	pools := []*pgxpool.Pool{newPool(t, dsn), newPool(t, dsn), newPool(t, dsn)}
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, p := range pools {
		wg.Go(func() {
			<-start
			errs[i] = Migrate(t.Context(), p)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate #%d: %v", i, err)
		}
	}
	var versions, riverVersions int
	if err := pools[0].QueryRow(t.Context(), `SELECT count(*) FROM agentry_batchq_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != len(migrations()) {
		t.Errorf("%d agentry versions recorded, want %d", versions, len(migrations()))
	}
	if err := pools[0].QueryRow(t.Context(), `SELECT count(*) FROM river_migration`).Scan(&riverVersions); err != nil {
		t.Fatal(err)
	}
	if riverVersions == 0 {
		t.Error("no River migration recorded")
	}
	// A later start finds nothing to do.
	if err := Migrate(t.Context(), pools[1]); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
}
