// Package listen serves agentry's HTTP endpoints with bounds on what
// clients can hold: how many connections, from one address and in all;
// how long a connection may sit idle between requests; how long a
// request may take to send its headers and its body.
//
// A connection that is streaming (an SSE response, a gRPC stream) is not
// idle and is never cut for time: the body deadline ends once the body
// has been read, and a write fails only when the client does not take it
// within WriteByteTimeout (it stopped reading). At a cap, the
// connection that has waited longest doing nothing makes room for a new
// one; when there is none, the new one is closed at once, never queued.
package listen

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Defaults of Limits.
const (
	// DefaultMaxConns bounds the connections open at once. A parked
	// HTTP/1.1 connection costs about 20 KB, so the cap keeps a flood
	// to about 20 MB and well under the file-descriptor limit.
	DefaultMaxConns = 1024
	// DefaultMaxConnsPerAddr bounds the connections from one IP address,
	// so that one client cannot take them all. Clients behind one proxy
	// share an address: raise it (a2a.maxConnectionsPerAddress) there.
	DefaultMaxConnsPerAddr = 128
	// DefaultIdleTimeout closes a keep-alive connection (HTTP/1.1, or
	// HTTP/2 without an open stream) that sends no request for so long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultReadHeaderTimeout bounds the reading of a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds the reading of a request's body, from the
	// moment the handler starts: 4 MiB (the body limit) at 1 Mbit/s.
	DefaultBodyTimeout = 40 * time.Second
	// DefaultMaxStreams bounds the concurrent streams of one HTTP/2
	// connection (gRPC).
	DefaultMaxStreams = 100
	// DefaultWriteByteTimeout closes a connection (HTTP/1.1 or HTTP/2)
	// whose client does not take a write of the response for so long:
	// a client that stopped reading.
	DefaultWriteByteTimeout = 2 * time.Minute
)

// Limits bound the connections of a server. Zero fields take the
// defaults above; negative ones are refused by Check.
type Limits struct {
	MaxConns          int
	MaxConnsPerAddr   int
	IdleTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	BodyTimeout       time.Duration
	MaxStreams        int
	WriteByteTimeout  time.Duration
}

func (l Limits) withDefaults() Limits {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	set(&l.MaxConns, DefaultMaxConns)
	set(&l.MaxConnsPerAddr, DefaultMaxConnsPerAddr)
	set(&l.MaxStreams, DefaultMaxStreams)
	setD(&l.IdleTimeout, DefaultIdleTimeout)
	setD(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	setD(&l.BodyTimeout, DefaultBodyTimeout)
	setD(&l.WriteByteTimeout, DefaultWriteByteTimeout)
	return l
}

// NewServer returns a server of h over HTTP/1.1 and unencrypted HTTP/2
// (which gRPC clients speak to a plain-text port) with the limits' time
// bounds; serve it on Listener(ln, l) for the connection caps.
func NewServer(h http.Handler, l Limits) *http.Server {
	l = l.withDefaults()
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           bodyDeadline{next: h, d: l.BodyTimeout, write: l.WriteByteTimeout},
		Protocols:         &p,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout, // HTTP/2 connections too
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: l.MaxStreams,
			WriteByteTimeout:     l.WriteByteTimeout,
		},
	}
}

// bodyDeadline gives each request d to send its body. The deadline is
// the request's own (http.ResponseController: the connection's on
// HTTP/1.1, the stream's on HTTP/2) and is cleared when the body ends,
// so a stream answering the request runs as long as it needs (net/http
// clears an HTTP/1.1 connection's when it starts watching for the
// client going away; the HTTP/2 stream's timer is stopped here).
//
// A body cut by the deadline ends its HTTP/1.1 connection after the
// response ("Connection: close"): the rest of the body is still on the
// wire.
type bodyDeadline struct {
	next  http.Handler
	d     time.Duration
	write time.Duration // an HTTP/2 stream's bound on each write
}

func (b bodyDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 {
		// A stream's writes wait on the client's flow-control window, not
		// on the socket: the connection's write bound does not see a
		// client that stopped reading one stream.
		w = &streamWriteDeadline{ResponseWriter: w, rc: http.NewResponseController(w), d: b.write}
	}
	if r.Body != nil && r.Body != http.NoBody {
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(b.d)) == nil {
			body := &deadlineBody{body: r.Body, rc: rc}
			if r.ProtoMajor == 1 {
				body.header = w.Header()
			}
			r.Body = body
		}
	}
	b.next.ServeHTTP(w, r)
}

// deadlineBody clears the read deadline when the body ends, and keeps
// it when a read fails, so that what the server reads of the rest fails
// too.
type deadlineBody struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	header  http.Header // the response's, on HTTP/1.1
	cleared atomic.Bool
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	n, err := d.body.Read(p)
	switch {
	case err == io.EOF:
		d.clear()
	case err != nil && d.header != nil:
		// Read by the handler, before it answers.
		d.header.Set("Connection", "close")
	}
	return n, err
}

// Close closes the body: the server reads a short rest of it, under the
// deadline, to find its end.
func (d *deadlineBody) Close() error {
	err := d.body.Close()
	if err == nil {
		d.clear()
	}
	return err
}

func (d *deadlineBody) clear() {
	if d.cleared.CompareAndSwap(false, true) {
		_ = d.rc.SetReadDeadline(time.Time{})
	}
}

// streamWriteDeadline bounds each write (and flush) of an HTTP/2 stream
// by d, and clears the deadline after it, so that a stream quiet between
// events is never reset for time.
type streamWriteDeadline struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (s *streamWriteDeadline) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.d))
	n, err := s.ResponseWriter.Write(p)
	_ = s.rc.SetWriteDeadline(time.Time{})
	return n, err
}

// Flush implements http.Flusher, which grpc-go and SSE writers assert.
func (s *streamWriteDeadline) Flush() { _ = s.FlushError() }

// FlushError flushes, for http.ResponseController.
func (s *streamWriteDeadline) FlushError() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.d))
	err := s.rc.Flush()
	_ = s.rc.SetWriteDeadline(time.Time{})
	return err
}

// Unwrap returns the server's writer, for http.ResponseController.
func (s *streamWriteDeadline) Unwrap() http.ResponseWriter { return s.ResponseWriter }
