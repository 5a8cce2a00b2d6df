package listen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/protocol/guard"
)

const token = "listen-test-token-0123456789abcdef"

// hangGuard bounds every read a test makes, so that a connection the
// server fails to close fails the test instead of hanging it. It is not
// a measurement: every expected event comes well before it.
const hangGuard = 20 * time.Second

// server serves h behind the guard with limits on a real listener on
// 127.0.0.1, and returns its address.
func server(t *testing.T, l Limits, h http.Handler) string {
	t.Helper()
	return serverWithState(t, l, h, nil)
}

// serverWithState is server with onState, if not nil, told of every
// connection state change, after the listener.
func serverWithState(t *testing.T, l Limits, h http.Handler, onState func(net.Conn, http.ConnState)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	g, err := guard.New(guard.Config{Token: token, AllowedHosts: guard.HostsFor("127.0.0.1", port), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(g.Wrap(h), l)
	srv.ConnState = onState
	cl := Listener(ln, l, slog.New(slog.DiscardHandler))
	cl.Track(srv)
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, _ = io.WriteString(w, "ok")
})

// dial opens a connection to addr from the local address from ("" for
// any).
func dial(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	return c
}

// get sends an authenticated keep-alive GET on c and reads the response.
func get(t *testing.T, c net.Conn, br *bufio.Reader, addr string) *http.Response {
	t.Helper()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET on a parked connection: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// closedByServer reports whether the server closed c: a read ends with
// EOF or a reset, not the hang guard.
func closedByServer(t *testing.T, c net.Conn, br io.Reader) bool {
	t.Helper()
	_, err := io.Copy(io.Discard, br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // nil (EOF) or a reset
}

// TestIdleConnectionsClosed: keep-alive connections that send no next
// request, connections that never send one, and HTTP/2 connections
// without a stream are closed by the server.
func TestIdleConnectionsClosed(t *testing.T) {
	// Only the timeout under test is short: a request that reaches a
	// busy machine's server late must not be cut by another one.
	addr := server(t, Limits{IdleTimeout: 50 * time.Millisecond}, ok)
	for i := range 5 {
		c := dial(t, addr, "")
		br := bufio.NewReader(c)
		if resp := get(t, c, br, addr); resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: HTTP %d", i, resp.StatusCode)
		}
		if !closedByServer(t, c, br) {
			t.Errorf("keep-alive connection %d was not closed when idle", i)
		}
	}
	silent := server(t, Limits{ReadHeaderTimeout: 50 * time.Millisecond}, ok)
	if c := dial(t, silent, ""); !closedByServer(t, c, c) {
		t.Error("a connection that sent nothing was not closed")
	}
	// HTTP/2 with prior knowledge: the preface and an empty SETTINGS
	// frame, then nothing.
	c := dial(t, addr, "")
	if _, err := io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
		t.Fatal(err)
	}
	if !closedByServer(t, c, c) {
		t.Error("an HTTP/2 connection without a stream was not closed when idle")
	}
}

// TestSlowBodyCut: a body that stops arriving is cut at the body
// timeout: the handler's read fails and the connection is closed.
func TestSlowBodyCut(t *testing.T) {
	readErr := make(chan error, 1)
	addr := server(t, Limits{BodyTimeout: 50 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
		}
	}))
	c := dial(t, addr, "")
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\n0123456789", addr, token)
	if err := <-readErr; !errors.Is(err, errDeadline) {
		t.Errorf("the handler read %v, want a deadline error", err)
	}
	if !closedByServer(t, c, c) {
		t.Error("the connection of a stalled body was not closed")
	}
}

// errDeadline is what a body read past its deadline returns.
var errDeadline = os.ErrDeadlineExceeded

// TestRefusalClosesConnection: a request without the token gets its 401
// and then the connection is closed, even with a body it never sent.
func TestRefusalClosesConnection(t *testing.T) {
	addr := server(t, Limits{}, ok)
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: %s\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
	} {
		c := dial(t, addr, "")
		fmt.Fprintf(c, req, addr)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%q: HTTP %d, want 401", req, resp.StatusCode)
		}
		if !closedByServer(t, c, br) {
			t.Errorf("%q: the connection stayed open after the refusal", req)
		}
	}
}

// blocking serves /block requests until release is closed or the client
// goes, telling entered when one starts, and answers others at once.
func blocking(release <-chan struct{}, entered chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = io.WriteString(w, "ok")
	})
}

// busy opens a connection from the address from and waits until the
// server holds its request (blocking): a connection that is not spare.
func busy(t *testing.T, addr, from string, entered <-chan struct{}) net.Conn {
	t.Helper()
	c := dial(t, addr, from)
	fmt.Fprintf(c, "GET /block HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
	select {
	case <-entered:
	case <-time.After(hangGuard):
		t.Fatalf("the request from %s never reached the handler", from)
	}
	return c
}

// refused reports whether a request on c gets no answer: the server
// closed the connection on accepting it.
func refused(t *testing.T, c net.Conn, addr string) bool {
	t.Helper()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
	b, _ := io.ReadAll(c)
	return len(b) == 0
}

// TestParkedConnectionsMakeRoom: connections parked between requests
// cannot lock out a client from their address: at the cap, the one idle
// longest is closed to make room.
func TestParkedConnectionsMakeRoom(t *testing.T) {
	const per = 3
	idle := make(chan struct{}, 4*per)
	addr := serverWithState(t, Limits{MaxConnsPerAddr: per}, ok, func(_ net.Conn, s http.ConnState) {
		if s == http.StateIdle {
			idle <- struct{}{}
		}
	})
	var parked []net.Conn
	var readers []*bufio.Reader
	for i := range per {
		c := dial(t, addr, "127.0.0.2")
		br := bufio.NewReader(c)
		if resp := get(t, c, br, addr); resp.StatusCode != http.StatusOK {
			t.Fatalf("parked connection %d: HTTP %d", i, resp.StatusCode)
		}
		<-idle // the server counts it idle
		parked, readers = append(parked, c), append(readers, br)
	}
	for i := range 2 * per {
		c := dial(t, addr, "127.0.0.2")
		if resp := get(t, c, bufio.NewReader(c), addr); resp.StatusCode != http.StatusOK {
			t.Fatalf("client %d over the cap: HTTP %d", i, resp.StatusCode)
		}
		<-idle
		if i < per && !closedByServer(t, parked[i], readers[i]) {
			t.Fatalf("parked connection %d, the longest idle, was not closed to make room", i)
		}
	}
}

// TestConnectionCaps: when every connection of an address is busy with a
// request, the next one from it is refused while other addresses are
// served; the total cap holds the same way; a freed place is given again.
func TestConnectionCaps(t *testing.T) {
	const per = 3
	release, entered := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	idle := make(chan struct{}, 16)
	addr := serverWithState(t, Limits{MaxConnsPerAddr: per, MaxConns: per + 2}, blocking(release, entered), func(_ net.Conn, s http.ConnState) {
		if s == http.StateIdle {
			idle <- struct{}{}
		}
	})
	var held []net.Conn
	for range per {
		held = append(held, busy(t, addr, "127.0.0.2", entered))
	}
	client := &http.Client{Transport: &http.Transport{}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a client from 127.0.0.1 while another address is at its cap: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close() // kept alive, idle: per+1 open now
	<-idle
	if !refused(t, dial(t, addr, "127.0.0.2"), addr) {
		t.Errorf("connection %d from an address whose connections are all busy was served", per+1)
	}
	// The total: one more busy one from a third address fits, after which
	// the idle client connection is the only spare one; the next takes its
	// place, and the one after that is refused.
	busy(t, addr, "127.0.0.3", entered)
	next := dial(t, addr, "127.0.0.4")
	if resp := get(t, next, bufio.NewReader(next), addr); resp.StatusCode != http.StatusOK {
		t.Fatalf("a connection taking the idle one's place: HTTP %d", resp.StatusCode)
	}
	<-idle
	busy(t, addr, "127.0.0.4", entered) // takes next's place (idle now)
	if !refused(t, dial(t, addr, "127.0.0.5"), addr) {
		t.Errorf("connection %d in all, every other busy, was served", per+3)
	}
	// Closing a busy connection frees its place for the address.
	_ = held[0].Close()
	for {
		c := dial(t, addr, "127.0.0.2")
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode == http.StatusOK {
			break
		}
		_ = c.Close()
		if t.Context().Err() != nil {
			t.Fatal("the freed place was never given again")
		}
	}
}

// TestStreamOutlivesTimeouts: an SSE response, over HTTP/1.1 and
// HTTP/2, keeps streaming after the idle and body timeouts have passed
// (shown by an idle connection and a stalled body being cut meanwhile).
func TestStreamOutlivesTimeouts(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			proceed := make(chan struct{})
			var cancelled atomic.Bool
			// The body timeout leaves the stream's own small body ample
			// time to arrive on a busy machine.
			l := Limits{IdleTimeout: 50 * time.Millisecond, BodyTimeout: time.Second, WriteByteTimeout: 50 * time.Millisecond}
			addr := server(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					_, _ = io.ReadAll(r.Body)
					return
				}
				// Read to its end, as agentry's JSON-RPC handler does.
				b, err := io.ReadAll(r.Body)
				var req map[string]any
				if err == nil {
					err = json.Unmarshal(b, &req)
				}
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: first\n\n")
				http.NewResponseController(w).Flush()
				select {
				case <-proceed:
				case <-r.Context().Done():
					cancelled.Store(true)
					return
				}
				fmt.Fprintf(w, "data: second\n\n")
			}))
			tr := &http.Transport{}
			if h2 {
				tr.Protocols = new(http.Protocols)
				tr.Protocols.SetUnencryptedHTTP2(true)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/", strings.NewReader(`{"method":"stream"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if h2 != (resp.ProtoMajor == 2) {
				t.Fatalf("the stream went over %s", resp.Proto)
			}
			br := bufio.NewReader(resp.Body)
			if line, _ := br.ReadString('\n'); line != "data: first\n" {
				t.Fatalf("first event: %q", line)
			}
			// Both timeouts pass: an idle connection is closed, a stalled
			// body is cut.
			idle := dial(t, addr, "")
			ibr := bufio.NewReader(idle)
			get(t, idle, ibr, addr) // a 400: no body; then idle
			if !closedByServer(t, idle, ibr) {
				t.Fatal("the idle connection was not closed")
			}
			slow := dial(t, addr, "")
			fmt.Fprintf(slow, "POST /slow HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 10\r\n\r\n", addr, token)
			if !closedByServer(t, slow, slow) {
				t.Fatal("the stalled body was not cut")
			}
			close(proceed)
			rest, err := io.ReadAll(br)
			if err != nil || !strings.Contains(string(rest), "data: second") || cancelled.Load() {
				t.Errorf("the stream after the timeouts: %q, %v (request cancelled: %v)", rest, err, cancelled.Load())
			}
		})
	}
}

// TestStreamWithBodyEndUnread: an HTTP/1.1 stream whose handler did not
// read the end of its chunked body (a JSON decoder stops at the value)
// keeps streaming after the body timeout: the server must not go on
// watching the connection under the request's body deadline.
func TestStreamWithBodyEndUnread(t *testing.T) {
	decoded, ended, proceed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var cancelled atomic.Bool
	// The timeout leaves the client ample time to send the body's end
	// once the handler has decoded the value.
	const bodyTimeout = 2 * time.Second
	addr := server(t, Limits{BodyTimeout: bodyTimeout},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				_, _ = io.ReadAll(r.Body)
				return
			}
			var req map[string]any
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			close(decoded)
			<-ended
			fmt.Fprintf(w, "data: first\n\n")
			http.NewResponseController(w).Flush()
			select {
			case <-proceed:
			case <-r.Context().Done():
				cancelled.Store(true)
				return
			}
			fmt.Fprintf(w, "data: second\n\n")
		}))
	c := dial(t, addr, "")
	body := `{"method":"stream"}`
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", addr, token, len(body), body)
	<-decoded
	_, _ = io.WriteString(c, "0\r\n\r\n")
	close(ended)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb := bufio.NewReader(resp.Body)
	if line, _ := rb.ReadString('\n'); line != "data: first\n" {
		t.Fatalf("first event: %q", line)
	}
	// The body timeout passes: a stalled body sent after this one's is
	// cut.
	slow := dial(t, addr, "")
	fmt.Fprintf(slow, "POST /slow HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 10\r\n\r\n", addr, token)
	if !closedByServer(t, slow, slow) {
		t.Fatal("the stalled body was not cut")
	}
	close(proceed)
	rest, _ := io.ReadAll(rb)
	if !strings.Contains(string(rest), "data: second") || cancelled.Load() {
		t.Errorf("the stream past the body timeout: %q (request cancelled: %v)", rest, cancelled.Load())
	}
}

// TestStalledReaderCut: a stream whose client stopped reading fails the
// handler's write once the client has taken nothing for the write
// timeout, over HTTP/1.1 as over HTTP/2, and its connection is closed.
func TestStalledReaderCut(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			writeErr := make(chan error, 1)
			chunk := []byte("data: " + strings.Repeat("x", 64<<10) + "\n\n")
			addr := server(t, Limits{WriteByteTimeout: 50 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				rc := http.NewResponseController(w)
				for {
					_, err := w.Write(chunk)
					if err == nil {
						err = rc.Flush()
					}
					if err != nil {
						writeErr <- err
						return
					}
				}
			}))
			c := dial(t, addr, "")
			if h2 {
				// Prior knowledge: preface, empty SETTINGS, then HEADERS
				// would be needed; the Go client does it for us instead.
				_ = c.Close()
				tr := &http.Transport{Protocols: new(http.Protocols)}
				tr.Protocols.SetUnencryptedHTTP2(true)
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close() // and never read
			} else {
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, token)
			}
			select {
			case err := <-writeErr:
				if err == nil {
					t.Fatal("the handler's write ended without an error")
				}
			case <-time.After(hangGuard):
				t.Fatal("a stream to a client that stopped reading was never cut")
			}
		})
	}
}
