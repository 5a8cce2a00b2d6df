package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Defaults of the event log's Config fields.
const (
	// DefaultEventQueue bounds the events waiting for the log's writer.
	DefaultEventQueue = 16384
	// DefaultEventBatch bounds the events of one INSERT.
	DefaultEventBatch = 256
)

// logged is an event waiting for the writer.
type logged struct {
	context string
	task    a2a.TaskID
	ev      a2a.Event
}

// eventWriter appends the events of the tasks a replica runs to
// agentry_task_events, in order, on one goroutine: each round takes what
// the queue holds (at most Config.EventBatch events), writes it with one
// INSERT and wakes the other replicas' readers with one NOTIFY in the
// same statement. Events that arrive while a round runs wait for the
// next: under load the rounds grow, at rest an event goes out alone, at
// once.
type eventWriter struct {
	n    *Node
	q    chan logged
	stop chan struct{}
	done chan struct{}
	// next is each task's last sequence number; a task the writer has
	// not seen continues what the log holds (a parked task resumed here).
	next     map[a2a.TaskID]int64
	stopOnce sync.Once
	// behind is set while producers wait for room in q, since when.
	behind atomic.Bool
	since  atomic.Int64
	// wrote, when set, hears the size of every batch written (tests).
	wrote func(int)
}

// eventChannel is the NOTIFY channel of the schema's event log.
func eventChannel(schema string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(schema))
	return fmt.Sprintf("agentry_events_%016x", h.Sum64())
}

// Append logs an event of a task this replica runs, in the order of the
// calls for each task. It does not wait for the database: the replica's
// writer batches the events of every task into one INSERT and one NOTIFY
// per round. When Config.EventQueue events are waiting already (the
// database is that far behind) Append blocks until there is room, and
// says so in the log: the event log never loses an event silently. After
// Stop, Append drops the event.
func (n *Node) Append(contextID string, task a2a.TaskID, ev a2a.Event) {
	w := n.writer()
	if terminal(ev) {
		n.running.Delete(task)
	} else if _, ok := n.running.Load(task); !ok {
		n.running.Store(task, struct{}{})
	}
	e := logged{context: contextID, task: task, ev: ev}
	select {
	case w.q <- e:
		return
	case <-w.stop:
		return
	default:
	}
	if w.behind.CompareAndSwap(false, true) {
		w.since.Store(time.Now().UnixNano())
		n.log.Warn("cluster: the event log's writer is behind: turns wait for the database", "task", task, "queued", cap(w.q))
	}
	select {
	case w.q <- e:
	case <-w.stop:
	}
}

// writer starts the event writer on first use.
func (n *Node) writer() *eventWriter {
	n.writerOnce.Do(func() {
		n.ew = n.newWriter()
		go n.ew.run()
	})
	return n.ew
}

func (n *Node) newWriter() *eventWriter {
	return &eventWriter{n: n, q: make(chan logged, n.cfg.EventQueue), stop: make(chan struct{}), done: make(chan struct{}), next: map[a2a.TaskID]int64{}}
}

// stopWriter writes what the queue holds and stops the writer.
func (n *Node) stopWriter(ctx context.Context) {
	n.writerOnce.Do(func() {}) // no writer from now on
	w := n.ew
	if w == nil {
		return
	}
	w.stopOnce.Do(func() { close(w.stop) })
	select {
	case <-w.done:
	case <-ctx.Done():
	}
}

func (w *eventWriter) run() {
	defer close(w.done)
	batch := make([]logged, 0, w.n.cfg.EventBatch)
	for {
		batch = batch[:0]
		stopping := false
		select {
		case e := <-w.q:
			batch = append(batch, e)
		case <-w.stop:
			stopping = true
		}
		batch = w.take(batch)
		if len(batch) == 0 {
			return // stopping, and nothing is left
		}
		w.write(batch, !stopping)
		if len(w.q) == 0 && w.behind.CompareAndSwap(true, false) {
			w.n.log.Warn("cluster: the event log's writer caught up", "waited", time.Since(time.Unix(0, w.since.Load())))
		}
	}
}

// take adds to batch what the queue holds, up to the batch's capacity.
func (w *eventWriter) take(batch []logged) []logged {
	for len(batch) < cap(batch) {
		select {
		case e := <-w.q:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

// write writes a batch, retrying while the database refuses it (and
// retry is set), so that the log keeps its order.
func (w *eventWriter) write(batch []logged, retry bool) {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		err := w.insert(batch)
		if err == nil {
			return
		}
		w.n.log.Error("cluster: cannot write to the event log; subscribers on other replicas wait for these events", "events", len(batch), "err", err)
		if !retry {
			return
		}
		select {
		case <-w.stop:
			retry = false
		case <-time.After(wait):
		}
	}
}

// insert writes the batch with one statement: the rows, then a NOTIFY
// naming their tasks (empty when the names do not fit a payload: every
// reader looks).
func (w *eventWriter) insert(batch []logged) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var unknown []string
	for _, e := range batch {
		if _, ok := w.next[e.task]; !ok {
			w.next[e.task] = 0
			unknown = append(unknown, string(e.task))
		}
	}
	if len(unknown) > 0 {
		rows, err := w.n.db.QueryContext(ctx, `SELECT task_id, MAX(seq) FROM agentry_task_events WHERE task_id = ANY($1) GROUP BY task_id`, unknown)
		if err != nil {
			for _, id := range unknown {
				delete(w.next, a2a.TaskID(id))
			}
			return err
		}
		for rows.Next() {
			var id string
			var seq int64
			if err := rows.Scan(&id, &seq); err == nil {
				w.next[a2a.TaskID(id)] = seq
			}
		}
		_ = rows.Close()
	}
	r := rowsOf(len(batch))
	now := w.n.cfg.Now().UnixMicro()
	seen := map[a2a.TaskID]bool{}
	var names []string
	start := map[a2a.TaskID]int64{}
	for _, e := range batch {
		if _, ok := start[e.task]; !ok {
			start[e.task] = w.next[e.task]
		}
		b, err := json.Marshal(a2a.StreamResponse{Event: e.ev})
		if err != nil {
			w.n.log.Error("cluster: an event cannot be encoded for the event log", "task", e.task, "err", err)
			continue
		}
		w.next[e.task]++
		r.add(string(e.task), w.next[e.task], e.context, terminal(e.ev), now, string(b))
		if !seen[e.task] {
			seen[e.task] = true
			names = append(names, string(e.task))
		}
	}
	payload := strings.Join(names, "\n")
	if len(payload) > 7900 {
		payload = ""
	}
	_, err := w.n.db.ExecContext(ctx, insertEvents+` SELECT pg_notify($7, $8)`,
		r.task, r.seq, r.context, r.final, r.created, r.event, w.n.channel, payload)
	if err != nil {
		// The next round reads the log's sequence again.
		for id, seq := range start {
			w.next[id] = seq
		}
		return err
	}
	for _, e := range batch {
		if terminal(e.ev) {
			delete(w.next, e.task)
		}
	}
	if w.wrote != nil {
		w.wrote(len(batch))
	}
	return nil
}

// insertEvents inserts rows given as arrays, skipping a row whose place
// is taken: a replica that lost a context's lease may still write events
// after the taker ended the task.
const insertEvents = `WITH ins AS (INSERT INTO agentry_task_events (task_id, seq, context_id, final, created, event)
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::boolean[], $5::bigint[], $6::jsonb[])
	ON CONFLICT (task_id, seq) DO NOTHING)`

// eventRows are the columns of the rows of one INSERT.
type eventRows struct {
	task, context, event []string
	seq, created         []int64
	final                []bool
}

func rowsOf(n int) *eventRows {
	return &eventRows{task: make([]string, 0, n), context: make([]string, 0, n), event: make([]string, 0, n),
		seq: make([]int64, 0, n), created: make([]int64, 0, n), final: make([]bool, 0, n)}
}

func (r *eventRows) add(task string, seq int64, contextID string, final bool, created int64, event string) {
	r.task, r.seq, r.context = append(r.task, task), append(r.seq, seq), append(r.context, contextID)
	r.final, r.created, r.event = append(r.final, final), append(r.created, created), append(r.event, event)
}

// terminal reports whether ev ends its task.
func terminal(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State.Terminal()
	case *a2a.Task:
		return e.Status.State.Terminal()
	}
	return false
}

// endsExecution reports whether ev ends an execution of its task: its
// end, or a pause for the user.
func endsExecution(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State.Terminal() || e.Status.State == a2a.TaskStateInputRequired
	case *a2a.Task:
		return e.Status.State.Terminal()
	}
	return false
}

// appendTakeover ends in the log, with TakeoverMessage, the tasks of a
// context the log holds unfinished: the replica running them is gone
// (the caller holds the context's lease and failed them in the task
// store). Tasks this replica is logging are its own and left alone, as
// the task store leaves the tasks it runs.
func (n *Node) appendTakeover(ctx context.Context, contextID string) error {
	rows, err := n.db.QueryContext(ctx, `SELECT task_id, MAX(seq) FROM agentry_task_events WHERE context_id = $1
		GROUP BY task_id HAVING NOT bool_or(final)`, contextID)
	if err != nil {
		return err
	}
	type open struct {
		id  string
		seq int64
	}
	var tasks []open
	for rows.Next() {
		var o open
		if err := rows.Scan(&o.id, &o.seq); err != nil {
			_ = rows.Close()
			return err
		}
		if _, here := n.running.Load(a2a.TaskID(o.id)); here {
			continue // this replica runs it (a new context's first task)
		}
		tasks = append(tasks, o)
	}
	if err := errors.Join(rows.Close(), rows.Err()); err != nil || len(tasks) == 0 {
		return err
	}
	now := n.cfg.Now()
	r := rowsOf(len(tasks))
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		ev := TakeoverEvent(contextID, a2a.TaskID(t.id), now)
		b, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			return err
		}
		r.add(t.id, t.seq+1, contextID, true, now.UnixMicro(), string(b))
		names = append(names, t.id)
	}
	_, err = n.db.ExecContext(ctx, insertEvents+` SELECT pg_notify($7, $8)`,
		r.task, r.seq, r.context, r.final, r.created, r.event, n.channel, strings.Join(names, "\n"))
	return err
}

// TakeoverEvent is the event that ends, in the event log, a task whose
// replica stopped before it finished: failed, with TakeoverMessage.
func TakeoverEvent(contextID string, task a2a.TaskID, now time.Time) *a2a.TaskStatusUpdateEvent {
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, a2a.TaskInfo{TaskID: task, ContextID: contextID}, a2a.NewTextPart(TakeoverMessage))
	now = now.UTC()
	return &a2a.TaskStatusUpdateEvent{TaskID: task, ContextID: contextID,
		Status: a2a.TaskStatus{State: a2a.TaskStateFailed, Message: msg, Timestamp: &now}}
}

// Follow replays a task's logged events after sequence number after, in
// order, then follows the events logged later (woken by NOTIFY) until
// the execution ends: the task's end, or a pause for the user with
// nothing logged after it. ok is false, with no error, when the log holds
// no event of the task past after (a task this replica's log never had:
// the caller serves it otherwise). While it waits, Follow asks every
// Config.HolderCheckInterval whether the task's replica is still alive, taking
// the context's lease for a moment when it is not, so that the dead
// replica's tasks end with TakeoverEvent.
func (n *Node) Follow(ctx context.Context, task a2a.TaskID, after int64) (events iter.Seq2[LoggedEvent, error], ok bool, err error) {
	wake, unwatch, err := n.listen(ctx, task)
	if err != nil {
		return nil, false, err
	}
	first, err := n.readEvents(ctx, task, after)
	if err != nil || len(first) == 0 {
		unwatch()
		return nil, false, err
	}
	return func(yield func(LoggedEvent, error) bool) {
		defer unwatch()
		page := first
		// check is the pending holder check: one per follower, kept
		// across wake-ups until it fires.
		var check <-chan time.Time
		for {
			for i, e := range page {
				if !yield(e, nil) {
					return
				}
				after = e.Seq
				if e.Final || (i == len(page)-1 && endsExecution(e.Event)) {
					return
				}
			}
			for {
				if check == nil {
					check = n.cfg.After(n.cfg.HolderCheckInterval)
				}
				select {
				case <-ctx.Done():
					return
				case <-wake:
				case <-check:
					check = nil
					n.relisten(ctx)
					n.takeOverIfGone(ctx, first[0].Context)
				}
				var err error
				if page, err = n.readEvents(ctx, task, after); err != nil {
					yield(LoggedEvent{}, err)
					return
				}
				if len(page) > 0 {
					break
				}
			}
		}
	}, true, nil
}

// logged reports whether the event log holds an event of the task.
func (n *Node) logged(ctx context.Context, task string) bool {
	var ok bool
	if err := n.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM agentry_task_events WHERE task_id = $1)`, task).Scan(&ok); err != nil {
		n.log.Warn("cluster: reading the event log", "task", task, "err", err)
		return false
	}
	return ok
}

// LoggedEvent is an event of the event log.
type LoggedEvent struct {
	// Seq is the event's place in its task's log, from 1.
	Seq int64
	// Context is the task's context.
	Context string
	// Final is set on the task's last event.
	Final bool
	// Created is when the writer wrote it.
	Created time.Time
	Event   a2a.Event
}

// readEvents reads a task's events after seq.
func (n *Node) readEvents(ctx context.Context, task a2a.TaskID, after int64) ([]LoggedEvent, error) {
	rows, err := n.db.QueryContext(ctx, `SELECT seq, context_id, final, created, event FROM agentry_task_events
		WHERE task_id = $1 AND seq > $2 ORDER BY seq`, string(task), after)
	if err != nil {
		return nil, fmt.Errorf("cluster: event log of task %s: %w", task, err)
	}
	defer rows.Close()
	var out []LoggedEvent
	for rows.Next() {
		var e LoggedEvent
		var created int64
		var b []byte
		if err := rows.Scan(&e.Seq, &e.Context, &e.Final, &created, &b); err != nil {
			return nil, fmt.Errorf("cluster: event log of task %s: %w", task, err)
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(b, &sr); err != nil {
			return nil, fmt.Errorf("cluster: event %d of task %s: %w", e.Seq, task, err)
		}
		e.Created, e.Event = time.UnixMicro(created), sr.Event
		out = append(out, e)
	}
	return out, rows.Err()
}

// takeOverIfGone fails, in the task store and the event log, the
// unfinished tasks of a context whose holder died, as a request for it
// would, and gives the lease back. As Recover, it leaves alone a context
// no replica has recorded as its holder: a new context's replica logs
// its first task before it takes the lease.
func (n *Node) takeOverIfGone(ctx context.Context, contextID string) {
	if n.Check(contextID) == nil {
		return
	}
	var recorded bool
	if err := n.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM agentry_context_owners WHERE context_id = $1)`, contextID).Scan(&recorded); err != nil || !recorded {
		return
	}
	self, err := n.tryAcquire(ctx, contextID)
	if err != nil || !self {
		return
	}
	if err := n.Release(ctx, contextID); err != nil {
		n.log.Warn("cluster: releasing a context taken over for its subscribers", "context", contextID, "err", err)
	}
}

// relisten reopens the listener after its connection broke.
func (n *Node) relisten(ctx context.Context) {
	l := &n.listener
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		if err := n.startListener(ctx); err != nil && !errors.Is(err, ErrStopped) {
			n.log.Warn("cluster: cannot reopen the event listener", "err", err)
		}
	}
}

// eventListener is the replica's one LISTEN connection, waking the
// readers of the tasks each NOTIFY names.
type eventListener struct {
	mu      sync.Mutex
	waiters map[a2a.TaskID]map[chan struct{}]struct{}
	conn    *pgx.Conn
	cancel  context.CancelFunc
	done    chan struct{}
}

// listen registers a waiter for a task's notifications, starting the
// listener first if needed: once listen returns, no event logged later
// goes unannounced.
func (n *Node) listen(ctx context.Context, task a2a.TaskID) (<-chan struct{}, func(), error) {
	l := &n.listener
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		if err := n.startListener(ctx); err != nil {
			return nil, nil, err
		}
	}
	w := make(chan struct{}, 1)
	if l.waiters == nil {
		l.waiters = map[a2a.TaskID]map[chan struct{}]struct{}{}
	}
	if l.waiters[task] == nil {
		l.waiters[task] = map[chan struct{}]struct{}{}
	}
	l.waiters[task][w] = struct{}{}
	return w, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.waiters[task], w)
		if len(l.waiters[task]) == 0 {
			delete(l.waiters, task)
		}
	}, nil
}

// startListener opens the LISTEN connection; l.mu is held.
func (n *Node) startListener(ctx context.Context) error {
	l := &n.listener
	n.mu.RLock()
	stopped := n.stopped
	n.mu.RUnlock()
	if stopped {
		return ErrStopped
	}
	cfg, err := pgx.ParseConfig(n.cfg.DSN)
	if err != nil {
		return fmt.Errorf("cluster: event listener: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "agentry events " + n.cfg.ID
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cluster: event listener: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{n.channel}.Sanitize()); err != nil {
		_ = conn.Close(ctx)
		return fmt.Errorf("cluster: event listener: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	l.conn, l.cancel, l.done = conn, cancel, make(chan struct{})
	go n.receive(lctx, conn, l.done)
	return nil
}

// receive wakes the waiters of each notification's tasks. When the
// connection breaks it wakes every waiter (they read the log again) and
// leaves the next listen to reconnect.
func (n *Node) receive(ctx context.Context, conn *pgx.Conn, done chan struct{}) {
	defer close(done)
	l := &n.listener
	for {
		note, err := conn.WaitForNotification(ctx)
		l.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				n.log.Warn("cluster: the event listener's connection broke; subscribers read the log again", "err", err)
			}
			if l.conn == conn {
				l.conn = nil
			}
			for _, ws := range l.waiters {
				for w := range ws {
					wakeUp(w)
				}
			}
			l.mu.Unlock()
			_ = conn.Close(context.Background())
			return
		}
		n.wakeTasks(note)
		l.mu.Unlock()
	}
}

// wakeTasks wakes the waiters of a notification's tasks (every waiter
// for an empty payload); listener.mu is held.
func (n *Node) wakeTasks(note *pgconn.Notification) {
	l := &n.listener
	if note.Payload == "" {
		for _, ws := range l.waiters {
			for w := range ws {
				wakeUp(w)
			}
		}
		return
	}
	for id := range strings.SplitSeq(note.Payload, "\n") {
		for w := range l.waiters[a2a.TaskID(id)] {
			wakeUp(w)
		}
	}
}

func wakeUp(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// stopListener closes the LISTEN connection.
func (n *Node) stopListener() {
	l := &n.listener
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.conn, l.cancel = nil, nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Events is the event log as a protocol server uses it
// (protocol.Config.EventLog): Append, and Follow from a task's first
// event.
type Events struct{ n *Node }

// Events returns the replica's event log.
func (n *Node) Events() Events { return Events{n} }

// Append logs an event of a task this replica runs (Node.Append).
func (e Events) Append(contextID string, task a2a.TaskID, ev a2a.Event) {
	e.n.Append(contextID, task, ev)
}

// Follow replays a task's events from its first and follows later ones
// to the end of the execution (Node.Follow).
func (e Events) Follow(ctx context.Context, task a2a.TaskID) (iter.Seq2[a2a.Event, error], bool, error) {
	events, ok, err := e.n.Follow(ctx, task, 0)
	if !ok {
		return nil, false, err
	}
	return func(yield func(a2a.Event, error) bool) {
		for le, err := range events {
			if !yield(le.Event, err) {
				return
			}
		}
	}, true, nil
}
