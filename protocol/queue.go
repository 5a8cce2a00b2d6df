package protocol

import (
	"sync"

	"github.com/agentry-dev/agentry/runtime"
)

// item is one thing a task's run produced, in the order the session
// produced it: a protocol event, a call awaiting approval, or a call
// starting to execute.
type item struct {
	ev        runtime.Event
	approval  *approval
	executing string
}

// queue is a task's FIFO of items. The session's goroutines push and
// then drain it (Server.drain); a push that finds another goroutine
// draining leaves its item to that one, so items are translated in order
// and a burst is translated as one batch, its text deltas merged.
type queue struct {
	mu    sync.Mutex
	items []item
	spare []item
}

func newQueue() *queue { return &queue{} }

func (q *queue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
}

// take returns everything queued, oldest first. The slice is valid until
// the next take.
func (q *queue) take() []item {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	// Reuse the previous batch's array: the caller is done with it.
	clear(q.spare)
	q.items = q.spare[:0]
	q.spare = out
	return out
}

// empty reports whether nothing is queued.
func (q *queue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}
