package serve

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// serveOn serves "ok" on a loopback port with l and returns its address.
func serveOn(t *testing.T, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	go func() { _ = srv.Serve(l.Listener(ln)) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get asks for / over c, as the kubelet does, within 2 s.
func get(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		return err
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return io.EOF
	}
	return nil
}

// closedAtOnce says whether the server closes c without a byte, within 1 s.
func closedAtOnce(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// One source holding its share of the connections, idle, cannot keep
// another source out: its next connection is closed at once, the other
// source's request is answered; and past the global bound a connection is
// closed at once too, not queued until a slot frees.
func TestPerSourceBound(t *testing.T) {
	l := Limits{ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, MaxConns: 6, MaxPerSource: 3}
	addr := serveOn(t, l)
	for range 3 { // held, never asking
		dialFrom(t, "127.0.0.1", addr)
	}
	if c := dialFrom(t, "127.0.0.1", addr); !closedAtOnce(c) {
		t.Errorf("a 4th connection from 127.0.0.1 is not closed at once")
	}
	if err := get(dialFrom(t, "127.0.0.2", addr)); err != nil {
		t.Errorf("127.0.0.2 while 127.0.0.1 holds its 3: %v", err)
	}
	// 127.0.0.2 and .3 take the other 3 slots; .4 is closed at once.
	for _, src := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3"} {
		dialFrom(t, src, addr)
	}
	time.Sleep(100 * time.Millisecond) // let the server accept them
	if c := dialFrom(t, "127.0.0.4", addr); !closedAtOnce(c) {
		t.Errorf("a connection past the global bound is not closed at once")
	}
}

// A slot is given back when its connection closes, once however often it
// is closed.
func TestBoundReleased(t *testing.T) {
	l := Limits{ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, MaxConns: 4, MaxPerSource: 1}
	addr := serveOn(t, l)
	for i := range 3 {
		if err := get(dialFrom(t, "127.0.0.1", addr)); err != nil {
			t.Fatalf("request %d, each after the last closed: %v", i, err)
		}
	}
}
