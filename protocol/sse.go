package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// The JSON-RPC methods answered with a stream of server-sent events, in
// A2A 1.0 and in A2A 0.3.
const (
	methodStream          = "SendStreamingMessage"
	methodSubscribe       = "SubscribeToTask"
	methodLegacyStream    = "message/stream"
	methodLegacySubscribe = "tasks/resubscribe"
)

// streaming reports whether method is answered by the SSE writer.
func streaming(method string) bool {
	switch method {
	case methodStream, methodSubscribe, methodLegacyStream, methodLegacySubscribe:
		return true
	}
	return false
}

// batchHint tells the SSE writer that more events follow at once, so it
// flushes a burst as one write. follow sets it; any other producer leaves
// it false and every event is flushed as it comes.
type batchHint struct{ more bool }

type batchKey struct{}

// hintFrom returns the request's batch hint, or nil when the transport
// is not agentry's SSE writer.
func hintFrom(ctx context.Context) *batchHint {
	h, _ := ctx.Value(batchKey{}).(*batchHint)
	return h
}

// sse serves the streaming methods of A2A 1.0 and 0.3 over server-sent
// events in place of a2a-go's JSON-RPC transports, which marshal every
// event through encoding/json (0.3 after converting it to the legacy
// types), hand it to a second goroutine over a channel, and write and
// flush it with a fresh UUID as the event id: with 200 streams of text
// deltas that was a fifth of the server's CPU. The wire is the same:
// a2a-go's headers, one `id:` and one `data:` line per event, the
// JSON-RPC response a2a-go writes (checked byte for byte in the tests),
// and its errors, which a2a-go itself renders (errorJSON).
//
// A request refused before its first event (bad params, a refused
// message, an unknown task) is answered with an HTTP error status and the
// JSON-RPC error, not a stream. It reports false, having written nothing,
// for a request it leaves to a2a-go: a malformed envelope, which a2a-go
// answers with the right error.
func (h *httpHandler) sse(w http.ResponseWriter, r *http.Request, env rpcEnvelope) bool {
	if env.JSONRPC != "2.0" {
		return false
	}
	var id any
	if len(env.ID) > 0 && json.Unmarshal(env.ID, &id) != nil {
		return false
	}
	switch id.(type) {
	case nil, string, float64:
	default:
		return false
	}
	idJSON, err := json.Marshal(id)
	if err != nil {
		return false
	}
	legacy := env.Method == methodLegacyStream || env.Method == methodLegacySubscribe
	params := a2asrv.NewServiceParams(r.Header)
	if legacy {
		params = a2av0.ToServiceParams(r.Header)
	}
	ctx, _ := a2asrv.NewCallContext(r.Context(), params)
	hint := &batchHint{}
	ctx = context.WithValue(ctx, batchKey{}, hint)
	var events iter.Seq2[a2a.Event, error]
	switch env.Method {
	case methodStream:
		var req a2a.SendMessageRequest
		if err := json.Unmarshal(env.Params, &req); err != nil {
			events = refusal(paramsError(err))
			break
		}
		events = h.s.handler.SendStreamingMessage(ctx, &req)
	case methodSubscribe:
		var req a2a.SubscribeToTaskRequest
		if err := json.Unmarshal(env.Params, &req); err != nil {
			events = refusal(paramsError(err))
			break
		}
		events = h.s.handler.SubscribeToTask(ctx, &req)
	case methodLegacyStream:
		var p a2alegacy.MessageSendParams
		if err := json.Unmarshal(env.Params, &p); err != nil {
			events = refusal(paramsError(err))
			break
		}
		req, err := a2av0.ToV1SendMessageRequest(&p)
		if err != nil {
			events = refusal(paramsError(err))
			break
		}
		events = h.s.handler.SendStreamingMessage(ctx, req)
	case methodLegacySubscribe:
		var p a2alegacy.TaskIDParams
		if err := json.Unmarshal(env.Params, &p); err != nil {
			events = refusal(paramsError(err))
			break
		}
		events = h.s.handler.SubscribeToTask(ctx, a2av0.ToV1SubscribeToTaskRequest(&p))
	default:
		return false
	}
	enc := wireEncoder{legacy: legacy}
	errs, errMethod := h.errs, "GetTask"
	if legacy {
		errs, errMethod = h.errs0, "tasks/get"
	}

	rc := http.NewResponseController(w)
	buf := make([]byte, 0, 2048)
	n := 0
	for ev, err := range events {
		n++
		if n == 1 {
			if err != nil {
				// Refused before anything happened: an HTTP error with the
				// JSON-RPC error as its body, which clients read as the
				// call's error (a 200 stream would look like a stream
				// that ended without events to some of them).
				h.refuse(w, ctx, errs, errMethod, idJSON, err)
				return true
			}
			hdr := w.Header()
			hdr.Set("Content-Type", "text/event-stream")
			hdr.Set("Cache-Control", "no-cache")
			hdr.Set("Connection", "keep-alive")
			hdr.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		buf = append(buf[:0], "id: "...)
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, "\ndata: "...)
		if err == nil {
			mark := len(buf)
			buf = append(buf, `{"jsonrpc":"2.0","id":`...)
			buf = append(buf, idJSON...)
			buf = append(buf, `,"result":`...)
			if buf, err = enc.event(buf, ev); err == nil {
				buf = append(buf, '}')
				if check := h.s.wireCheck; check != nil {
					check(buf[mark:], ev, legacy)
				}
			} else {
				buf = buf[:mark]
			}
		}
		if err != nil {
			buf = append(buf, errorJSON(ctx, errs, errMethod, idJSON, err)...)
		}
		buf = append(buf, "\n\n"...)
		if _, werr := w.Write(buf); werr != nil {
			return true // the client left; ending the loop tells the producer
		}
		if err != nil {
			break // as a2a-go: an error ends the stream
		}
		if !hint.more {
			if rc.Flush() != nil {
				return true
			}
		}
		if cap(buf) > 64<<10 {
			buf = make([]byte, 0, 2048) // one large event does not pin a large buffer
		}
	}
	if n == 0 {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	_ = rc.Flush()
	return true
}

// refuse answers a streaming request refused before its first event: the
// HTTP status A2A's REST binding gives the error (a2a-go's table), and the
// JSON-RPC error response a2a-go renders as the body.
func (h *httpHandler) refuse(w http.ResponseWriter, ctx context.Context, errs http.Handler, method string, idJSON []byte, err error) {
	body := errorJSON(ctx, errs, method, idJSON, err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(h.httpStatus(ctx, err))
	_, _ = w.Write(append(body, '\n'))
}

// httpStatus is the HTTP status a2a-go's REST binding answers err with.
func (h *httpHandler) httpStatus(ctx context.Context, err error) int {
	req, rerr := http.NewRequestWithContext(context.WithValue(ctx, errorKey{}, err), http.MethodGet, "/tasks/-", nil)
	if rerr != nil {
		return http.StatusInternalServerError
	}
	rec := &recorder{header: http.Header{}}
	h.errsREST.ServeHTTP(rec, req)
	if rec.code < 400 {
		return http.StatusInternalServerError
	}
	return rec.code
}

// refusal is a stream that fails at once with err.
func refusal(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}

// paramsError is the error for params that do not decode, as a2a-go
// names it: invalid params for a value of the wrong type, else a parse
// error.
func paramsError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Errorf("%w: %w", a2a.ErrInvalidParams, err)
	}
	return fmt.Errorf("%w: %w", a2a.ErrParseError, err)
}

// errorKey carries the error errorEcho answers with.
type errorKey struct{}

// errorEcho is a request handler whose GetTask fails with the error in
// its context: a2a-go's JSON-RPC handler over it renders any error as
// a2a-go renders it in a stream, so that codes and details come from one
// table, a2a-go's.
type errorEcho struct{ a2asrv.RequestHandler }

func (errorEcho) GetTask(ctx context.Context, _ *a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, ctx.Value(errorKey{}).(error)
}

// errorJSON is the JSON-RPC error response a2a-go's handler errs (1.0 or
// 0.3, whose get-task method is method) writes for err.
func errorJSON(ctx context.Context, errs http.Handler, method string, idJSON []byte, err error) []byte {
	body := `{"jsonrpc":"2.0","id":` + string(idJSON) + `,"method":"` + method + `","params":{"id":"-"}}`
	req, rerr := http.NewRequestWithContext(context.WithValue(ctx, errorKey{}, err), http.MethodPost, "/", strings.NewReader(body))
	if rerr != nil {
		return []byte(`{"jsonrpc":"2.0","id":` + string(idJSON) + `,"error":{"code":-32603,"message":"internal error"}}`)
	}
	rec := &recorder{header: http.Header{}}
	errs.ServeHTTP(rec, req)
	return bytes.TrimSpace(rec.body.Bytes())
}

// recorder is an http.ResponseWriter that keeps the response in memory:
// the one errorJSON and cancelConflict hand a2a-go.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(p)
}
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
