// Package wsclient is a client of agentry's live session endpoint, GET /ws
// (docs/ws.md): the A2A JSON-RPC binding in WebSocket text frames, one
// JSON-RPC object per frame, every request multiplexed by its id over one
// connection, and the server's notifications of the session's events.
//
// One goroutine reads the connection and hands each frame to whoever
// waits for it: a Call's response, a Stream's responses, the
// notifications Events yields. One goroutine writes, so that requests
// from many goroutines go out whole, one at a time, in the order they were
// handed over, and a caller's context never cuts a frame in half.
//
// Nothing the client keeps grows without bound. Frames that nobody has
// taken yet wait in queues of at most Options.MaxQueued frames each (the
// notifications, and each stream's responses); a reader that lets its
// queue fill up makes the client close the connection (code 1008) and
// fail every request with ErrFellBehind, as the server closes a client
// that stops reading (code 4000). So a caller must range over Events, and
// over every Stream it starts, for as long as the connection lives.
package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol of the endpoint; the client
// offers it and the server must select it.
const Subprotocol = "a2a.v1"

// Defaults of Options.
const (
	// DefaultMaxFrameBytes is the server's default frame limit
	// (a2a.ws.maxFrameBytes).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxQueued is the server's default queue bound
	// (a2a.ws.queueFrames).
	DefaultMaxQueued = 8192
)

// Errors of a connection.
var (
	// ErrClosed reports a call on a connection the caller closed.
	ErrClosed = errors.New("wsclient: connection closed")
	// ErrFellBehind reports a connection the client closed because a
	// queue of frames nobody took (Events, or a Stream's frames) was full.
	ErrFellBehind = errors.New("wsclient: the caller fell behind reading the server's frames; the connection was closed")
)

// Options configure Dial.
type Options struct {
	// Token is the server's bearer token, sent in the handshake as
	// "Authorization: Bearer <token>"; never in the URL, which servers
	// and proxies log.
	Token string
	// Name is the client's name, shown in the terminal beside the prompts
	// it sends ("[A2A name]").
	Name string
	// ContextID is the session to follow; "" follows the server's
	// default.
	ContextID string
	// LastEventID is the last event a previous connection saw (its
	// Conn.LastEventID), to reconnect without a gap; 0 is a new client.
	LastEventID int64
	// FromStart asks for every event the session still keeps (the
	// turns so far, as notifications) before the live ones.
	FromStart bool
	// Version is "0.3" for A2A 0.3 payloads in notifications; "" is 1.0.
	// DecodeEvent reads both.
	Version string
	// HTTPClient makes the handshake; nil is http.DefaultClient.
	HTTPClient *http.Client
	// MaxFrameBytes bounds a frame either way; 0 is DefaultMaxFrameBytes.
	// The server closes a connection that sends a larger one (1009); the
	// client refuses to send one, and closes on receiving one.
	MaxFrameBytes int64
	// MaxQueued bounds each queue of frames waiting for their reader (see
	// the package documentation); 0 is DefaultMaxQueued.
	MaxQueued int
	// Logger receives the client's debug logs; nil is slog.Default().
	Logger *slog.Logger
}

// Conn is a connection to the endpoint. Its methods are safe for
// concurrent use.
type Conn struct {
	ws        *websocket.Conn
	log       *slog.Logger
	maxFrame  int64
	maxQueued int

	// ctx lives as long as the connection: the writer's and the reader's.
	ctx    context.Context
	cancel context.CancelFunc
	out    chan []byte   // frames for the writer
	done   chan struct{} // closed once the connection has ended
	notes  *queue[Notification]

	nextID    atomic.Int64
	lastEvent atomic.Int64

	mu      sync.Mutex // guards the fields below
	pending map[int64]*request
	ended   bool
	closing bool  // Close was called
	err     error // why the connection ended
	// closeCode and closeReason are the server's close frame's.
	closeCode   int
	closeReason string
}

// Dial opens a connection to the endpoint at rawURL (ws://, wss://, or
// http:// and https:// taken as those), offering Subprotocol, with the
// token in the Authorization header and the other options in the query
// (contextId, lastEventId, name, version). ctx bounds the handshake only.
// A refusal before the upgrade is a *HandshakeError.
func Dial(ctx context.Context, rawURL string, opts Options) (*Conn, error) {
	u, err := dialURL(rawURL, opts)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	if opts.Token != "" {
		header.Set("Authorization", "Bearer "+opts.Token)
	}
	ws, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient:   opts.HTTPClient,
		HTTPHeader:   header,
		Subprotocols: []string{Subprotocol},
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("wsclient: dial %s: %w", u.Redacted(), handshakeError(resp))
		}
		return nil, fmt.Errorf("wsclient: dial %s: %w", u.Redacted(), err)
	}
	if got := ws.Subprotocol(); got != Subprotocol {
		ws.Close(websocket.StatusProtocolError, "subprotocol "+Subprotocol+" was not selected")
		return nil, fmt.Errorf("wsclient: dial %s: the server selected subprotocol %q, not %s: it does not speak agentry's /ws", u.Redacted(), got, Subprotocol)
	}
	c := newConn(ws, opts)
	go c.read()
	go c.write()
	return c, nil
}

// dialURL is rawURL with the options' query parameters.
func dialURL(rawURL string, opts Options) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("wsclient: bad URL: %w", err)
	}
	switch u.Scheme {
	case "ws", "wss", "http", "https":
	default:
		return nil, fmt.Errorf("wsclient: URL %s: want a ws:// or wss:// URL", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("wsclient: URL %s has no host", u.Redacted())
	}
	q := u.Query()
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("contextId", opts.ContextID)
	if opts.LastEventID > 0 || opts.FromStart {
		set("lastEventId", strconv.FormatInt(opts.LastEventID, 10))
	}
	set("name", opts.Name)
	set("version", opts.Version)
	u.RawQuery = q.Encode()
	return u, nil
}

// HandshakeError is the server's refusal of the handshake: its HTTP
// status and the reason its JSON body gives ({"error": "…"}), which says
// what to change (docs/ws.md: 400, 401, 403, 404, 426).
type HandshakeError struct {
	StatusCode int
	Message    string
}

func (e *HandshakeError) Error() string {
	s := fmt.Sprintf("the server refused the connection: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// handshakeError reads a refusal's body (the WebSocket library keeps
// its first 1,024 bytes).
func handshakeError(resp *http.Response) *HandshakeError {
	he := &HandshakeError{StatusCode: resp.StatusCode}
	if resp.Body == nil {
		return he
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	var body struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && body.Error != "" {
		he.Message = body.Error
	} else {
		he.Message = strings.TrimSpace(string(b))
	}
	return he
}

func newConn(ws *websocket.Conn, opts Options) *Conn {
	c := &Conn{ws: ws, log: opts.Logger, maxFrame: opts.MaxFrameBytes, maxQueued: opts.MaxQueued,
		out: make(chan []byte, 16), done: make(chan struct{}), pending: map[int64]*request{}}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.maxFrame <= 0 {
		c.maxFrame = DefaultMaxFrameBytes
	}
	if c.maxQueued <= 0 {
		c.maxQueued = DefaultMaxQueued
	}
	c.notes = newQueue[Notification](c.maxQueued)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	ws.SetReadLimit(c.maxFrame)
	return c
}

// CloseError is the server's close frame: the connection ended with its
// code and reason (docs/ws.md, "Limits and closing").
type CloseError struct {
	Code   int
	Reason string
}

// closeMeanings are the codes docs/ws.md defines.
var closeMeanings = map[int]string{
	1000: "closed normally",
	1001: "the server is shutting down, or the session ended",
	1003: "the client sent a binary frame",
	1007: "the client sent a frame that is not JSON",
	1009: "a frame was over the size limit",
	1013: "the session has its maximum of clients",
	4000: "the client fell behind: its queue was full",
	4001: "idle timeout",
	4002: "no pong to a ping",
	4003: "the terminal switched to another session",
}

func (e *CloseError) Error() string {
	s := fmt.Sprintf("wsclient: the server closed the connection (code %d", e.Code)
	if m := closeMeanings[e.Code]; m != "" {
		s += ": " + m
	}
	s += ")"
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// CloseStatus returns the code and reason of the server's close frame, or
// 0 and "" while the connection is open, or when it ended otherwise (the
// caller closed it, the network failed).
func (c *Conn) CloseStatus() (code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeCode, c.closeReason
}

// Done is closed when the connection has ended, for whatever reason.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended: nil while it is open, ErrClosed
// after Close, a *CloseError when the server closed it, ErrFellBehind, or
// the network's error.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// LastEventID returns the highest eventId the connection has seen, on
// responses, session/event notifications and session/attached's
// lastEventId: what Options.LastEventID takes to reconnect without a gap.
func (c *Conn) LastEventID() int64 { return c.lastEvent.Load() }

// noteEventID raises LastEventID to id.
func (c *Conn) noteEventID(id int64) {
	for {
		cur := c.lastEvent.Load()
		if id <= cur || c.lastEvent.CompareAndSwap(cur, id) {
			return
		}
	}
}

// Close closes the connection with code 1000 and waits until it has
// ended; calls and streams still open fail with ErrClosed and Events ends.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.ended || c.closing {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closing = true
	c.mu.Unlock()
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	c.end(ErrClosed)
	<-c.done
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("wsclient: close: %w", err)
	}
	return nil
}

// end ends the connection once, with err: every request and the
// notifications fail with it (a request closed meanwhile has nothing to
// fail).
func (c *Conn) end(err error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	if c.closing {
		err = ErrClosed
	}
	c.err = err
	var ce *CloseError
	if errors.As(err, &ce) {
		c.closeCode, c.closeReason = ce.Code, ce.Reason
	}
	pending := c.pending
	c.pending = map[int64]*request{}
	c.mu.Unlock()
	for _, r := range pending {
		r.q.finish(err)
	}
	c.notes.finish(err)
	c.cancel()
	close(c.done)
}

// abort ends the connection with err, then closes it with code and
// reason (which waits for the server's close frame, briefly).
func (c *Conn) abort(err error, code websocket.StatusCode, reason string) {
	c.end(err)
	c.ws.Close(code, reason)
}

// write sends the frames handed to it, one at a time, bounded by the
// connection's life rather than by a caller's context: a cancelled
// context would close the connection in the middle of a frame.
func (c *Conn) write() {
	for {
		select {
		case b := <-c.out:
			if err := c.ws.Write(c.ctx, websocket.MessageText, b); err != nil {
				c.end(fmt.Errorf("wsclient: write: %w", err))
				c.ws.CloseNow()
				return
			}
		case <-c.ctx.Done():
			return
		}
	}
}

// read reads frames until the connection ends and dispatches them.
func (c *Conn) read() {
	for {
		typ, b, err := c.ws.Read(c.ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				c.end(&CloseError{Code: int(ce.Code), Reason: ce.Reason})
			} else {
				c.end(fmt.Errorf("wsclient: read: %w", err))
			}
			c.ws.CloseNow()
			return
		}
		if typ != websocket.MessageText {
			c.abort(errors.New("wsclient: the server sent a binary frame"), websocket.StatusUnsupportedData, "binary frame")
			return
		}
		if err := c.dispatch(b); err != nil {
			code, reason := websocket.StatusPolicyViolation, "client fell behind"
			if !errors.Is(err, ErrFellBehind) {
				code, reason = websocket.StatusInvalidFramePayloadData, "not a JSON-RPC frame"
			}
			c.abort(err, code, reason)
			return
		}
	}
}
