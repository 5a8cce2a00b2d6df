package cluster

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/pgtest"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// holderCheck is the tests' HolderCheckInterval, apart from the ping's.
const holderCheck = 7 * time.Second

// startLogNode starts a replica whose watcher and holder checks run on
// test timers.
func startLogNode(t testing.TB, dsn, name string) *testNode {
	t.Helper()
	tn := &testNode{tasks: &fakeTasks{tasks: map[string]string{}}, timers: &proctest.Timers{}, lost: make(chan []string, 4)}
	n, err := Start(t.Context(), Config{
		DSN: dsn, AdvertiseURL: "http://" + name + ".invalid:1", ID: name, Tasks: tn.tasks,
		After: tn.timers.After, HolderCheckInterval: holderCheck, SubscribeFromLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	tn.Node = n
	return tn
}

// submitted, delta and completed are a task's first, middle and last
// events; delta's text is its index.
func submitted(ctxID string, task a2a.TaskID) a2a.Event {
	return &a2a.Task{ID: task, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
}

func delta(ctxID string, task a2a.TaskID, i int) a2a.Event {
	return &a2a.TaskArtifactUpdateEvent{TaskID: task, ContextID: ctxID, Append: i > 0,
		Artifact: &a2a.Artifact{ID: "answer", Parts: a2a.ContentParts{a2a.NewTextPart(strconv.Itoa(i))}}}
}

func completed(ctxID string, task a2a.TaskID) a2a.Event {
	return &a2a.TaskStatusUpdateEvent{TaskID: task, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
}

// checkTurn checks that evs are submitted, deltas 0..n-1 and completed,
// with sequence numbers 1, 2, … and no gap or duplicate.
func checkTurn(t *testing.T, task a2a.TaskID, evs []LoggedEvent, n int) {
	t.Helper()
	if len(evs) != n+2 {
		t.Fatalf("task %s: %d events, want %d", task, len(evs), n+2)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("task %s: event %d has seq %d", task, i, e.Seq)
		}
		switch ev := e.Event.(type) {
		case *a2a.Task:
			if i != 0 {
				t.Fatalf("task %s: the task at %d", task, i)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if got := ev.Artifact.Parts[0].Text(); got != strconv.Itoa(i-1) {
				t.Fatalf("task %s: event %d is delta %q", task, i, got)
			}
		case *a2a.TaskStatusUpdateEvent:
			if i != n+1 || ev.Status.State != a2a.TaskStateCompleted || !e.Final {
				t.Fatalf("task %s: status %s at %d (final %v)", task, ev.Status.State, i, e.Final)
			}
		default:
			t.Fatalf("task %s: event %d is %T", task, i, e.Event)
		}
		if ev, ok := e.Event.(a2a.TaskInfoProvider); !ok || ev.TaskInfo().TaskID != task {
			t.Fatalf("task %s: event %d belongs to another task", task, i)
		}
	}
}

// collect follows a task from after until the follow ends.
func collect(t *testing.T, n *Node, task a2a.TaskID, after int64) []LoggedEvent {
	t.Helper()
	evs, ok, err := n.Follow(t.Context(), task, after)
	if err != nil || !ok {
		t.Fatalf("follow %s: ok %v, %v", task, ok, err)
	}
	var out []LoggedEvent
	for e, err := range evs {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// followWhenLogged waits until the log has the task's first event and
// follows it from there, sending what it reads on out.
func followWhenLogged(t *testing.T, n *Node, task a2a.TaskID, out chan<- LoggedEvent) {
	var evs func(func(LoggedEvent, error) bool)
	proctest.Eventually(t, "the task's first event logged", func() bool {
		e, ok, err := n.Follow(t.Context(), task, 0)
		if err != nil {
			t.Error(err)
			return true
		}
		evs = e
		return ok
	})
	go func() {
		defer close(out)
		for e, err := range evs {
			if err != nil {
				t.Error(err)
				return
			}
			out <- e
		}
	}()
}

func TestEventLogWriterBatchesInOrder(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster event log", "agentry_eventlog_test_")
	a := startLogNode(t, dsn, "a")
	// The writer is held back until every event is queued, so that its
	// rounds are full batches.
	var sizes []int
	a.writerOnce.Do(func() {
		a.ew = a.newWriter()
		a.ew.wrote = func(k int) { sizes = append(sizes, k) }
	})
	const tasks, deltas = 8, 74 // 8 × 76 = 608 events
	var wg sync.WaitGroup
	for k := range tasks {
		wg.Go(func() {
			task, ctxID := a2a.TaskID(fmt.Sprintf("t%d", k)), fmt.Sprintf("c%d", k)
			a.Append(ctxID, task, submitted(ctxID, task))
			for i := range deltas {
				a.Append(ctxID, task, delta(ctxID, task, i))
			}
			a.Append(ctxID, task, completed(ctxID, task))
		})
	}
	wg.Wait()
	go a.ew.run()
	a.stopWriter(t.Context()) // once all is written
	for k := range tasks {
		task := a2a.TaskID(fmt.Sprintf("t%d", k))
		checkTurn(t, task, collect(t, a.Node, task, 0), deltas)
	}
	if want := []int{256, 256, 96}; fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("batches %v, want %v", sizes, want)
	}
}

func TestEventLogConcurrentTasks(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster event log", "agentry_eventlog_test_")
	a, b := startLogNode(t, dsn, "a"), startLogNode(t, dsn, "b")
	const tasks, deltas = 6, 200
	outs := make([]chan LoggedEvent, tasks)
	var wg sync.WaitGroup
	for k := range tasks {
		task, ctxID := a2a.TaskID(fmt.Sprintf("t%d", k)), fmt.Sprintf("c%d", k)
		a.Append(ctxID, task, submitted(ctxID, task))
		outs[k] = make(chan LoggedEvent, deltas+2)
		// A subscriber on the other replica, following while the
		// holder writes.
		followWhenLogged(t, b.Node, task, outs[k])
		wg.Go(func() {
			for i := range deltas {
				a.Append(ctxID, task, delta(ctxID, task, i))
			}
			a.Append(ctxID, task, completed(ctxID, task))
		})
	}
	wg.Wait()
	for k := range tasks {
		var got []LoggedEvent
		for e := range outs[k] {
			got = append(got, e)
		}
		task := a2a.TaskID(fmt.Sprintf("t%d", k))
		checkTurn(t, task, got, deltas)
		// A late subscriber, on either replica, replays the whole turn.
		checkTurn(t, task, collect(t, b.Node, task, 0), deltas)
		checkTurn(t, task, collect(t, a.Node, task, 0), deltas)
		// From a sequence number on, it gets the rest.
		if rest := collect(t, b.Node, task, deltas); len(rest) != 2 || rest[0].Seq != deltas+1 {
			t.Errorf("task %s after %d: %d events", task, deltas, len(rest))
		}
	}
	if _, ok, err := b.Follow(t.Context(), "unknown", 0); ok || err != nil {
		t.Errorf("an unlogged task: ok %v, %v", ok, err)
	}
}

func TestEventLogTakeover(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster event log", "agentry_eventlog_test_")
	a, b := startLogNode(t, dsn, "a"), startLogNode(t, dsn, "b")
	ctx := t.Context()
	if o, err := a.Acquire(ctx, "c1"); err != nil || !o.Self {
		t.Fatalf("acquire: %+v %v", o, err)
	}
	const task = a2a.TaskID("t1")
	a.Append("c1", task, submitted("c1", task))
	for i := range 5 {
		a.Append("c1", task, delta("c1", task, i))
	}
	out := make(chan LoggedEvent, 16)
	followWhenLogged(t, b.Node, task, out)
	for i := range 6 {
		if e := <-out; e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// The subscriber waits for more; the holder dies.
	b.timers.Await(t, holderCheck)
	a.connMu.Lock()
	pid := a.conn.PgConn().PID()
	a.connMu.Unlock()
	breakLeaseConn(t, dsn, a.Node)
	// PostgreSQL frees the locks once the session has ended.
	proctest.Eventually(t, "the holder's session ended", func() bool {
		var alive bool
		if err := b.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		return !alive
	})
	// At its next check the subscriber's replica finds the holder gone,
	// fails its tasks and ends them in the log.
	b.timers.Fire(t, holderCheck)
	e, ok := <-out
	if !ok {
		t.Fatal("the follow ended without the takeover")
	}
	u, isStatus := e.Event.(*a2a.TaskStatusUpdateEvent)
	if !isStatus || u.Status.State != a2a.TaskStateFailed || u.Status.Message.Parts[0].Text() != TakeoverMessage || e.Seq != 7 || !e.Final {
		t.Fatalf("last event %d %#v", e.Seq, e.Event)
	}
	if _, more := <-out; more {
		t.Error("events after the takeover")
	}
	if got := b.tasks.failures(); len(got) != 1 || got[0] != "c1" {
		t.Errorf("failed contexts %v", got)
	}
	if held := b.Held(); len(held) != 0 {
		t.Errorf("the subscriber's replica kept %v", held)
	}
	// A late subscriber replays the events, then the failure.
	if evs := collect(t, b.Node, task, 0); len(evs) != 7 || !evs[6].Final {
		t.Errorf("replay: %d events", len(evs))
	}
	// The holder's late events go nowhere: the task ended.
	a.Append("c1", task, delta("c1", task, 5))
	a.stopWriter(ctx)
	if evs := collect(t, b.Node, task, 0); len(evs) != 7 {
		t.Errorf("after the dead holder's write: %d events", len(evs))
	}
}

func TestRouterServesLoggedSubscribesHere(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster event log", "agentry_eventlog_test_")
	a, b := startReplica(t, dsn, "a"), startReplica(t, dsn, "b")
	b.cfg.SubscribeFromLog = true
	ctx := t.Context()
	if o, err := a.Acquire(ctx, "c1"); err != nil || !o.Self {
		t.Fatalf("acquire: %+v %v", o, err)
	}
	a.tasks.tasks["t1"], b.tasks.tasks["t1"] = "c1", "c1"
	requests := []struct{ path, body string }{
		{"/", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"t1"}}`},
		{"/", `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"t1"}}`},
		{"/rest/tasks/t1:subscribe", ``},
	}
	servedBy := func(path, body string) string {
		resp := post(t, b.srv.URL, path, body)
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.Header.Get("X-Served-By")
	}
	// Nothing logged yet: the holder serves the subscribe.
	for _, r := range requests {
		if got := servedBy(r.path, r.body); got != "a" {
			t.Errorf("%s %s before the log has the task: served by %q, want the holder", r.path, r.body, got)
		}
	}
	a.Append("c1", "t1", submitted("c1", "t1"))
	proctest.Eventually(t, "t1 logged", func() bool { return b.logged(ctx, "t1") })
	for _, r := range requests {
		if got := servedBy(r.path, r.body); got != "b" {
			t.Errorf("%s %s: served by %q, want the replica it reached (from the log)", r.path, r.body, got)
		}
	}
	// Other requests for the task still go to the holder.
	if got := servedBy("/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}`); got != "a" {
		t.Errorf("GetTask: served by %q, want the holder", got)
	}
}
