package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/pgtest"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// fakeTasks is a task store of unfinished contexts and task ids.
type fakeTasks struct {
	mu         sync.Mutex
	unfinished []string
	tasks      map[string]string // task id → context id
	failed     []string          // contexts, in the order failed
}

func (f *fakeTasks) UnfinishedContexts(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.unfinished), nil
}

func (f *fakeTasks) FailContext(_ context.Context, id, why string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if why != TakeoverMessage {
		return 0, fmt.Errorf("why = %q", why)
	}
	f.failed = append(f.failed, id)
	return 0, nil
}

func (f *fakeTasks) ContextOf(_ context.Context, task string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.tasks[task]; ok {
		return id, nil
	}
	return "", a2a.ErrTaskNotFound
}

func (f *fakeTasks) failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.failed)
}

// testNode is a node and what a test drives it with.
type testNode struct {
	*Node
	tasks  *fakeTasks
	timers *proctest.Timers
	lost   chan []string
}

// startNode starts a replica on dsn whose watcher runs on test timers.
func startNode(t testing.TB, dsn, name string) *testNode {
	t.Helper()
	tn := &testNode{tasks: &fakeTasks{tasks: map[string]string{}}, timers: &proctest.Timers{}, lost: make(chan []string, 4)}
	n, err := Start(t.Context(), Config{
		DSN: dsn, AdvertiseURL: "http://" + name + ".invalid:1", ID: name, Tasks: tn.tasks,
		After: tn.timers.After, OnLost: func(ids []string) { tn.lost <- ids },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	tn.Node = n
	return tn
}

// breakLeaseConn ends the node's lease connection on the server, as a
// dead replica's or a network failure ends it.
func breakLeaseConn(t *testing.T, dsn string, n *Node) {
	t.Helper()
	n.connMu.Lock()
	pid := n.conn.PgConn().PID()
	n.connMu.Unlock()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
}

// pingNow runs one watcher round and waits until it is over.
func (tn *testNode) pingNow(t *testing.T) {
	t.Helper()
	tn.timers.Fire(t, DefaultPingInterval)
	tn.timers.Await(t, DefaultPingInterval)
}

func TestLeaseAcquireLoseTakeover(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a, b := startNode(t, dsn, "a"), startNode(t, dsn, "b")
	ctx := t.Context()

	o, err := a.Acquire(ctx, "c1")
	if err != nil || !o.Self {
		t.Fatalf("a takes a free context: %+v, %v", o, err)
	}
	if err := a.Check("c1"); err != nil {
		t.Fatalf("a.Check after taking: %v", err)
	}
	o, err = b.Acquire(ctx, "c1")
	if err != nil || o.Self || o.ReplicaID != "a" || o.URL != "http://a.invalid:1" {
		t.Fatalf("b asks for a's context: %+v, %v; want a and its URL", o, err)
	}
	if err := b.Check("c1"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("b.Check of a's context: %v", err)
	}

	// a's lease connection dies: PostgreSQL frees the lock, b takes the
	// context over and fails what a left unfinished.
	breakLeaseConn(t, dsn, a.Node)
	proctest.Eventually(t, "b takes c1 over", func() bool {
		o, err := b.Acquire(ctx, "c1")
		return err == nil && o.Self
	})
	if got := b.tasks.failures(); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("b failed the unfinished tasks of %v, want [c1]", got)
	}
	// a learns it at its next ping: every lease lost at once.
	if err := a.Check("c1"); err != nil {
		t.Fatalf("a.Check before its ping noticed: %v (it reads memory)", err)
	}
	a.pingNow(t)
	select {
	case ids := <-a.lost:
		if !slices.Equal(ids, []string{"c1"}) {
			t.Fatalf("OnLost(%v), want [c1]", ids)
		}
	default:
		t.Fatal("OnLost was not called")
	}
	if err := a.Check("c1"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a.Check after losing: %v", err)
	}
	// a reconnected: it serves new contexts and finds b for c1.
	if o, err := a.Acquire(ctx, "c2"); err != nil || !o.Self {
		t.Fatalf("a takes a new context after reconnecting: %+v, %v", o, err)
	}
	if o, err := a.Acquire(ctx, "c1"); err != nil || o.ReplicaID != "b" {
		t.Fatalf("a asks for c1: %+v, %v; want b", o, err)
	}
}

// TestOwnershipTransitions: each state a context's lease can be in, and
// what Acquire and Check answer in it.
func TestOwnershipTransitions(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	for _, tc := range []struct {
		name string
		// setup brings context "c" into the state, with a holding it
		// or not; b is the node under test.
		setup      func(t *testing.T, a, b *testNode)
		wantSelf   bool
		wantOwner  string
		wantErr    error
		wantFailed bool // b failed the context's unfinished tasks
	}{
		{name: "free", setup: func(*testing.T, *testNode, *testNode) {}, wantSelf: true, wantFailed: true},
		{name: "held here", setup: func(t *testing.T, _, b *testNode) {
			if _, err := b.Acquire(t.Context(), "c"); err != nil {
				t.Fatal(err)
			}
			b.tasks.failed = nil
		}, wantSelf: true},
		{name: "held by a live replica", setup: func(t *testing.T, a, _ *testNode) {
			if _, err := a.Acquire(t.Context(), "c"); err != nil {
				t.Fatal(err)
			}
		}, wantOwner: "a"},
		{name: "released by its holder", setup: func(t *testing.T, a, _ *testNode) {
			if _, err := a.Acquire(t.Context(), "c"); err != nil {
				t.Fatal(err)
			}
			if err := a.Release(t.Context(), "c"); err != nil {
				t.Fatal(err)
			}
		}, wantSelf: true, wantFailed: true},
		{name: "holder stopped", setup: func(t *testing.T, a, _ *testNode) {
			if _, err := a.Acquire(t.Context(), "c"); err != nil {
				t.Fatal(err)
			}
			if err := a.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
		}, wantSelf: true, wantFailed: true},
		{name: "holder died", setup: func(t *testing.T, a, _ *testNode) {
			if _, err := a.Acquire(t.Context(), "c"); err != nil {
				t.Fatal(err)
			}
			breakLeaseConn(t, dsn, a.Node)
		}, wantSelf: true, wantFailed: true},
		{name: "this replica stopped", setup: func(t *testing.T, _, b *testNode) {
			if err := b.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Fresh names per case: leases are per schema and context.
			a := startNode(t, dsn, "a")
			b := startNode(t, dsn, "b")
			t.Cleanup(func() { _ = a.Stop(context.Background()); _ = b.Stop(context.Background()) })
			tc.setup(t, a, b)
			var o Owner
			var err error
			// A dead holder's lock goes when PostgreSQL has ended its
			// session, shortly after.
			proctest.Eventually(t, "the expected owner", func() bool {
				o, err = b.Acquire(t.Context(), "c")
				return !tc.wantSelf || o.Self || err != nil
			})
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Acquire: %v, want %v", err, tc.wantErr)
				}
				if err := b.Check("c"); !errors.Is(err, tc.wantErr) {
					t.Fatalf("Check: %v, want %v", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("Acquire: %v", err)
			}
			if o.Self != tc.wantSelf || (!tc.wantSelf && o.ReplicaID != tc.wantOwner) {
				t.Fatalf("Acquire: %+v, want self %v owner %q", o, tc.wantSelf, tc.wantOwner)
			}
			if got := b.Check("c") == nil; got != tc.wantSelf {
				t.Fatalf("Check holds: %v, want %v", got, tc.wantSelf)
			}
			if got := len(b.tasks.failures()) == 1; got != tc.wantFailed {
				t.Fatalf("failed the context's tasks: %v (%v), want %v", got, b.tasks.failures(), tc.wantFailed)
			}
			if tc.wantSelf {
				if err := b.Release(t.Context(), "c"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestRecover: at start a replica fails the unfinished tasks of contexts
// whose recorded holder died, and leaves a live replica's alone, and a
// context no replica recorded (a new one whose replica is about to take
// it).
func TestRecover(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a := startNode(t, dsn, "a")
	if _, err := a.Acquire(t.Context(), "live"); err != nil {
		t.Fatal(err)
	}
	dead := startNode(t, dsn, "dead")
	if _, err := dead.Acquire(t.Context(), "orphan"); err != nil {
		t.Fatal(err)
	}
	breakLeaseConn(t, dsn, dead.Node)
	b := startNode(t, dsn, "b")
	b.tasks.unfinished = []string{"live", "new", "orphan"}
	var got []string
	// The dead holder's lock goes when PostgreSQL has ended its session.
	proctest.Eventually(t, "the orphan recovered", func() bool {
		ids, err := b.Recover(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids...)
		return len(got) > 0
	})
	if !slices.Equal(got, []string{"orphan"}) || !slices.Equal(b.tasks.failures(), []string{"orphan"}) {
		t.Fatalf("recovered %v, failed %v; want the orphan only", got, b.tasks.failures())
	}
	if len(b.Held()) != 0 {
		t.Fatalf("b holds %v after recovering: a recovered context is released", b.Held())
	}
	if o, err := b.Acquire(t.Context(), "live"); err != nil || o.ReplicaID != "a" {
		t.Fatalf("the live context: %+v, %v; want it a's still", o, err)
	}
}

// TestMigrateConcurrently: replicas starting at once on an empty schema
// create the tables once.
func TestMigrateConcurrently(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	const n = 5
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			node, err := Start(t.Context(), Config{DSN: dsn, AdvertiseURL: "http://x.invalid", Tasks: &fakeTasks{}, After: (&proctest.Timers{}).After})
			if err == nil {
				err = node.Stop(t.Context())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, v int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*), MAX(version) FROM agentry_cluster_schema_version`).Scan(&rows, &v); err != nil {
		t.Fatal(err)
	}
	if rows != SchemaVersion || v != SchemaVersion {
		t.Fatalf("schema version rows %d, max %d; want %d once each", rows, v, SchemaVersion)
	}
}

// TestHeartbeat: the registry's heartbeat follows the watcher.
func TestHeartbeat(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	var now time.Time
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	mu.Lock()
	now = time.UnixMicro(1_000_000)
	mu.Unlock()
	timers := &proctest.Timers{}
	n, err := Start(t.Context(), Config{DSN: dsn, AdvertiseURL: "http://h.invalid", ID: "h", Tasks: &fakeTasks{}, After: timers.After, Now: clock, HeartbeatEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())
	mu.Lock()
	now = time.UnixMicro(9_000_000)
	mu.Unlock()
	for range 2 {
		timers.Fire(t, DefaultPingInterval)
		timers.Await(t, DefaultPingInterval)
	}
	rs, err := n.Replicas(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ID != "h" || !rs[0].Started.Equal(time.UnixMicro(1_000_000)) || !rs[0].Heartbeat.Equal(time.UnixMicro(9_000_000)) {
		t.Fatalf("replicas %+v", rs)
	}
	if err := n.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	n2 := startNode(t, dsn, "other")
	if rs, _ := n2.Replicas(t.Context()); len(rs) != 1 || rs[0].ID != "other" {
		t.Fatalf("after Stop the registry holds %+v, want the other replica only", rs)
	}
}

// TestConfirmNoticesALostLeaseAtOnce: Check reads memory until the
// watcher's next ping; Confirm's round trip finds the lease connection
// ended at once, loses every lease (OnLost hears them) and reconnects.
func TestConfirmNoticesALostLeaseAtOnce(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a := startNode(t, dsn, "a")
	if o, err := a.Acquire(t.Context(), "c1"); err != nil || !o.Self {
		t.Fatalf("a takes c1: %+v, %v", o, err)
	}
	if err := a.Confirm("c1"); err != nil {
		t.Fatalf("Confirm while held: %v", err)
	}
	if err := a.Confirm("other"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Confirm of a context never taken: %v", err)
	}
	breakLeaseConn(t, dsn, a.Node)
	if err := a.Check("c1"); err != nil {
		t.Fatalf("Check before any ping: %v (it reads memory)", err)
	}
	if err := a.Confirm("c1"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Confirm after the lease connection ended: %v, want ErrLeaseLost", err)
	}
	select {
	case ids := <-a.lost:
		if !slices.Equal(ids, []string{"c1"}) {
			t.Fatalf("OnLost(%v), want [c1]", ids)
		}
	default:
		t.Fatal("OnLost was not called")
	}
	if o, err := a.Acquire(t.Context(), "c2"); err != nil || !o.Self {
		t.Fatalf("a takes a new context after Confirm reconnected: %+v, %v", o, err)
	}
}

// BenchmarkConfirm measures the lease check a session makes before every
// model and tool call.
func BenchmarkConfirm(b *testing.B) {
	dsn := pgtest.Schema(b, "cluster", "agentry_cluster_bench_")
	n := startNode(b, dsn, "a")
	if _, err := n.Acquire(b.Context(), "c1"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := n.Confirm("c1"); err != nil {
			b.Fatal(err)
		}
	}
}
