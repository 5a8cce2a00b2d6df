package listen

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Listener caps the connections accepted from ln: at most l.MaxConns open
// at once, and l.MaxConnsPerAddr from one IP address. At a cap, a new
// connection takes the place of the longest-waiting connection that is
// doing nothing — idle between requests, or not yet sending one — so that
// parked connections cannot lock real clients out; when every connection
// in its way is busy with a request, the new one is closed as soon as it
// is accepted, never queued. One Warn record is logged for each run of
// refusals. The listener learns which connections are busy from the
// server: set the server's ConnState to the listener's (Track does).
func Listener(ln net.Listener, l Limits, log *slog.Logger) *Capped {
	l = l.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	return &Capped{Listener: ln, max: l.MaxConns, perAddr: l.MaxConnsPerAddr, writeTimeout: l.WriteByteTimeout, log: log,
		open: map[netip.Addr]int{}, spare: map[*limitedConn]struct{}{}}
}

// Capped is a listener with connection caps; see Listener.
type Capped struct {
	net.Listener
	max, perAddr int
	writeTimeout time.Duration
	log          *slog.Logger

	mu       sync.Mutex
	total    int
	open     map[netip.Addr]int
	spare    map[*limitedConn]struct{} // idle, or no request yet: may make room
	seq      uint64                    // orders spare connections by age
	refusing bool                      // refusals since the last connection admitted
}

// Track makes srv report its connections' states to l (chaining any
// ConnState srv already has).
func (l *Capped) Track(srv *http.Server) {
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.ConnState(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
}

// ConnState records a connection's state, as http.Server.ConnState.
func (l *Capped) ConnState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.gone {
		return
	}
	switch s {
	case http.StateIdle:
		l.seq++
		c.seq, c.idle = l.seq, true
		l.spare[c] = struct{}{}
	case http.StateNew:
		// Already spare since its admission.
	default: // active, hijacked, closed
		delete(l.spare, c)
	}
}

// Accept returns the next connection within the caps.
func (l *Capped) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, addr: remoteAddr(c), writeTimeout: l.writeTimeout}
		ok, victim := l.admit(lc)
		if victim != nil {
			_ = victim.Close()
		}
		if ok {
			return lc, nil
		}
		_ = c.Close()
	}
}

// admit counts c in if the caps allow, making room by evicting a spare
// connection if they do not; it returns the connection to close.
func (l *Capped) admit(c *limitedConn) (bool, *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	addr := c.addr
	why := ""
	switch {
	case l.open[addr] >= l.perAddr:
		why = "the address has its maximum of connections open"
	case l.total >= l.max:
		why = "the server has its maximum of connections open"
	}
	var victim *limitedConn
	if why != "" {
		victim = l.oldestSpare(func(v *limitedConn) bool { return l.open[addr] < l.perAddr || v.addr == addr })
		if victim != nil {
			why = ""
			victim.gone = true
			delete(l.spare, victim)
		}
	}
	if why == "" {
		l.total++
		l.open[addr]++
		l.seq++
		c.seq = l.seq
		l.spare[c] = struct{}{}
		l.refusing = false
		return true, victim
	}
	if !l.refusing {
		l.refusing = true
		l.log.Warn("listen: refusing connections until some close", "remote_addr", addr, "reason", why,
			"max_connections", l.max, "max_connections_per_address", l.perAddr)
	}
	return false, nil
}

// oldestSpare returns the spare connection that ok accepts and that has
// waited longest, idle ones before ones yet to send a request (which may
// be a client about to send it), or nil.
func (l *Capped) oldestSpare(ok func(*limitedConn) bool) *limitedConn {
	var best *limitedConn
	for v := range l.spare {
		if !ok(v) {
			continue
		}
		if best == nil || (v.idle && !best.idle) || (v.idle == best.idle && v.seq < best.seq) {
			best = v
		}
	}
	return best
}

func (l *Capped) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.gone = true
	delete(l.spare, c)
	addr := c.addr
	l.total--
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
}

// remoteAddr is the IP address a connection comes from; connections
// without one (Unix sockets) share the zero address.
func remoteAddr(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// limitedConn gives its place back when closed, and fails a write that
// makes no progress for writeTimeout: a client that stopped reading a
// stream (HTTP/1.1 has no such bound of its own).
type limitedConn struct {
	net.Conn
	l            *Capped
	addr         netip.Addr
	writeTimeout time.Duration
	once         sync.Once

	// Guarded by l.mu.
	seq  uint64 // when it became spare
	idle bool   // it has served a request and waits for the next
	gone bool   // closed, or chosen to be
}

func (c *limitedConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	return c.Conn.Write(p)
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
