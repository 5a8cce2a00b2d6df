package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/coder/websocket"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// WSPath is where the live session endpoint is served (docs/ws.md).
const WSPath = "/ws"

// WSSubprotocol is the WebSocket subprotocol of the endpoint: JSON-RPC
// 2.0, one object per text frame.
const WSSubprotocol = "a2a.v1"

// Defaults of WSConfig.
const (
	DefaultWSMaxFrameBytes = 1 << 20
	DefaultWSQueueFrames   = 8192
	DefaultWSMaxClients    = 32
	DefaultWSPingInterval  = 30 * time.Second
	DefaultWSIdleTimeout   = 30 * time.Minute
	DefaultWSWriteTimeout  = 10 * time.Second
	// wsMaxInFlight bounds one connection's requests being served.
	wsMaxInFlight = 32
)

// Close codes of the endpoint besides the standard ones (docs/ws.md).
const (
	closeSlow     websocket.StatusCode = 4000
	closeIdle     websocket.StatusCode = 4001
	closeNoPong   websocket.StatusCode = 4002
	closeSwitched websocket.StatusCode = 4003
)

// The notifications the endpoint sends.
const (
	wsEventMethod    = "session/event"
	wsAttachedMethod = "session/attached"
)

// WSConfig sets the live session endpoint's limits; zero values are the
// defaults.
type WSConfig struct {
	// MaxFrameBytes bounds a client's frame; a larger one closes the
	// connection (1009).
	MaxFrameBytes int64
	// QueueFrames bounds the frames waiting for a client that reads
	// slowly; past it the client is closed (4000).
	QueueFrames int
	// MaxClients bounds the clients of one session; one more is closed
	// after the upgrade (1013).
	MaxClients int
	// PingInterval is the keep-alive period: a ping goes out each
	// period, and its pong is due within it (4002). Negative: no pings.
	PingInterval time.Duration
	// IdleTimeout closes a connection without a frame either way for this
	// long (4001). Negative: never.
	IdleTimeout time.Duration
	// ReplayEvents is how many of a session's events are kept for
	// reconnecting clients (DefaultReplayEvents).
	ReplayEvents int
	// WriteTimeout bounds one frame's write: a client that accepts nothing
	// for this long is dropped.
	WriteTimeout time.Duration
	// AllowedOrigins are the browser origins that may open a connection;
	// the HTTP guard in front refuses the others first.
	AllowedOrigins []string
}

func (c WSConfig) withDefaults() WSConfig {
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultWSMaxFrameBytes
	}
	if c.QueueFrames <= 0 {
		c.QueueFrames = DefaultWSQueueFrames
	}
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultWSMaxClients
	}
	if c.PingInterval == 0 {
		c.PingInterval = DefaultWSPingInterval
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultWSIdleTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWSWriteTimeout
	}
	if c.ReplayEvents <= 0 {
		c.ReplayEvents = DefaultReplayEvents
	}
	return c
}

// outFrame is a frame waiting for a client: an event (a notification,
// or a response of call's stream) or a frame already encoded.
type outFrame struct {
	he   *hubEvent
	call *wsCall
	raw  []byte
}

// ownStream is a streaming request of the client: its task's events from
// log position from are its responses.
type ownStream struct {
	call *wsCall
	from int
}

// wsClient is one WebSocket connection.
type wsClient struct {
	s      *Server
	h      *httpHandler
	conn   *websocket.Conn
	cfg    WSConfig
	name   string
	legacy bool // notifications in A2A 0.3's shape
	header http.Header
	host   string
	remote string
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	// active is the time of the last frame either way (Unix nanoseconds).
	active atomic.Int64

	mu     sync.Mutex
	c      *convo
	queue  []outFrame
	spare  []outFrame
	owned  map[a2a.TaskID]ownStream
	dead   bool
	flush  bool // write what is queued before closing
	code   websocket.StatusCode
	reason string
	wake   chan struct{}
	// written is closed when the writer is done.
	written chan struct{}
}

// ws serves GET /ws: the handshake's checks, then the connection.
func (h *httpHandler) ws(w http.ResponseWriter, r *http.Request) {
	s := h.s
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		httpError(w, http.StatusUpgradeRequired, "GET /ws is a WebSocket endpoint: connect with a WebSocket client offering the subprotocol "+WSSubprotocol+" (see docs/ws.md)")
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		httpError(w, http.StatusMethodNotAllowed, "a WebSocket handshake is a GET request")
		return
	}
	if !offers(r.Header, WSSubprotocol) {
		httpError(w, http.StatusBadRequest, "offer the WebSocket subprotocol "+WSSubprotocol+" (Sec-WebSocket-Protocol: "+WSSubprotocol+"): it says the frames are A2A JSON-RPC")
		return
	}
	q := r.URL.Query()
	name, err := clientName(q.Get("name"))
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	legacy := false
	switch v := q.Get("version"); v {
	case "", "1.0", "1":
	case "0.3":
		legacy = true
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("version %q: use 1.0 (the default) or 0.3", v))
		return
	}
	resume, last := false, int64(0)
	if v := q.Get("lastEventId"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("lastEventId %q: want the eventId of the last event received, a number from 0", v))
			return
		}
		resume, last = true, n
	}
	var cv *convo
	if id := q.Get("contextId"); id != "" {
		s.mu.Lock()
		cv = s.contexts[id]
		_, closed := s.idleClosed[id]
		s.mu.Unlock()
		if cv == nil && (closed || s.knownContext(r.Context(), id)) {
			// A context this server closed, or whose tasks are in the
			// task store (it ran before a restart, or on another replica
			// of a cluster): its session opens again from the store, as
			// a message to it would open it.
			var err error
			if cv, err = s.convo(r.Context(), id, ""); err != nil {
				httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("contextId %q: %v", id, err))
				return
			}
		}
		if cv == nil {
			httpError(w, http.StatusNotFound, fmt.Sprintf("contextId %q names no running session on this server; leave it out to follow the context of your first message", id))
			return
		}
	} else {
		cv = s.defaultConvo()
	}
	cfg := s.wsCfg
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:   []string{WSSubprotocol},
		OriginPatterns: s.originPatterns,
	})
	if err != nil {
		return // Accept answered the request
	}
	conn.SetReadLimit(cfg.MaxFrameBytes)
	var first *inFrame
	if cv == nil && s.cfg.WSRelay != nil {
		// One replica of several: the first message's context may be
		// another replica's, whose frames are then relayed there.
		f, ok := s.firstFrame(conn, cfg)
		if !ok {
			return
		}
		if id := s.frameContext(r.Context(), f.data); id != "" && f.typ == websocket.MessageText {
			if target, hdr, ok := s.cfg.WSRelay(r, id); ok {
				s.relayWS(conn, r, cfg, id, target, hdr, f.data)
				return
			}
		}
		first = &f
	}
	header := r.Header.Clone()
	for _, k := range []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Protocol", "Sec-Websocket-Extensions"} {
		header.Del(k)
	}
	// The development-tool extension is always active on /ws.
	header.Set("A2A-Extensions", devtool.URI)
	header.Set("X-A2A-Extensions", devtool.URI)
	c := &wsClient{
		s: s, h: h, conn: conn, cfg: cfg, name: name, legacy: legacy,
		header: header, host: r.Host, remote: r.RemoteAddr,
		slots: make(chan struct{}, wsMaxInFlight),
		owned: map[a2a.TaskID]ownStream{}, wake: make(chan struct{}, 1),
		written: make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.touch()
	go c.writeLoop()
	if cfg.PingInterval > 0 || cfg.IdleTimeout > 0 {
		go c.keepAlive()
	}
	if cv != nil {
		c.join(cv, resume, last)
	}
	c.readLoop(first)
}

// inFrame is a frame read from a client.
type inFrame struct {
	typ  websocket.MessageType
	data []byte
}

// firstFrame reads a connection's first frame, within the idle timeout
// if there is one; false when the connection ended first.
func (s *Server) firstFrame(conn *websocket.Conn, cfg WSConfig) (inFrame, bool) {
	ctx, cancel := s.ctx, context.CancelFunc(func() {})
	if cfg.IdleTimeout > 0 {
		ctx, cancel = context.WithTimeout(s.ctx, cfg.IdleTimeout)
	}
	defer cancel()
	typ, data, err := conn.Read(ctx)
	if err != nil {
		if ctx.Err() != nil && s.ctx.Err() == nil {
			_ = conn.Close(closeIdle, fmt.Sprintf("idle for %s (a2a.ws.idleMinutes)", cfg.IdleTimeout))
		} else {
			_ = conn.CloseNow()
		}
		return inFrame{}, false
	}
	return inFrame{typ, data}, true
}

// frameContext is the context a first frame's request is about: its
// message's contextId, or the context of the task it names; "" for none
// (a new conversation, a malformed frame: served here as usual).
func (s *Server) frameContext(ctx context.Context, data []byte) string {
	var env struct {
		Method string `json:"method"`
		Params struct {
			Message *struct {
				ContextID string `json:"contextId"`
				TaskID    string `json:"taskId"`
			} `json:"message"`
			ID string `json:"id"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &env) != nil {
		return ""
	}
	task := env.Params.ID
	if m := env.Params.Message; m != nil {
		if m.ContextID != "" {
			return m.ContextID
		}
		task = m.TaskID
	}
	if task == "" {
		return ""
	}
	st, err := s.cfg.TaskStore.Get(ctx, a2a.TaskID(task))
	if err != nil || st == nil || st.Task == nil {
		return ""
	}
	return st.Task.ContextID
}

// relayWS passes a connection's frames, first included, to and from the
// /ws endpoint of the replica holding its context (target, a base URL),
// and its close both ways. The relay's handshake offers the client's
// subprotocols and carries its Authorization and header.
func (s *Server) relayWS(client *websocket.Conn, r *http.Request, cfg WSConfig, contextID, target string, header http.Header, first []byte) {
	u, err := url.Parse(target)
	if err != nil {
		_ = client.Close(websocket.StatusInternalError, fmt.Sprintf("context %s is served by the replica at %q, which is not a URL", contextID, target))
		return
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	q := r.URL.Query()
	q.Set("contextId", contextID)
	u.Path, u.RawQuery = strings.TrimSuffix(u.Path, "/")+WSPath, q.Encode()
	hdr := header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	if a := r.Header.Get("Authorization"); a != "" {
		hdr.Set("Authorization", a)
	}
	var protos []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, e := range strings.Split(v, ",") {
			protos = append(protos, strings.TrimSpace(e))
		}
	}
	dctx, cancel := context.WithTimeout(s.ctx, cfg.WriteTimeout)
	up, _, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: protos})
	cancel()
	if err != nil {
		s.log.Warn("a2a: ws: relaying to the context's replica", "context", contextID, "target", target, "err", err)
		_ = client.Close(websocket.StatusTryAgainLater, fmt.Sprintf("context %s is served by the replica at %s, which cannot be reached now: connect again", contextID, target))
		return
	}
	up.SetReadLimit(cfg.MaxFrameBytes)
	ctx, stop := context.WithCancel(s.ctx)
	defer stop()
	if err := up.Write(ctx, websocket.MessageText, first); err != nil {
		_ = up.CloseNow()
		_ = client.Close(websocket.StatusTryAgainLater, "the relay to the context's replica failed: connect again")
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(from, to *websocket.Conn) {
		defer func() { done <- struct{}{} }()
		for {
			typ, data, err := from.Read(ctx)
			if err != nil {
				code, reason := websocket.CloseStatus(err), ""
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					reason = ce.Reason
				}
				switch {
				case code == -1 && ctx.Err() != nil:
					_ = to.Close(websocket.StatusGoingAway, "the server is shutting down")
				case code == -1:
					_ = to.CloseNow()
				default:
					_ = to.Close(code, reason)
				}
				stop()
				return
			}
			if err := to.Write(ctx, typ, data); err != nil {
				_ = from.CloseNow()
				stop()
				return
			}
		}
	}
	go pipe(client, up)
	go pipe(up, client)
	<-done
	<-done
}

// offers reports whether a handshake offers the subprotocol p.
func offers(h http.Header, p string) bool {
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for _, e := range strings.Split(v, ",") {
			if strings.TrimSpace(e) == p {
				return true
			}
		}
	}
	return false
}

// clientName checks the name a client gives itself.
func clientName(n string) (string, error) {
	if len(n) > 64 {
		return "", fmt.Errorf("name is %d bytes: at most 64", len(n))
	}
	for _, r := range n {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("name %q: printable characters only", n)
		}
	}
	return n, nil
}

// defaultConvo is the session a connection without contextId follows:
// the adopted one, if the server serves one.
func (s *Server) defaultConvo() *convo {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.contexts {
		if c.adopted {
			return c
		}
	}
	return nil
}

func (c *wsClient) touch() { c.active.Store(c.s.now().UnixNano()) }

// join attaches the client to a context's hub: session/attached, then
// the retained events after last (resume) or the active turn so far,
// then live events.
func (c *wsClient) join(cv *convo, resume bool, last int64) {
	c.mu.Lock()
	if c.c != nil || c.dead {
		c.mu.Unlock()
		return
	}
	c.c = cv
	c.mu.Unlock()

	cv.joinMu.Lock()
	defer cv.joinMu.Unlock()
	cv.mu.Lock()
	h := cv.hub
	var pending []*liveTask
	if h == nil {
		h = newHub(c.cfg.ReplayEvents)
		cv.hub = h
		if cv.active != nil {
			pending = append(pending, cv.active)
		}
		pending = append(pending, cv.queue...)
	}
	active := cv.active
	cv.mu.Unlock()
	for _, t := range pending {
		t.setHub(h)
	}
	if active != nil {
		active.mu.Lock()
		defer active.mu.Unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		c.fail(websocket.StatusGoingAway, "the session ended")
		return
	}
	if len(h.clients) >= c.cfg.MaxClients {
		c.fail(websocket.StatusTryAgainLater, fmt.Sprintf("the session has its maximum of %d clients (a2a.ws.maxClients)", c.cfg.MaxClients))
		return
	}
	var replay []*hubEvent
	gap := false
	if resume {
		var complete bool
		replay, complete = h.since(last)
		gap = !complete
	}
	taskID := ""
	if active != nil {
		taskID = string(active.id)
	}
	attached := map[string]any{
		"contextId": cv.id, "taskId": taskID, "lastEventId": h.seq,
		"replayed": len(replay), "gap": gap,
	}
	if gap {
		attached["replayed"] = 0
	}
	c.push(outFrame{raw: notification(wsAttachedMethod, attached)})
	if resume && !gap {
		for _, he := range replay {
			c.offer(he)
		}
	} else if active != nil {
		// The turn so far, as one task; live events follow.
		c.offer(&hubEvent{seq: h.seq, task: active.id, idx: -1, ev: active.snapshotLocked(nil)})
	}
	h.clients[c] = struct{}{}
	c.mu.Lock()
	gone := c.dead
	c.mu.Unlock()
	if gone {
		// It left while joining: its reader's leave may have come first.
		delete(h.clients, c)
	}
}

// knownContext reports whether the task store has a task of context id.
func (s *Server) knownContext(ctx context.Context, id string) bool {
	res, err := s.cfg.TaskStore.List(ctx, &a2a.ListTasksRequest{ContextID: id, PageSize: 1})
	return err == nil && res != nil && len(res.Tasks) > 0
}

// follow attaches a connection that named no context to the context its
// first message went to.
func (c *wsClient) follow(cv *convo) {
	c.mu.Lock()
	attached := c.c != nil
	c.mu.Unlock()
	if !attached {
		c.join(cv, false, 0)
	}
}

// own makes the events of task from log position from the responses of
// call's stream.
func (c *wsClient) own(task a2a.TaskID, from int, call *wsCall) {
	c.mu.Lock()
	c.owned[task] = ownStream{call: call, from: from}
	c.mu.Unlock()
}

// offer queues an event for the client: a response of its own stream, or
// a notification. It never blocks; a client whose queue is full is
// closed.
func (c *wsClient) offer(he *hubEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	f := outFrame{he: he}
	if os, ok := c.owned[he.task]; ok && he.idx >= os.from {
		f.call = os.call
		if ends(he.ev) {
			delete(c.owned, he.task)
		}
	} else if he.seq == 0 {
		return // a failed task's events, for its own stream only
	}
	c.pushLocked(f)
}

func (c *wsClient) push(f outFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pushLocked(f)
}

func (c *wsClient) pushLocked(f outFrame) {
	if c.dead {
		return
	}
	c.queue = append(c.queue, f)
	if len(c.queue) > c.cfg.QueueFrames {
		c.failLocked(closeSlow, fmt.Sprintf("the client fell behind: %d frames were waiting for it (a2a.ws.queueFrames)", c.cfg.QueueFrames))
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// fail closes the connection with code and reason: the writer sends the
// close frame after the frame it is writing.
func (c *wsClient) fail(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(code, reason)
}

func (c *wsClient) failLocked(code websocket.StatusCode, reason string) {
	if c.dead {
		return
	}
	c.dead, c.code, c.reason = true, code, reason
	if !c.flush {
		clear(c.queue)
		c.queue = c.queue[:0]
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued frames in order; it closes the connection
// when the client fails.
func (c *wsClient) writeLoop() {
	defer close(c.written)
	defer c.cancel()
	// A frame's write is bounded by one timer, reset for each frame,
	// rather than by a context with a deadline per frame: broadcasting to
	// 100 clients, those contexts were a fifth of the CPU time a frame
	// costs (BenchmarkWSBroadcast). The timer ends a stalled write by
	// closing the connection, as the deadline did.
	stalled := time.AfterFunc(c.cfg.WriteTimeout, func() {
		c.fail(websocket.StatusGoingAway, "write failed")
		_ = c.conn.CloseNow()
	})
	stalled.Stop()
	defer stalled.Stop()
	buf := make([]byte, 0, 4096)
	for {
		select {
		case <-c.wake:
		case <-c.ctx.Done():
			return
		}
		for {
			c.mu.Lock()
			batch, dead := c.queue, c.dead
			c.queue, c.spare = c.spare[:0], nil
			code, reason := c.code, c.reason
			c.mu.Unlock()
			if len(batch) == 0 || dead && !c.flushing() {
				if dead {
					_ = c.conn.Close(code, reason)
					return
				}
				break
			}
			for i := range batch {
				var ok bool
				if buf, ok = c.frame(buf[:0], batch[i]); !ok {
					continue
				}
				stalled.Reset(c.cfg.WriteTimeout)
				if tr := c.s.wsTrace; tr != nil {
					tr(false, c, buf)
				}
				err := c.conn.Write(c.ctx, websocket.MessageText, buf)
				stalled.Stop()
				if err != nil {
					c.fail(websocket.StatusGoingAway, "write failed")
					_ = c.conn.CloseNow()
					return
				}
			}
			c.touch()
			if cap(buf) > 64<<10 {
				buf = make([]byte, 0, 4096)
			}
			clear(batch)
			c.mu.Lock()
			c.spare = batch[:0]
			c.mu.Unlock()
			if dead {
				_ = c.conn.Close(code, reason)
				return
			}
		}
	}
}

func (c *wsClient) flushing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flush
}

// frame appends f's JSON-RPC frame to b.
func (c *wsClient) frame(b []byte, f outFrame) ([]byte, bool) {
	if f.raw != nil {
		return append(b, f.raw...), true
	}
	legacy := c.legacy
	if f.call != nil {
		legacy = f.call.legacy
	}
	payload, err := f.he.json(legacy)
	if err != nil {
		c.s.log.Warn("a2a: ws: cannot encode an event", "task", f.he.task, "err", err)
		return b, false
	}
	if f.call != nil {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, f.call.id...)
		if f.he.seq > 0 {
			b = append(b, `,"eventId":`...)
			b = strconv.AppendInt(b, f.he.seq, 10)
		}
		b = append(b, `,"result":`...)
		b = append(b, payload...)
		return append(b, '}'), true
	}
	b = append(b, `{"jsonrpc":"2.0","method":"`+wsEventMethod+`","params":{"eventId":`...)
	b = strconv.AppendInt(b, f.he.seq, 10)
	b = append(b, `,"event":`...)
	b = append(b, payload...)
	return append(b, "}}"...), true
}

// notification encodes a notification frame.
func notification(method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	return b
}

// keepAlive pings the client and closes it when a pong is late or the
// connection has been idle too long.
func (c *wsClient) keepAlive() {
	period := c.cfg.PingInterval
	if period <= 0 || (c.cfg.IdleTimeout > 0 && c.cfg.IdleTimeout < period) {
		period = max(c.cfg.IdleTimeout/4, time.Millisecond)
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		if idle := c.cfg.IdleTimeout; idle > 0 {
			if since := c.s.now().Sub(time.Unix(0, c.active.Load())); since >= idle {
				c.fail(closeIdle, fmt.Sprintf("idle for %s (a2a.ws.idleMinutes)", idle))
				return
			}
		}
		if c.cfg.PingInterval > 0 {
			pctx, cancel := context.WithTimeout(c.ctx, c.cfg.PingInterval)
			err := c.conn.Ping(pctx)
			cancel()
			if err != nil {
				if c.ctx.Err() == nil {
					c.fail(closeNoPong, fmt.Sprintf("no pong within %s", c.cfg.PingInterval))
				}
				return
			}
		}
	}
}

// readLoop reads the client's frames until the connection ends.
func (c *wsClient) readLoop(first *inFrame) {
	defer func() {
		c.mu.Lock()
		cv, dead := c.c, c.dead
		c.dead = true // no more frames, and no join after the leave below
		c.mu.Unlock()
		if cv != nil {
			if h := cv.currentHub(); h != nil {
				h.leave(c)
			}
		}
		if !dead {
			// The client closed or went away; a failed client is closed
			// by the writer, with its code.
			c.cancel()
			_ = c.conn.CloseNow()
		}
	}()
	for {
		var (
			typ  websocket.MessageType
			data []byte
			err  error
		)
		if first != nil {
			typ, data, first = first.typ, first.data, nil
		} else if typ, data, err = c.conn.Read(c.ctx); err != nil {
			return // closed, too big (coder/websocket sent 1009), or gone
		}
		c.touch()
		if tr := c.s.wsTrace; tr != nil {
			tr(true, c, data)
		}
		if typ != websocket.MessageText {
			c.fail(websocket.StatusUnsupportedData, "binary frames are not used: send each JSON-RPC request as a text frame")
			return
		}
		if !c.handle(data) {
			return
		}
	}
}

// rpcError is a JSON-RPC error response.
func rpcErrorFrame(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rawID(id), "error": map[string]any{"code": code, "message": msg}})
	return b
}

// JSON-RPC 2.0 codes the endpoint itself answers with.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcServerBusy     = -32000
)

// handle answers one frame; false closes the connection.
func (c *wsClient) handle(data []byte) bool {
	var env rpcEnvelope
	err := json.Unmarshal(data, &env)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) || err != nil && !json.Valid(data) {
		c.mu.Lock()
		c.pushLocked(outFrame{raw: rpcErrorFrame(nil, rpcParseError, "the frame is not JSON: send one JSON-RPC 2.0 request per text frame")})
		c.flush = true
		c.failLocked(websocket.StatusInvalidFramePayloadData, "a frame that is not JSON")
		c.mu.Unlock()
		return false
	}
	if err != nil || env.JSONRPC != "2.0" || env.Method == "" {
		c.push(outFrame{raw: rpcErrorFrame(env.ID, rpcInvalidRequest, `not a JSON-RPC 2.0 request: want {"jsonrpc": "2.0", "id": …, "method": …, "params": …}`)})
		return true
	}
	var id any
	if len(env.ID) == 0 || json.Unmarshal(env.ID, &id) != nil || id == nil {
		c.push(outFrame{raw: rpcErrorFrame(nil, rpcInvalidRequest, fmt.Sprintf("request %s has no id: every request on /ws needs one (a string or a number)", env.Method))})
		return true
	}
	switch id.(type) {
	case string, float64:
	default:
		c.push(outFrame{raw: rpcErrorFrame(nil, rpcInvalidRequest, "the id must be a string or a number")})
		return true
	}
	select {
	case c.slots <- struct{}{}:
	default:
		c.push(outFrame{raw: rpcErrorFrame(env.ID, rpcServerBusy, fmt.Sprintf("%d requests of this connection are being served: wait for one to end", wsMaxInFlight))})
		return true
	}
	go func() {
		defer func() { <-c.slots }()
		c.serve(env)
	}()
	return true
}

// serve answers one request.
func (c *wsClient) serve(env rpcEnvelope) {
	switch env.Method {
	case methodStream, methodLegacyStream:
		c.sendStreaming(env, env.Method == methodLegacyStream)
	case methodSubscribe, methodLegacySubscribe:
		c.subscribe(env, env.Method == methodLegacySubscribe)
	case "SendMessage", "message/send":
		params, err := c.withContext(env.Params)
		if err != nil {
			c.push(outFrame{raw: rpcErrorFrame(env.ID, rpcInvalidParams, err.Error())})
			return
		}
		env.Params = params
		c.inProcess(env, &wsCall{client: c, id: env.ID, legacy: env.Method == "message/send"})
	default:
		c.inProcess(env, nil)
	}
}

// errWrongContext refuses a message for another context than the one the
// connection follows.
type errWrongContext struct{ follows, named string }

func (e errWrongContext) Error() string {
	return fmt.Sprintf("this connection follows context %s; open another connection (contextId=%s) for context %s", e.follows, e.named, e.named)
}

// contextID is the context the connection follows, "" before any.
func (c *wsClient) contextID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return ""
	}
	return c.c.id
}

// withContext sets a message's contextId to the connection's context, or
// refuses another one: every message on a connection is a turn of its
// session.
func (c *wsClient) withContext(params json.RawMessage) (json.RawMessage, error) {
	follows := c.contextID()
	if follows == "" {
		return params, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil || p == nil {
		return params, nil // the handler refuses it
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p["message"], &m); err != nil || m == nil {
		return params, nil
	}
	var named string
	if raw, ok := m["contextId"]; ok {
		_ = json.Unmarshal(raw, &named)
	}
	switch named {
	case follows:
		return params, nil
	case "":
		m["contextId"], _ = json.Marshal(follows)
	default:
		return nil, errWrongContext{follows, named}
	}
	p["message"], _ = json.Marshal(m)
	return json.Marshal(p)
}

// callContext is a request's context as the A2A handler wants it: the
// handshake's headers (the extension activated) and the call's origin.
func (c *wsClient) callContext(call *wsCall, legacy bool) context.Context {
	params := a2asrv.NewServiceParams(c.header)
	if legacy {
		params = a2av0.ToServiceParams(c.header)
	}
	ctx, _ := a2asrv.NewCallContext(c.ctx, params)
	if call != nil {
		ctx = context.WithValue(ctx, wsKey{}, call)
	}
	return ctx
}

// sendStreaming starts or resumes a task whose events are the request's
// responses (they come through the hub, in order with the session's
// other events).
func (c *wsClient) sendStreaming(env rpcEnvelope, legacy bool) {
	var req *a2a.SendMessageRequest
	var err error
	if legacy {
		var p a2alegacy.MessageSendParams
		if err = json.Unmarshal(env.Params, &p); err == nil {
			req, err = a2av0.ToV1SendMessageRequest(&p)
		}
	} else {
		req = &a2a.SendMessageRequest{}
		err = json.Unmarshal(env.Params, req)
	}
	call := &wsCall{client: c, id: env.ID, stream: true, legacy: legacy}
	ctx := c.callContext(call, legacy)
	if err != nil {
		c.push(outFrame{raw: c.errorFrame(ctx, env.ID, legacy, paramsError(err))})
		return
	}
	if m := req.Message; m != nil {
		// Every message on a connection is a turn of its session.
		switch follows := c.contextID(); {
		case follows == "" || m.ContextID == follows:
		case m.ContextID == "":
			m.ContextID = follows
		default:
			c.push(outFrame{raw: rpcErrorFrame(env.ID, rpcInvalidParams, errWrongContext{follows, m.ContextID}.Error())})
			return
		}
	}
	if req.Config == nil {
		req.Config = &a2a.SendMessageConfig{}
	}
	req.Config.ReturnImmediately = true
	if _, err := c.s.handler.SendMessage(ctx, req); err != nil {
		c.push(outFrame{raw: c.errorFrame(ctx, env.ID, legacy, err)})
	}
}

// errorFrame renders err as a2a-go renders it on the JSON-RPC binding.
func (c *wsClient) errorFrame(ctx context.Context, id json.RawMessage, legacy bool, err error) []byte {
	errs, method := c.h.errs, "GetTask"
	if legacy {
		errs, method = c.h.errs0, "tasks/get"
	}
	return errorJSON(ctx, errs, method, id, err)
}

// subscribe follows a running task of the connection's context (a
// connection that named none follows the task's): the task now, then its
// events, as the request's responses.
func (c *wsClient) subscribe(env rpcEnvelope, legacy bool) {
	call := &wsCall{client: c, id: env.ID, stream: true, legacy: legacy}
	ctx := c.callContext(call, legacy)
	var id a2a.TaskID
	if legacy {
		var p a2alegacy.TaskIDParams
		if err := json.Unmarshal(env.Params, &p); err != nil {
			c.push(outFrame{raw: c.errorFrame(ctx, env.ID, legacy, paramsError(err))})
			return
		}
		id = a2a.TaskID(p.ID)
	} else {
		var p a2a.SubscribeToTaskRequest
		if err := json.Unmarshal(env.Params, &p); err != nil {
			c.push(outFrame{raw: c.errorFrame(ctx, env.ID, legacy, paramsError(err))})
			return
		}
		id = p.ID
	}
	t := c.s.getLive(id)
	if t == nil {
		err := a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s is not running on this server; GetTask reads a finished one", id))
		c.push(outFrame{raw: c.errorFrame(ctx, env.ID, legacy, err)})
		return
	}
	if c.contextID() == "" {
		// A connection that named no context follows the task's: its
		// events come through the context's hub. (join takes t.mu.)
		t.mu.Lock()
		cv, contextID := t.c, t.task.ContextID
		t.mu.Unlock()
		if cv == nil {
			// Queued behind the context's active task.
			c.s.mu.Lock()
			cv = c.s.contexts[contextID]
			c.s.mu.Unlock()
		}
		if cv != nil {
			c.follow(cv)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if follows := c.contextID(); follows != "" && follows != t.task.ContextID {
		c.push(outFrame{raw: c.errorFrame(ctx, env.ID, legacy, a2a.NewError(a2a.ErrInvalidParams, errWrongContext{follows, t.task.ContextID}.Error()))})
		return
	}
	var seq int64
	if t.hub != nil {
		t.hub.mu.Lock()
		seq = t.hub.seq
		t.hub.mu.Unlock()
	}
	c.own(t.id, len(t.log), call)
	c.offer(&hubEvent{seq: seq, task: t.id, idx: len(t.log), ev: t.snapshotLocked(nil)})
}

// inProcess serves a request through the JSON-RPC binding's handler,
// each JSON-RPC response it writes (one, or a stream's) becoming a frame.
func (c *wsClient) inProcess(env rpcEnvelope, call *wsCall) {
	body, _ := json.Marshal(env)
	ctx := c.ctx
	if call != nil {
		ctx = context.WithValue(ctx, wsKey{}, call)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	if err != nil {
		c.push(outFrame{raw: rpcErrorFrame(env.ID, rpcInternalError, err.Error())})
		return
	}
	r.Header = c.header.Clone()
	r.Header.Set("Content-Type", "application/json")
	r.Host, r.RemoteAddr = c.host, c.remote
	r.URL = &url.URL{Path: "/"}
	w := &frameWriter{c: c, id: env.ID, header: http.Header{}}
	c.h.jsonrpc(w, r)
	w.finish()
}

// frameWriter turns what the JSON-RPC handler writes into frames: one
// JSON body, or each data line of an event stream.
type frameWriter struct {
	c      *wsClient
	id     json.RawMessage
	header http.Header
	buf    []byte
}

func (w *frameWriter) Header() http.Header { return w.header }
func (w *frameWriter) WriteHeader(int)     {}
func (w *frameWriter) Flush()              { w.split() }

func (w *frameWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	w.split()
	return len(p), nil
}

func (w *frameWriter) stream() bool {
	return strings.HasPrefix(w.header.Get("Content-Type"), "text/event-stream")
}

// split sends the complete events of an event stream.
func (w *frameWriter) split() {
	if !w.stream() {
		return
	}
	for {
		i := bytes.Index(w.buf, []byte("\n\n"))
		if i < 0 {
			return
		}
		for _, line := range bytes.Split(w.buf[:i], []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				w.c.push(outFrame{raw: bytes.Clone(bytes.TrimSpace(data))})
			}
		}
		w.buf = w.buf[i+2:]
	}
}

// finish sends a plain response.
func (w *frameWriter) finish() {
	if w.stream() {
		w.split()
		return
	}
	b := bytes.TrimSpace(w.buf)
	if len(b) == 0 {
		return
	}
	var resp struct {
		JSONRPC string `json:"jsonrpc"`
		Error   any    `json:"error"`
	}
	if json.Unmarshal(b, &resp) != nil || resp.JSONRPC != "2.0" {
		// An HTTP refusal of the binding ({"error": "…"}), not a JSON-RPC
		// response: the same message as a JSON-RPC error.
		msg, _ := resp.Error.(string)
		if msg == "" {
			msg = string(b)
		}
		w.c.push(outFrame{raw: rpcErrorFrame(w.id, rpcInvalidRequest, msg)})
		return
	}
	w.c.push(outFrame{raw: bytes.Clone(b)})
}

// closeHubs closes every WebSocket client of the contexts cs and waits,
// at most the write timeout, for each to be sent what was queued for it
// and the close: a server that shuts down as a turn ends (a headless
// run's) still delivers the turn's last events.
func (s *Server) closeHubs(cs []*convo) {
	var clients []*wsClient
	for _, c := range cs {
		if h := c.currentHub(); h != nil {
			clients = append(clients, h.close(websocket.StatusGoingAway, "the server is shutting down")...)
		}
	}
	if len(clients) == 0 {
		return
	}
	deadline := time.NewTimer(s.wsCfg.WriteTimeout)
	defer deadline.Stop()
	for _, c := range clients {
		select {
		case <-c.written:
		case <-deadline.C:
			return
		}
	}
}
