package wsclient

import (
	"context"
	"sync"
)

// queue holds the frames of one reader: the reading goroutine pushes
// without ever waiting, the reader pops. It holds at most limit items;
// its memory is what it holds, released as the reader catches up.
type queue[T any] struct {
	mu    sync.Mutex
	items []T
	limit int
	ended bool
	err   error
	wake  chan struct{} // one pending wake-up for a waiting pop
	endc  chan struct{} // closed by finish
}

func newQueue[T any](limit int) *queue[T] {
	return &queue[T]{limit: limit, wake: make(chan struct{}, 1), endc: make(chan struct{})}
}

// push appends v and reports whether there was room; after finish, v is
// dropped (nobody will read it) and push reports true.
func (q *queue[T]) push(v T) bool {
	q.mu.Lock()
	switch {
	case q.ended:
		q.mu.Unlock()
		return true
	case len(q.items) >= q.limit:
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// finish ends the queue: once what it holds has been popped, pop reports
// err (nil: a clean end). Only the first call counts.
func (q *queue[T]) finish(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ended {
		return
	}
	q.ended, q.err = true, err
	close(q.endc)
}

// pop returns the oldest item, waiting for one; ok is false when the
// queue has ended and is empty (err is finish's) or ctx ended (err is its
// cause).
func (q *queue[T]) pop(ctx context.Context) (v T, ok bool, err error) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v = q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil // the array goes with the backlog
			}
			q.mu.Unlock()
			return v, true, nil
		}
		if q.ended {
			err = q.err
			q.mu.Unlock()
			return v, false, err
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.endc:
		case <-ctx.Done():
			return v, false, context.Cause(ctx)
		}
	}
}
