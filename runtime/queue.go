package runtime

import (
	"context"
	"iter"
	"sync"
	"time"
)

// StreamQueue is the part of an AgentProtocol that the Session and the
// remote A2A agent share: it runs streams one at a time, in the order they
// were added, on a goroutine it starts when work arrives and that returns
// when the queue is empty; it gives each stream a context of its own,
// derived from the queue's and not from the caller's (a stream outlives
// the Send that adds it), which Abort, AbortStream and Close cancel; and
// it keeps the event log that Events, Subscribe and Stream read. A
// StreamQueue is safe for concurrent use.
type StreamQueue struct {
	log *eventLog

	base       context.Context
	baseCancel context.CancelCauseFunc

	mu      sync.Mutex // guards the fields below
	waiting []*queuedStream
	active  *queuedStream
	// live holds the waiting and the active streams by id.
	live    map[string]*queuedStream
	running bool
	// idle is closed when running turns false; a new one is made each
	// time it turns true.
	idle    chan struct{}
	closed  bool
	drained sync.WaitGroup
}

// queuedStream is one stream's place in a StreamQueue.
type queuedStream struct {
	id     string
	ctx    context.Context
	cancel context.CancelCauseFunc
	run    func(ctx context.Context, cancel context.CancelCauseFunc)
	// added is closed when Add has finished with the stream, so none of
	// its work starts before Add returns.
	added chan struct{}
	// ended is set by MarkEnded; guarded by StreamQueue.mu.
	ended bool
}

// NewStreamQueue returns an empty queue whose streams derive their
// contexts from ctx without its cancellation, and whose events are
// stamped with now (nil: time.Now).
func NewStreamQueue(ctx context.Context, now func() time.Time) *StreamQueue {
	if now == nil {
		now = defaultNow
	}
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	return &StreamQueue{log: newEventLog(now), base: base, baseCancel: cancel, live: map[string]*queuedStream{}}
}

// Context returns the queue's context, which Close cancels with
// ErrClosed.
func (q *StreamQueue) Context() context.Context { return q.base }

// Add opens stream id in the log, so that Stream knows it at once, and
// queues it: run is called on the queue's goroutine, after Add has
// returned and every stream added before has ended, with the stream's
// context and the function that cancels it; the context is cancelled
// when run returns. After Close, Add returns ErrClosed and run is never
// called.
func (q *StreamQueue) Add(id string, run func(ctx context.Context, cancel context.CancelCauseFunc)) error {
	st := &queuedStream{id: id, run: run, added: make(chan struct{})}
	st.ctx, st.cancel = context.WithCancelCause(q.base)
	defer close(st.added)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		st.cancel(ErrClosed)
		return ErrClosed
	}
	q.log.open(id)
	q.waiting = append(q.waiting, st)
	q.live[id] = st
	if !q.running {
		q.setRunning()
		q.drained.Add(1)
		go q.drain()
	}
	return nil
}

// setRunning marks the queue running; q.mu is held.
func (q *StreamQueue) setRunning() {
	q.running = true
	q.idle = make(chan struct{})
}

// setIdle marks the queue idle and wakes those waiting for it; q.mu is
// held.
func (q *StreamQueue) setIdle() {
	q.running = false
	close(q.idle)
}

// drain runs queued streams until the queue is empty.
func (q *StreamQueue) drain() {
	defer q.drained.Done()
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 {
			q.setIdle()
			q.active = nil
			q.mu.Unlock()
			return
		}
		st := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.active = st
		q.mu.Unlock()
		<-st.added
		st.run(st.ctx, st.cancel)
		st.cancel(nil)
		q.mu.Lock()
		delete(q.live, st.id)
		q.mu.Unlock()
	}
}

// MarkEnded marks the running stream as over but for its last events: a
// Hold meanwhile waits for it instead of failing.
func (q *StreamQueue) MarkEnded() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.active != nil {
		q.active.ended = true
	}
}

// Hold waits until no stream runs and keeps the queue as if one did until
// release is called: streams added meanwhile wait, and start then. A
// running stream marked ended is waited for (until ctx ends); any other
// running or queued stream makes Hold fail with ErrBusy at once. After
// Close it fails with ErrClosed.
func (q *StreamQueue) Hold(ctx context.Context) (release func(), err error) {
	q.mu.Lock()
	for q.running {
		// A stream that has emitted its agent_end is over; its goroutine
		// is only returning, so wait for that rather than report busy.
		if len(q.waiting) > 0 || q.active == nil || !q.active.ended {
			q.mu.Unlock()
			return nil, ErrBusy
		}
		idle := q.idle
		q.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		q.mu.Lock()
	}
	if q.closed {
		q.mu.Unlock()
		return nil, ErrClosed
	}
	q.setRunning()
	q.drained.Add(1)
	q.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			if len(q.waiting) > 0 {
				q.mu.Unlock()
				go q.drain()
				return
			}
			q.setIdle()
			q.mu.Unlock()
			q.drained.Done()
		})
	}, nil
}

// Busy reports whether a stream runs or waits, or a Hold keeps the
// queue: what makes Hold fail with ErrBusy. A running stream marked ended
// counts as over.
func (q *StreamQueue) Busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running && (len(q.waiting) > 0 || q.active == nil || !q.active.ended)
}

// Abort cancels the running stream and every queued one with cause (nil:
// ErrAborted).
func (q *StreamQueue) Abort(cause error) {
	if cause == nil {
		cause = ErrAborted
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.active != nil {
		q.active.cancel(cause)
	}
	for _, st := range q.waiting {
		st.cancel(cause)
	}
}

// AbortStream cancels one stream, running or queued, with cause, leaving
// the others; a stream that has ended or is unknown is left alone.
func (q *StreamQueue) AbortStream(id string, cause error) {
	q.mu.Lock()
	st := q.live[id]
	q.mu.Unlock()
	if st != nil {
		st.cancel(cause)
	}
}

// Close aborts every stream with ErrClosed, waits for the running one to
// return, and cancels the queue's context. It reports whether this call
// closed the queue: false when it was closed already.
func (q *StreamQueue) Close() bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.closed = true
	q.mu.Unlock()
	q.Abort(ErrClosed)
	q.drained.Wait()
	q.baseCancel(ErrClosed)
	return true
}

// Emit stamps ev with its id ("<stream>-<n>"), stream id and time, logs
// it and hands it to the subscribers. A stream id never added is opened
// by its first event (a one-off stream, such as a rewind's
// session_update).
func (q *StreamQueue) Emit(streamID string, ev Event) Event { return q.log.emit(streamID, ev) }

// Events returns every event so far, as AgentProtocol.Events describes.
func (q *StreamQueue) Events() []Event { return q.log.all() }

// Subscribe calls fn with every event from now on, in the log's order.
func (q *StreamQueue) Subscribe(fn func(Event)) (unsubscribe func()) { return q.log.subscribe(fn) }

// Stream yields a stream's events from its first, then follows it until
// its agent_end, as AgentProtocol.Stream describes.
func (q *StreamQueue) Stream(ctx context.Context, streamID string) iter.Seq2[Event, error] {
	return q.log.stream(ctx, streamID)
}
