package listen

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
)

// Listener caps the connections accepted from ln: at most l.MaxConns open
// at once, and l.MaxConnsPerAddr from one IP address. A connection over
// either cap is closed as soon as it is accepted, so excess clients are
// never queued; one Warn record is logged for each run of refusals.
func Listener(ln net.Listener, l Limits, log *slog.Logger) net.Listener {
	l = l.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	return &limitListener{Listener: ln, max: l.MaxConns, perAddr: l.MaxConnsPerAddr, log: log, open: map[netip.Addr]int{}}
}

type limitListener struct {
	net.Listener
	max, perAddr int
	log          *slog.Logger

	mu       sync.Mutex
	total    int
	open     map[netip.Addr]int
	refusing bool // refusals since the last connection admitted
}

// Accept returns the next connection within the caps.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteAddr(c)
		if l.admit(addr) {
			return &limitedConn{Conn: c, l: l, addr: addr}, nil
		}
		_ = c.Close()
	}
}

func (l *limitListener) admit(addr netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	why := ""
	switch {
	case l.total >= l.max:
		why = "the server has its maximum of connections open"
	case l.open[addr] >= l.perAddr:
		why = "the address has its maximum of connections open"
	}
	if why == "" {
		l.total++
		l.open[addr]++
		l.refusing = false
		return true
	}
	if !l.refusing {
		l.refusing = true
		l.log.Warn("listen: refusing connections until some close", "remote_addr", addr, "reason", why,
			"max_connections", l.max, "max_connections_per_address", l.perAddr)
	}
	return false
}

func (l *limitListener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
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

// limitedConn gives its place back when closed.
type limitedConn struct {
	net.Conn
	l    *limitListener
	addr netip.Addr
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}
