package tui

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// frame is the shortest time between two wake-ups of the program: the
// events that arrive within one frame are handled by one Update and drawn
// by one View.
const frame = time.Second / 60

// wakeMsg tells the model that the mailbox has messages.
type wakeMsg struct{}

// mailbox carries messages from other goroutines (the stream consumer, the
// approver, shell and command runners) into the program without ever
// blocking them: push appends to a queue and wakes the program at most
// once per frame; the model drains the whole queue in one Update. Deltas
// that arrive while a frame is being drawn are thus coalesced.
type mailbox struct {
	mu       sync.Mutex
	queue    []tea.Msg
	notified bool
	last     time.Time // when the program last drained the queue
	send     func(tea.Msg)
	closed   bool
	done     chan struct{} // closed by close
}

func newMailbox() *mailbox { return &mailbox{done: make(chan struct{})} }

// start sets the function that wakes the program (Program.Send). Until
// then, pushed messages wait in the queue.
func (b *mailbox) start(send func(tea.Msg)) {
	b.mu.Lock()
	b.send = send
	wake := len(b.queue) > 0 && !b.notified
	if wake {
		b.notified = true
	}
	b.mu.Unlock()
	if wake {
		go send(wakeMsg{})
	}
}

// push queues msg for the program. It never blocks; after close it drops
// msg.
func (b *mailbox) push(msg tea.Msg) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, msg)
	if b.notified || b.send == nil {
		b.mu.Unlock()
		return
	}
	b.notified = true
	send, wait := b.send, frame-time.Since(b.last)
	b.mu.Unlock()
	if wait <= 0 {
		go send(wakeMsg{})
		return
	}
	time.AfterFunc(wait, func() { send(wakeMsg{}) })
}

// drain returns the queued messages and lets the next push wake the
// program again.
func (b *mailbox) drain() []tea.Msg {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	b.notified = false
	b.last = time.Now()
	return q
}

// close drops the queue and every later push, and closes done.
func (b *mailbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	b.queue = nil
	close(b.done)
}

// pending reports how many messages wait in the queue.
func (b *mailbox) pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}
