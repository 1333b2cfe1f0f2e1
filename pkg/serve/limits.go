package serve

import (
	"cmp"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits are a server's timeouts and connection bounds.
type Limits struct {
	// ReadHeaderTimeout bounds a request's headers, and (the shortest
	// timeout set) a connection's TLS handshake.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds a whole request, body included; WriteTimeout a
	// response from the request's start (per stream over HTTP/2).
	ReadTimeout, WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection (HTTP/1.1, or HTTP/2
	// with no stream open, by GOAWAY) unused for that long.
	IdleTimeout time.Duration
	// MaxConns is the number of connections served at once.
	MaxConns int
	// MaxPerSource is the number of them one remote IP address may hold,
	// so that one peer cannot take the slots the kubelet's probes (from
	// the node's address) and the API server need; 0 is MaxConns.
	MaxPerSource int
}

// Server returns a server of h with l's timeouts.
func (l Limits) Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout}
}

// Listener serves at most l.MaxConns of ln's connections at once, and at
// most l.MaxPerSource of them from one remote IP address; a connection past
// either bound is accepted and closed at once.
//
// Closing rather than leaving it in the kernel's accept queue (as
// golang.org/x/net/netutil.LimitListener does): the listener must keep
// accepting to see who is asking at all, and a queue left to fill would put
// one peer's surplus ahead of the kubelet's probes, which then time out (2 s
// by default) or see their SYNs dropped once the queue is full. A caller
// refused at the global bound learns it at once and retries, as the kubelet
// does at its next probe period.
func (l Limits) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, max: max(l.MaxConns, 1), perSource: max(cmp.Or(l.MaxPerSource, l.MaxConns), 1),
		bySource: map[string]int{}}
}

type limitListener struct {
	net.Listener
	max, perSource int

	mu       sync.Mutex
	open     int
	bySource map[string]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c)
		if l.take(src) {
			return &limitedConn{Conn: c, l: l, src: src}, nil
		}
		c.Close()
	}
}

// take counts a connection from src if both bounds allow it.
func (l *limitListener) take(src string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return false
	}
	if l.bySource[src] >= l.perSource {
		return false
	}
	l.open++
	l.bySource[src]++
	return true
}

func (l *limitListener) release(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.bySource[src]--; l.bySource[src] <= 0 {
		delete(l.bySource, src)
	}
}

// sourceOf is c's remote IP address (the whole address for a listener
// that is not TCP).
func sourceOf(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// limitedConn gives its slot back once, however often it is closed.
type limitedConn struct {
	net.Conn
	l    *limitListener
	src  string
	once sync.Once
}

func (c *limitedConn) Close() error {
	// Released first, so that a caller that sees the close and dials
	// again finds the slot free.
	c.once.Do(func() { c.l.release(c.src) })
	return c.Conn.Close()
}
