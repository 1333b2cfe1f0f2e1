package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// echo is a loopback echo server that counts the bytes it received.
type echo struct {
	ln       net.Listener
	received atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startEcho(t *testing.T) *echo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echo{ln: ln}
	serveEcho(t, e)
	return e
}

// serveEcho serves e.ln until the test ends.
func serveEcho(t *testing.T, e *echo) {
	ln := e.ln
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					e.received.Add(int64(n))
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		e.mu.Lock()
		for _, c := range e.conns {
			_ = c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
}

func startProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads it back within limit.
func roundTrip(c net.Conn, msg string, limit time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(limit))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

// silent says whether nothing comes back on c for d after writing msg.
func silent(t *testing.T, c net.Conn, msg string, d time.Duration) bool {
	t.Helper()
	got, err := roundTrip(c, msg, d)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return got == "" || strings.Trim(got, "\x00") == ""
	}
	t.Logf("expected silence, got %q, %v", got, err)
	return false
}

func waitConns(t *testing.T, p *Proxy, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for p.Conns() != want {
		if time.Now().After(deadline) {
			t.Fatalf("Conns() = %d, want %d", p.Conns(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPass(t *testing.T) {
	e := startEcho(t)
	p := startProxy(t, e.ln.Addr().String())
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || p.URL() != "https://"+p.Addr() {
		t.Fatalf("Addr %q, URL %q", p.Addr(), p.URL())
	}
	c := dial(t, p)
	big := strings.Repeat("x", 200<<10) // several chunks
	got, err := roundTrip(c, big, 5*time.Second)
	if err != nil || got != big {
		t.Fatalf("round trip: %d bytes back, %v", len(got), err)
	}
	waitConns(t, p, 1)
	_ = c.Close()
	waitConns(t, p, 0) // a close on one side ends the link
}

// A blackhole holds old and new connections silent and drops what they
// send; Pass closes them and new connections pass.
func TestBlackhole(t *testing.T) {
	e := startEcho(t)
	p := startProxy(t, e.ln.Addr().String())
	old := dial(t, p)
	if got, err := roundTrip(old, "before", 2*time.Second); err != nil || got != "before" {
		t.Fatalf("before: %q %v", got, err)
	}
	before := e.received.Load()
	p.Blackhole()
	if !silent(t, old, "during", 300*time.Millisecond) {
		t.Fatal("an old connection answered during the blackhole")
	}
	fresh := dial(t, p)
	if !silent(t, fresh, "new", 300*time.Millisecond) {
		t.Fatal("a new connection answered during the blackhole")
	}
	waitConns(t, p, 2)
	if n := e.received.Load(); n != before {
		t.Fatalf("the target received %d bytes during the blackhole", n-before)
	}
	p.Pass()
	for name, c := range map[string]net.Conn{"old": old, "new during": fresh} {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil || len(b) != 0 {
			t.Errorf("%s connection after Pass: %q %v, want closed", name, b, err)
		}
	}
	if n := e.received.Load(); n != before {
		t.Fatalf("bytes sent during the blackhole arrived after it: %d", n-before)
	}
	after := dial(t, p)
	if got, err := roundTrip(after, "after", 2*time.Second); err != nil || got != "after" {
		t.Fatalf("after Pass: %q %v", got, err)
	}
}

// Reset closes every connection with an RST and keeps passing.
func TestReset(t *testing.T) {
	e := startEcho(t)
	p := startProxy(t, e.ln.Addr().String())
	a, b := dial(t, p), dial(t, p)
	for _, c := range []net.Conn{a, b} {
		if _, err := roundTrip(c, "hi", 2*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	p.Reset()
	for _, c := range []net.Conn{a, b} {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("read after Reset: %v, want connection reset", err)
		}
	}
	waitConns(t, p, 0)
	c := dial(t, p)
	if got, err := roundTrip(c, "again", 2*time.Second); err != nil || got != "again" {
		t.Fatalf("after Reset: %q %v", got, err)
	}
}

// Delay costs a round trip twice the delay, keeps order, and Pass ends it
// for what is already queued.
func TestDelay(t *testing.T) {
	e := startEcho(t)
	p := startProxy(t, e.ln.Addr().String())
	c := dial(t, p)
	const d = 150 * time.Millisecond
	p.Delay(d)
	start := time.Now()
	if got, err := roundTrip(c, "slow", 3*time.Second); err != nil || got != "slow" {
		t.Fatalf("delayed round trip: %q %v", got, err)
	}
	if took := time.Since(start); took < 2*d || took > 2*d+time.Second {
		t.Errorf("round trip took %v, want about %v", took, 2*d)
	}
	// Many small writes come back in order.
	var want bytes.Buffer
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	for i := range 50 {
		msg := []byte{byte('a' + i%26)}
		want.Write(msg)
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("order: %q, want %q (%v)", got, want.Bytes(), err)
	}
	// Pass while a chunk waits: it goes at once.
	p.Delay(10 * time.Second)
	if _, err := c.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	start = time.Now()
	p.Pass()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatalf("after Pass: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Pass did not end the delay: %v", took)
	}
}

// Close closes every connection and the listener, and is idempotent.
func TestClose(t *testing.T) {
	e := startEcho(t)
	p := startProxy(t, e.ln.Addr().String())
	c := dial(t, p)
	p.Blackhole()
	held := dial(t, p)
	waitConns(t, p, 2)
	done := make(chan struct{})
	go func() { p.Close(); p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung")
	}
	if p.Conns() != 0 {
		t.Errorf("Conns() = %d after Close", p.Conns())
	}
	for _, conn := range []net.Conn{c, held} {
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Error("a connection stayed open after Close")
		}
	}
	if conn, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		conn.Close()
		t.Error("the proxy still accepts after Close")
	}
}

// A target that is down is refused through the proxy too, once a
// connection found it down (that one is reset); when it is back on its
// port, the proxy listens again on its own, and passes.
func TestTargetDown(t *testing.T) {
	e := startEcho(t)
	addr := e.ln.Addr().String()
	p := startProxy(t, addr)
	_ = e.ln.Close()
	// The first connection is reset, maybe before its connect returns.
	if first, err := net.DialTimeout("tcp", p.Addr(), 2*time.Second); err == nil {
		_ = first.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := first.Read(make([]byte, 1))
		first.Close()
		if err == nil {
			t.Fatal("read through a proxy to nothing succeeded")
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		if err == nil {
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("dialing the proxy of a down target: %v, want connection refused", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Blackhole while refusing: a partition accepts and holds silent.
	p.Blackhole()
	held := dial(t, p)
	if !silent(t, held, "x", 200*time.Millisecond) {
		t.Fatal("a connection answered during the blackhole")
	}
	p.Pass()

	back, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the target's port was taken meanwhile: %v", err)
	}
	e2 := &echo{ln: back}
	serveEcho(t, e2)
	deadline = time.Now().Add(3 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if err == nil {
			got, rerr := roundTrip(c, "back", time.Second)
			c.Close()
			if rerr == nil && got == "back" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the target is back, the proxy still does not pass: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
