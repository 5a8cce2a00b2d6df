package protocol

import (
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
)

// DefaultReplayEvents is how many of a session's events its hub keeps
// for clients that reconnect.
const DefaultReplayEvents = 4096

// hubEvent is one event of a session as every WebSocket client gets it:
// its place in the session (seq), its task and place in the task's log,
// and its JSON, encoded once for all clients in each A2A version.
type hubEvent struct {
	seq  int64
	task a2a.TaskID
	idx  int
	ev   a2a.Event
	enc  [2]encoded // [0] A2A 1.0, [1] A2A 0.3
}

type encoded struct {
	once sync.Once
	b    []byte
	err  error
}

// json returns the event's stream-response JSON (the SSE binding's
// result), encoding it on first use.
func (e *hubEvent) json(legacy bool) ([]byte, error) {
	i := 0
	if legacy {
		i = 1
	}
	enc := &e.enc[i]
	enc.once.Do(func() {
		w := wireEncoder{legacy: legacy}
		enc.b, enc.err = w.event(nil, e.ev)
	})
	return enc.b, enc.err
}

// hub is a context's broadcast of task events to its WebSocket clients:
// every event of every task run on the session, numbered in the order
// published, the last ones kept for reconnecting clients. Tasks publish
// with their own lock held (lock order: liveTask.mu, then hub.mu, then a
// client's), so a task's events reach every client in log order.
type hub struct {
	retain int

	mu      sync.Mutex
	seq     int64
	ring    []*hubEvent // oldest first; at most 2×retain, trimmed to retain
	clients map[*wsClient]struct{}
	closed  bool
}

func newHub(retain int) *hub {
	if retain <= 0 {
		retain = DefaultReplayEvents
	}
	return &hub{retain: retain, clients: map[*wsClient]struct{}{}}
}

// publish numbers a task's events (from log position idx) and offers
// them to every client. The caller holds the task's lock.
func (h *hub) publish(task a2a.TaskID, idx int, evs []a2a.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, ev := range evs {
		h.seq++
		he := &hubEvent{seq: h.seq, task: task, idx: idx + i, ev: ev}
		if len(h.ring) >= 2*h.retain {
			n := copy(h.ring, h.ring[len(h.ring)-h.retain+1:])
			clear(h.ring[n:])
			h.ring = h.ring[:n]
		}
		h.ring = append(h.ring, he)
		for c := range h.clients {
			c.offer(he)
		}
	}
}

// since returns the retained events after seq and whether every event
// after it is still retained. The caller holds h.mu.
func (h *hub) since(seq int64) ([]*hubEvent, bool) {
	switch {
	case seq > h.seq:
		return nil, false // ids from another server process
	case seq == h.seq:
		return nil, true
	case len(h.ring) == 0:
		return nil, false
	}
	first := h.ring[0].seq
	from := max(seq+1, first)
	return h.ring[len(h.ring)-int(h.seq-from+1):], seq+1 >= first
}

// leave removes a client.
func (h *hub) leave(c *wsClient) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// count is the number of clients.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// close ends every client, each after the frames already queued for it
// (the end of a turn that just finished): the session is gone. It
// returns the clients closed.
func (h *hub) close(code websocket.StatusCode, reason string) []*wsClient {
	h.mu.Lock()
	h.closed = true
	cs := make([]*wsClient, 0, len(h.clients))
	for c := range h.clients {
		cs = append(cs, c)
	}
	clear(h.clients)
	h.mu.Unlock()
	for _, c := range cs {
		c.mu.Lock()
		c.flush = true
		c.failLocked(code, reason)
		c.mu.Unlock()
	}
	return cs
}
