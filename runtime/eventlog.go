package runtime

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"
)

// eventLog records an AgentProtocol's events with a Session's guarantees:
// ids "<stream>-<n>", one total order for the log and for subscribers, and
// per-stream replay for Stream.
type eventLog struct {
	now func() time.Time
	// emitMu serialises emission; subscribers are called with it held and
	// mu released, so that they may read the log.
	emitMu  sync.Mutex
	mu      sync.RWMutex // guards the fields below
	events  []Event
	streams map[string]*streamLog
	subs    map[uint64]func(Event)
	subList []func(Event) // subs as a slice, replaced (never mutated) on change
	nextSub uint64
}

// streamLog is one stream's part of the log: its events' positions in
// the log (a copy of each event would double the log's memory, and a
// streamed answer emits an event per delta).
type streamLog struct {
	counter int
	at      []int32
}

// newEventLog returns an empty log whose events are stamped with now.
func newEventLog(now func() time.Time) *eventLog {
	return &eventLog{now: now, streams: map[string]*streamLog{}, subs: map[uint64]func(Event){}}
}

// open registers a stream, so that Stream knows it before its first event.
func (l *eventLog) open(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.streams[id] = &streamLog{}
}

// emit assigns ev its id and timestamp, appends it to the log and hands
// it to the subscribers.
func (l *eventLog) emit(streamID string, ev Event) Event {
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	l.mu.Lock()
	st := l.streams[streamID]
	if st == nil {
		// A one-off stream (a rewind's session_update) is opened by
		// its first event.
		st = &streamLog{}
		l.streams[streamID] = st
	}
	ev.StreamID = streamID
	ev.ID = fmt.Sprintf("%s-%d", streamID, st.counter)
	st.counter++
	ev.Timestamp = l.now()
	st.at = append(st.at, int32(len(l.events)))
	l.events = append(l.events, ev)
	subs := l.subList
	l.mu.Unlock()
	for _, fn := range subs {
		fn(ev)
	}
	return ev
}

// all returns a copy of every event so far.
func (l *eventLog) all() []Event {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append([]Event(nil), l.events...)
}

// subscribe calls fn with every event from now on.
func (l *eventLog) subscribe(fn func(Event)) func() {
	l.mu.Lock()
	id := l.addSubLocked(fn)
	l.mu.Unlock()
	return func() { l.removeSub(id) }
}

// addSubLocked registers fn; l.mu must be held.
func (l *eventLog) addSubLocked(fn func(Event)) uint64 {
	id := l.nextSub
	l.nextSub++
	l.subs[id] = fn
	l.subList = append(l.subList[:len(l.subList):len(l.subList)], fn)
	return id
}

func (l *eventLog) removeSub(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.subs[id]; !ok {
		return
	}
	delete(l.subs, id)
	list := make([]func(Event), 0, len(l.subs))
	for _, fn := range l.subs {
		list = append(list, fn)
	}
	l.subList = list
}

// stream yields a stream's events from its first, then follows it until
// its agent_end.
func (l *eventLog) stream(ctx context.Context, streamID string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		q := &eventQueue{wake: make(chan struct{}, 1)}
		// Snapshot and subscribe under one lock, so that every event is
		// seen exactly once.
		l.mu.Lock()
		st, known := l.streams[streamID]
		if !known {
			l.mu.Unlock()
			yield(Event{}, fmt.Errorf("%w %q", ErrUnknownStream, streamID))
			return
		}
		for _, i := range st.at {
			q.items = append(q.items, l.events[i])
		}
		id := l.addSubLocked(func(ev Event) {
			if ev.StreamID == streamID {
				q.push(ev)
			}
		})
		l.mu.Unlock()
		defer l.removeSub(id)
		for {
			for _, ev := range q.take() {
				if !yield(ev, nil) || ev.Type == EventAgentEnd {
					return
				}
			}
			select {
			case <-q.wake:
			case <-ctx.Done():
				yield(Event{}, context.Cause(ctx))
				return
			}
		}
	}
}

// eventQueue is an unbounded queue, so emission never waits for a slow
// Stream consumer.
type eventQueue struct {
	mu    sync.Mutex
	items []Event
	wake  chan struct{}
}

func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) take() []Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
