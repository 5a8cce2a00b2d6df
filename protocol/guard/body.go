package guard

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
)

// errReplaced is returned by Write once the guard has answered the request
// itself because its body went over the limit.
var errReplaced = errors.New("guard: response replaced by a 413: request body too large")

// limiter caps a request body of unknown length and, when the cap trips,
// turns the handler's response into a 413 (ResourceExhausted for gRPC).
//
// http.MaxBytesReader alone only hands the handler an error; what the client
// sees is up to the handler, and A2A handlers answer with a JSON-RPC parse
// error or a gRPC Unknown. So the limiter watches the first thing the
// handler commits (WriteHeader, Write or Flush): if the body has tripped by
// then, the guard's refusal goes out instead and the handler's writes are
// dropped. A handler that commits before reading the whole body (full
// duplex) keeps its response and only sees the read error.
type limiter struct {
	g      *Guard
	rw     http.ResponseWriter // the writer the guard was given
	r      *http.Request
	origin string // allowed Origin of the request, "" if none
	body   io.ReadCloser

	// gRPC reads the body on its own goroutine while another writes the
	// response, hence the mutex.
	mu        sync.Mutex
	exceeded  bool        // the body went over the limit
	committed bool        // the response is decided: handler's or refusal
	refused   bool        // the refusal was written
	discard   http.Header // handed out by Header once refused
}

func newLimiter(g *Guard, w http.ResponseWriter, r *http.Request, origin string) *limiter {
	l := &limiter{g: g, rw: w, r: r, origin: origin}
	// The original writer, so that net/http closes the connection after
	// the response instead of draining an oversized body.
	l.body = http.MaxBytesReader(w, r.Body, g.maxBody)
	r.Body = limitedBody{l}
	return l
}

// commit decides the response on the handler's first write, and reports
// whether it is the guard's refusal.
func (l *limiter) commit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.committed {
		l.committed = true
		if l.exceeded {
			l.refused = true
			// Headers the handler set for its own response (gRPC
			// declares its trailers up front) must not leak into ours.
			h := l.rw.Header()
			clear(h)
			if l.origin != "" {
				setCORS(h, l.origin)
			}
			l.g.refuse(l.rw, l.r, l.g.tooLarge())
		}
	}
	return l.refused
}

// finish runs after the handler returns, for a handler that read past the
// limit and then wrote nothing at all, and for a gRPC stream whose body
// went over the limit after its response had begun (a client-streaming
// call, whose messages together make its body): gRPC ends such a call
// Unavailable ("http: request body too large"), and the guard's own
// status replaces that in the trailers, which net/http writes once the
// handler has returned.
func (l *limiter) finish() {
	if l.commit() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.exceeded || !isGRPC(l.r) {
		return
	}
	ref := l.g.tooLarge()
	l.g.log.LogAttrs(l.r.Context(), slog.LevelWarn, "guard: gRPC stream ended",
		slog.String("remote_addr", l.r.RemoteAddr),
		slog.String("path", l.r.URL.Path),
		slog.String("reason", ref.msg))
	h := l.rw.Header()
	h.Set("Grpc-Status", strconv.Itoa(ref.grpcCode))
	h.Set("Grpc-Message", encodeGRPCMessage(ref.msg))
	h.Del("Grpc-Status-Details-Bin")
}

// limitedBody is the request body seen by the handler.
type limitedBody struct{ l *limiter }

func (b limitedBody) Read(p []byte) (int, error) {
	n, err := b.l.body.Read(p)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			b.l.mu.Lock()
			b.l.exceeded = true
			b.l.mu.Unlock()
		}
	}
	return n, err
}

func (b limitedBody) Close() error { return b.l.body.Close() }

// limitedWriter is the ResponseWriter seen by the handler. It implements
// http.Flusher because grpc-go and SSE handlers assert it directly, and
// Unwrap so that http.ResponseController reaches the other features.
type limitedWriter struct{ l *limiter }

func (w limitedWriter) Header() http.Header {
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.refused {
		return l.rw.Header()
	}
	if l.discard == nil {
		l.discard = make(http.Header)
	}
	return l.discard
}

func (w limitedWriter) WriteHeader(code int) {
	// 1xx responses (103 Early Hints) come before the real one and do not
	// decide it.
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.l.rw.WriteHeader(code)
		return
	}
	if w.l.commit() {
		return
	}
	w.l.rw.WriteHeader(code)
}

func (w limitedWriter) Write(p []byte) (int, error) {
	if w.l.commit() {
		return 0, errReplaced
	}
	return w.l.rw.Write(p)
}

func (w limitedWriter) Flush() {
	if w.l.commit() {
		return
	}
	if f, ok := w.l.rw.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w limitedWriter) Unwrap() http.ResponseWriter { return w.l.rw }
