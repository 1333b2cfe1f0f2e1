package serve

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Limits are a server's timeouts and connection bound.
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
}

// Server returns a server of h with l's timeouts.
func (l Limits) Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout}
}

// Listener serves at most l.MaxConns of ln's connections at once.
func (l Limits) Listener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, max(l.MaxConns, 1))
}
