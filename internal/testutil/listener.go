package testutil

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// CountingListener counts the connections it accepted and that are not yet
// closed (Open), and the most open at once (Most), for tests that hold a
// server's connection bound.
type CountingListener struct {
	net.Listener
	Open, Most atomic.Int64
}

// Accept accepts from the wrapped listener and counts the connection.
func (l *CountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := l.Open.Add(1)
	for m := l.Most.Load(); n > m && !l.Most.CompareAndSwap(m, n); m = l.Most.Load() {
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *CountingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.Open.Add(-1) })
	return c.Conn.Close()
}

// Refused says whether err is a server closing the connection: at its idle
// or header timeout, or at once past a connection bound.
func Refused(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}
