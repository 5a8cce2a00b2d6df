package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Error is a JSON-RPC error response. It unwraps to a2a-go's error of
// its code (a2a.ErrTaskNotFound for -32001, a2a.ErrInvalidRequest for
// -32600…), so errors.Is works as with a2a-go's clients.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// Unwrap returns a2a-go's error for the code, nil for a code A2A does not
// define.
func (e *Error) Unwrap() error { return codeErrors[e.Code] }

// codeErrors are the A2A JSON-RPC binding's codes.
var codeErrors = map[int]error{
	-32700: a2a.ErrParseError,
	-32600: a2a.ErrInvalidRequest,
	-32601: a2a.ErrMethodNotFound,
	-32602: a2a.ErrInvalidParams,
	-32603: a2a.ErrInternalError,
	-32000: a2a.ErrServerError,
	-32001: a2a.ErrTaskNotFound,
	-32002: a2a.ErrTaskNotCancelable,
	-32003: a2a.ErrPushNotificationNotSupported,
	-32004: a2a.ErrUnsupportedOperation,
	-32005: a2a.ErrUnsupportedContentType,
	-32006: a2a.ErrInvalidAgentResponse,
	-32007: a2a.ErrExtendedCardNotConfigured,
	-32008: a2a.ErrExtensionSupportRequired,
	-32009: a2a.ErrVersionNotSupported,
	-31401: a2a.ErrUnauthenticated,
	-31403: a2a.ErrUnauthorized,
}

// Frame is one response of a streaming request.
type Frame struct {
	// EventID is the event's place in the session (the frame's
	// eventId), 0 when the frame has none.
	EventID int64
	// Result is the response's result as sent.
	Result json.RawMessage
	// Event is Result decoded by DecodeEvent; nil when Result is not an
	// A2A event (command/execute's first result).
	Event a2a.Event
}

// reply is what the reader hands a request: a response or its error.
type reply struct {
	frame Frame
	err   error
}

// request is a request waiting for its responses.
type request struct {
	id     int64
	method string
	stream bool
	q      *queue[reply]
}

// wireFrame is any frame the server sends.
type wireFrame struct {
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
	EventID int64           `json:"eventId"`
}

// wireRequest is a request the client sends.
type wireRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Call sends a request answered with one response and decodes its result
// into result (which may be nil). A JSON-RPC error is returned as an
// *Error. If ctx ends first the request is abandoned (its response, when
// it comes, is dropped) and ctx's cause returned.
func (c *Conn) Call(ctx context.Context, method string, params any, result any) error {
	r, err := c.send(ctx, method, params, false)
	if err != nil {
		return err
	}
	defer c.forget(r)
	rep, ok, err := r.q.pop(ctx)
	switch {
	case !ok:
		return fmt.Errorf("wsclient: %s: %w", method, err)
	case rep.err != nil:
		return rep.err
	case result != nil:
		if err := json.Unmarshal(rep.frame.Result, result); err != nil {
			return fmt.Errorf("wsclient: %s: decode the result: %w", method, err)
		}
	}
	return nil
}

// Stream is a streaming request under way: SendStreamingMessage,
// SubscribeToTask, command/execute.
type Stream struct {
	c *Conn
	r *request
	// ctx is the Start's: the stream ends with it.
	ctx context.Context
}

// Start sends a request answered with a stream of responses and returns
// once it has been handed to the writer, so that requests started one
// after the other reach the server in that order. ctx bounds the whole
// stream. The caller must read Frames (or Close the stream): its
// responses wait in a bounded queue.
func (c *Conn) Start(ctx context.Context, method string, params any) (*Stream, error) {
	r, err := c.send(ctx, method, params, true)
	if err != nil {
		return nil, err
	}
	return &Stream{c: c, r: r, ctx: ctx}, nil
}

// Frames yields the stream's responses until the one whose event ends it
// — a final task state, input-required or auth-required, a message (see
// Final) — or a JSON-RPC error (an *Error), or until the connection or
// the Start's ctx ends (their error). Breaking out of the loop closes the
// stream. Frames may be ranged over once.
func (s *Stream) Frames() iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		defer s.Close()
		for {
			rep, ok, err := s.r.q.pop(s.ctx)
			switch {
			case !ok && err == nil:
				return
			case !ok:
				yield(Frame{}, fmt.Errorf("wsclient: %s: %w", s.r.method, err))
				return
			case rep.err != nil:
				yield(Frame{}, rep.err)
				return
			}
			if !yield(rep.frame, nil) {
				return
			}
		}
	}
}

// Close abandons the stream: responses still to come are dropped.
func (s *Stream) Close() { s.c.forget(s.r) }

// Stream is Start and Frames in one: the request is sent when the
// iteration begins; an error sending it is the one item yielded.
func (c *Conn) Stream(ctx context.Context, method string, params any) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		s, err := c.Start(ctx, method, params)
		if err != nil {
			yield(Frame{}, err)
			return
		}
		for f, err := range s.Frames() {
			if !yield(f, err) {
				return
			}
		}
	}
}

// send registers a request and hands its frame to the writer.
func (c *Conn) send(ctx context.Context, method string, params any, stream bool) (*request, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("wsclient: %s: %w", method, err)
	}
	r := &request{id: c.nextID.Add(1), method: method, stream: stream}
	req := wireRequest{JSONRPC: "2.0", ID: r.id, Method: method}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("wsclient: %s: encode the params: %w", method, err)
		}
		req.Params = p
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("wsclient: %s: %w", method, err)
	}
	if int64(len(b)) > c.maxFrame {
		return nil, fmt.Errorf("wsclient: %s: the request is %d bytes, over the frame limit of %d", method, len(b), c.maxFrame)
	}
	limit := 1
	if stream {
		limit = c.maxQueued
	}
	r.q = newQueue[reply](limit)
	c.mu.Lock()
	if c.ended {
		err := c.err
		c.mu.Unlock()
		return nil, fmt.Errorf("wsclient: %s: %w", method, err)
	}
	c.pending[r.id] = r
	c.mu.Unlock()
	select {
	case c.out <- b:
		return r, nil
	case <-ctx.Done():
		c.forget(r)
		return nil, fmt.Errorf("wsclient: %s: %w", method, context.Cause(ctx))
	case <-c.done:
		return nil, fmt.Errorf("wsclient: %s: %w", method, c.Err())
	}
}

// forget drops a request: its later responses go nowhere.
func (c *Conn) forget(r *request) {
	c.mu.Lock()
	if c.pending[r.id] == r {
		delete(c.pending, r.id)
	}
	c.mu.Unlock()
	r.q.finish(nil)
}

// dispatch hands one frame to whoever waits for it. An error ends the
// connection: ErrFellBehind, or a frame that is not JSON-RPC.
func (c *Conn) dispatch(b []byte) error {
	var f wireFrame
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("wsclient: the server sent a frame that is not JSON: %w", err)
	}
	if f.EventID > 0 {
		c.noteEventID(f.EventID)
	}
	if f.Method != "" && !isNull(f.ID) {
		// A request from the server: docs/ws.md has none.
		c.log.Debug("wsclient: ignored a request from the server", "method", f.Method)
		return nil
	}
	if f.Method != "" {
		n, err := c.notification(f)
		if err != nil {
			return err
		}
		if !c.notes.push(n) {
			return ErrFellBehind
		}
		return nil
	}
	id, ok := parseID(f.ID)
	if !ok {
		// A response to no request of ours: -32700 or -32600 with a null
		// id, for a frame the server could not read.
		if f.Error != nil {
			c.log.Warn("wsclient: the server reported an error without a request id", "code", f.Error.Code, "message", f.Error.Message)
		}
		return nil
	}
	rep := reply{frame: Frame{EventID: f.EventID, Result: f.Result}}
	if f.Error != nil {
		rep.err = f.Error
	}
	c.mu.Lock()
	r := c.pending[id]
	c.mu.Unlock()
	if r == nil {
		c.log.Debug("wsclient: dropped a response to a request no longer waiting", "id", id)
		return nil
	}
	last := !r.stream || rep.err != nil
	if r.stream && rep.err == nil {
		if ev, err := DecodeEvent(f.Result); err == nil {
			rep.frame.Event = ev
			last = Final(ev)
		}
	}
	if last {
		c.mu.Lock()
		if c.pending[id] == r {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	if !r.q.push(rep) {
		return ErrFellBehind
	}
	if last {
		r.q.finish(nil)
	}
	return nil
}

// isNull reports whether a frame's id is absent or null.
func isNull(id json.RawMessage) bool { return len(id) == 0 || string(id) == "null" }

// parseID reads a response's id; the client's ids are numbers.
func parseID(raw json.RawMessage) (int64, bool) {
	if isNull(raw) {
		return 0, false
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// errNotJSONRPC reports a notification whose params do not parse.
var errNotJSONRPC = errors.New("wsclient: the server sent a notification whose params do not parse")
