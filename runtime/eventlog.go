package runtime

import (
	"context"
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// eventLog records an AgentProtocol's events with a Session's guarantees:
// ids "<stream>-<n>", one total order for the log and for subscribers, and
// per-stream replay for Stream.
//
// A streamed answer emits an event per text delta, and a session keeps its
// log for as long as it lives, so once a stream has ended the log merges
// each of its runs of text deltas into one event (see mergeRunsLocked): a
// live stream is logged exactly as emitted, an ended one compactly. The
// merge waits for the stream's replay when nobody followed the stream
// live — the caller of Send is about to call Stream — see emit.
type eventLog struct {
	now func() time.Time
	// emitMu serialises emission; subscribers are called with it held and
	// mu released, so that they may read the log.
	emitMu  sync.Mutex
	mu      sync.RWMutex // guards the fields below
	events  eventBlocks
	streams map[string]*streamLog
	subs    map[uint64]func(Event)
	subList []func(Event) // subs as a slice, replaced (never mutated) on change
	nextSub uint64
	// watchers counts the Subscribe subscribers (Stream consumers are
	// counted per stream, in streamLog.attached).
	watchers int
	// deferred holds ended streams whose runs wait to be merged.
	deferred []*streamLog
}

// streamLog is one stream's part of the log: its events' positions in
// the log (a copy of each event would double the log's memory, and a
// streamed answer emits an event per delta).
type streamLog struct {
	counter int
	at      []int32
	// runs is set once a text delta of the stream has continued another's
	// run, runFrom then being that other delta's index in at: the
	// stream's agent_end merges its runs from there.
	runs    bool
	runFrom int
	// attached counts the Stream consumers following the stream.
	attached int
	// pending: the stream ended with runs that wait for its replay.
	pending bool
}

// newEventLog returns an empty log whose events are stamped with now.
func newEventLog(now func() time.Time) *eventLog {
	return &eventLog{now: now, streams: map[string]*streamLog{}, subs: map[uint64]func(Event){}}
}

// open registers a stream, so that Stream knows it before its first event.
func (l *eventLog) open(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A new stream supersedes the ended ones still waiting for a replay.
	for _, st := range l.deferred {
		l.settleLocked(st)
	}
	l.deferred = l.deferred[:0]
	l.streams[id] = &streamLog{}
}

// settleLocked merges a stream's pending runs; l.mu is held for writing.
func (l *eventLog) settleLocked(st *streamLog) {
	if st.pending {
		st.pending = false
		l.mergeRunsLocked(st)
	}
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
	ev.ID = eventID(streamID, st.counter)
	st.counter++
	ev.Timestamp = l.now()
	switch {
	case ev.Type == EventAgentEnd && st.runs && (l.watchers > 0 || st.attached > 0):
		// The stream is over and was followed live: no Stream consumer
		// can attach to it mid-way any more, so its deltas are merged now.
		l.mergeRunsLocked(st)
	case ev.Type == EventAgentEnd && st.runs:
		// Nobody followed it: the caller of Send has yet to call Stream,
		// which replays every delta before the merge (a model can answer
		// before its caller gets there).
		st.pending = true
		l.deferred = append(l.deferred, st)
	case !st.runs && len(st.at) > 0 && continuesRun(l.events.at(int(st.at[len(st.at)-1])), &ev):
		st.runs, st.runFrom = true, len(st.at)-1
	}
	st.at = append(st.at, int32(l.events.len()))
	l.events.append(ev)
	subs := l.subList
	l.mu.Unlock()
	for _, fn := range subs {
		fn(ev)
	}
	return ev
}

// eventID is "<stream>-<n>", built with one allocation (an event per
// streamed delta makes fmt's cost show).
func eventID(streamID string, n int) string {
	var buf [64]byte
	b := append(buf[:0], streamID...)
	b = append(b, '-')
	return string(strconv.AppendInt(b, int64(n), 10))
}

// mergeRunsLocked replaces each run of two or more text deltas of st
// (consecutive events of the stream that continuesRun chains) by one event,
// the run's first with a message holding the run's text, and removes the
// run's other events from the log. l.mu must be held for writing.
//
// Events handed out earlier are copies whose Message pointers still point
// to the deltas' own messages, which nothing changes: the merged event gets
// a new Message.
func (l *eventLog) mergeRunsLocked(st *streamLog) {
	st.runs = false
	var drop []int32 // positions of the merged-away deltas, ascending
	kept := st.at[:st.runFrom]
	for i := st.runFrom; i < len(st.at); {
		first := l.events.at(int(st.at[i]))
		j := i + 1
		for j < len(st.at) && continuesRun(first, l.events.at(int(st.at[j]))) {
			j++
		}
		if j-i > 1 {
			*first = l.mergedRun(st.at[i:j])
			drop = append(drop, st.at[i+1:j]...)
		}
		// kept is written behind i, so it never overwrites an
		// unread entry of st.at.
		kept = append(kept, st.at[i])
		i = j
	}
	if len(drop) == 0 {
		return
	}
	moved := l.events.len() - int(drop[0]) // events at or after the first dropped one
	l.events.remove(drop)
	firstMoved, _ := slices.BinarySearch(kept, drop[0])
	for k := firstMoved; k < len(kept); k++ {
		kept[k] = shifted(kept[k], drop)
	}
	// The stream is ending, so its positions are final: a copy just large
	// enough for them and the agent_end's frees what the deltas' took.
	st.at = append(make([]int32, 0, len(kept)+1), kept...)
	if len(kept)-firstMoved+len(drop) == moved {
		return // every moved event was st's
	}
	// Another stream's events came between st's: their positions moved too.
	for _, o := range l.streams {
		if o == st {
			continue
		}
		k, _ := slices.BinarySearch(o.at, drop[0])
		for ; k < len(o.at); k++ {
			o.at[k] = shifted(o.at[k], drop)
		}
	}
}

// shifted is where the event at position p goes once the events at the
// ascending positions drop (of which p is none) are removed.
func shifted(p int32, drop []int32) int32 {
	n, _ := slices.BinarySearch(drop, p)
	return p - int32(n)
}

// mergedRun returns the run of text deltas at positions as one event: the
// first delta's, with one content part holding the run's text, built with
// one copy of the text (merging delta by delta would copy it once per
// delta).
func (l *eventLog) mergedRun(positions []int32) Event {
	first := *l.events.at(int(positions[0]))
	kind := first.Message.Content[0].Type
	n := 0
	for _, p := range positions {
		for _, c := range l.events.at(int(p)).Message.Content {
			n += len(c.Text) + len(c.Thought) // the other one is empty
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range positions {
		for _, c := range l.events.at(int(p)).Message.Content {
			b.WriteString(c.Text)
			b.WriteString(c.Thought)
		}
	}
	one := &singlePartMessage{}
	one.part[0].Type = kind
	if kind == PartThought {
		one.part[0].Thought = b.String()
	} else {
		one.part[0].Text = b.String()
	}
	one.msg = Message{Role: first.Message.Role, Content: one.part[:]}
	first.Message = &one.msg
	return first
}

// continuesRun reports whether next, an event of prev's stream that
// follows it, continues prev's run of text deltas: both are messages of
// one role, thread and _meta whose parts are all plain text, or all
// thought text (which must not be mixed), with nothing else set — no
// signature, media or part metadata, which a merged part could not carry.
func continuesRun(prev, next *Event) bool {
	kind := deltaKind(next)
	return kind != "" && kind == deltaKind(prev) && prev.Message.Role == next.Message.Role &&
		prev.ThreadID == next.ThreadID && sameMeta(prev.Meta, next.Meta)
}

// deltaKind is PartText or PartThought for a message all of whose parts
// are plain text, or all plain thought text; "" for any other event.
func deltaKind(ev *Event) string {
	if ev.Type != EventMessage || ev.Message == nil || len(ev.Message.Content) == 0 {
		return ""
	}
	kind := ev.Message.Content[0].Type
	for _, p := range ev.Message.Content {
		switch {
		case p.Type != kind || p.ThoughtSignature != "" || p.Data != "" || p.URI != "" || p.MimeType != "" || p.Meta != nil:
			return ""
		case kind == PartText && p.Thought == "", kind == PartThought && p.Text == "":
		default:
			return ""
		}
	}
	return kind
}

// sameMeta reports whether two events' _meta are equal, comparing only
// scalar values (a delta's _meta is nil, a thought's source, or a remote
// agent's ids); anything else is taken as different.
func sameMeta(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return false
		}
		switch va.(type) {
		case string, bool, int, int64, float64:
			if va != vb {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// all returns a copy of every event so far.
func (l *eventLog) all() []Event {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.events.copyAll()
}

// subscribe calls fn with every event from now on.
func (l *eventLog) subscribe(fn func(Event)) func() {
	l.mu.Lock()
	id := l.addSubLocked(fn)
	l.watchers++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.removeSub(id)
			l.mu.Lock()
			l.watchers--
			l.mu.Unlock()
		})
	}
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
		q.items = make([]Event, 0, max(len(st.at), minQueue))
		for _, i := range st.at {
			q.items = append(q.items, *l.events.at(int(i)))
		}
		id := l.addSubLocked(func(ev Event) {
			if ev.StreamID == streamID {
				q.push(ev)
			}
		})
		st.attached++
		l.mu.Unlock()
		defer func() {
			l.removeSub(id)
			l.mu.Lock()
			st.attached--
			// Replayed: an ended stream's deltas can be merged now.
			if st.pending {
				l.settleLocked(st)
				l.deferred = slices.DeleteFunc(l.deferred, func(o *streamLog) bool { return o == st })
			}
			l.mu.Unlock()
		}()
		var spare []Event
		for {
			items := q.take(spare)
			for _, ev := range items {
				if !yield(ev, nil) || ev.Type == EventAgentEnd {
					return
				}
			}
			spare = recycle(items)
			select {
			case <-q.wake:
			case <-ctx.Done():
				yield(Event{}, context.Cause(ctx))
				return
			}
		}
	}
}

// Queue buffers: a consumer that keeps up takes an event or a few at a
// time, so a small buffer passed back and forth serves a whole stream; a
// buffer that grew past maxQueue while the consumer lagged is dropped
// rather than kept for the stream's life.
const (
	minQueue = 8
	maxQueue = 256
)

// eventQueue is an unbounded queue, so emission never waits for a slow
// Stream consumer.
type eventQueue struct {
	mu    sync.Mutex
	items []Event
	wake  chan struct{}
}

func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	if q.items == nil {
		q.items = make([]Event, 0, minQueue)
	}
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take returns the queued events and queues the next ones in spare, an
// empty buffer the caller is done with (or nil), so that a stream reuses
// two buffers rather than allocating one per event.
func (q *eventQueue) take(spare []Event) []Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = spare
	return items
}

// recycle empties a taken buffer for reuse, dropping its events so that
// it keeps none of their payloads alive.
func recycle(items []Event) []Event {
	if cap(items) > maxQueue {
		return nil
	}
	clear(items)
	return items[:0]
}

// eventBlocks stores the log's events in blocks that are never moved: an
// appended event is copied once, where a single slice would copy the whole
// log each time it grew (a streamed answer appends an event per delta).
// Blocks double from 8 events up to 512, so a short session's log stays
// as small as a slice's would.
type eventBlocks struct {
	blocks [][]Event
	n      int
}

const (
	minBlockShift = 3 // the first block holds 8 events
	maxBlockShift = 9 // no block holds more than 512
	// geometric is the number of events the doubling blocks hold; the
	// blocks after them all hold 1<<maxBlockShift.
	geometric = 1<<minBlockShift*(1<<(maxBlockShift-minBlockShift+1)) - 1<<minBlockShift
)

func (b *eventBlocks) len() int { return b.n }

// locate returns the block and the offset in it of event i.
func locate(i int) (block, off int) {
	if i < geometric {
		// Block k holds events [8(2^k-1), 8(2^(k+1)-1)).
		block = bits.Len(uint(i>>minBlockShift+1)) - 1
		return block, i - (1<<block-1)<<minBlockShift
	}
	i -= geometric
	return maxBlockShift - minBlockShift + 1 + i>>maxBlockShift, i & (1<<maxBlockShift - 1)
}

func (b *eventBlocks) append(ev Event) {
	block, off := locate(b.n)
	if block == len(b.blocks) {
		size := 1 << maxBlockShift
		if block <= maxBlockShift-minBlockShift {
			size = 1 << (minBlockShift + block)
		}
		b.blocks = append(b.blocks, make([]Event, size))
	}
	b.blocks[block][off] = ev
	b.n++
}

// remove deletes the events at the ascending positions drop, moving the
// later ones down, and frees the blocks no event is left in (a long
// answer's deltas may have taken several).
func (b *eventBlocks) remove(drop []int32) {
	w, d := int(drop[0]), 0
	for r := w; r < b.n; r++ {
		if d < len(drop) && int(drop[d]) == r {
			d++
			continue
		}
		*b.at(w) = *b.at(r)
		w++
	}
	keep := 0
	if w > 0 {
		last, _ := locate(w - 1)
		keep = last + 1
	}
	// Emptied slots in the kept blocks must not hold on to payloads.
	for i := w; i < b.n; i++ {
		if blk, _ := locate(i); blk >= keep {
			break
		}
		*b.at(i) = Event{}
	}
	b.n = w
	clear(b.blocks[keep:])
	b.blocks = b.blocks[:keep]
}

// at returns event i, which must exist.
func (b *eventBlocks) at(i int) *Event {
	block, off := locate(i)
	return &b.blocks[block][off]
}

// copyAll returns a copy of every event; nil when there is none.
func (b *eventBlocks) copyAll() []Event {
	if b.n == 0 {
		return nil
	}
	out := make([]Event, 0, b.n)
	left := b.n
	for _, blk := range b.blocks {
		k := min(left, len(blk))
		out = append(out, blk[:k]...)
		left -= k
	}
	return out
}
