package faultproxy

import (
	"net"
	"sync"
	"time"
)

// chunkSize is what one read takes; each chunk is delayed as a whole.
const chunkSize = 32 << 10

// queued bounds the chunks read ahead of their delayed write per
// direction; past it the reader waits, and TCP pushes back on the sender.
const queued = 256

// link is one client connection and its connection to the target (nil
// when it was accepted during a blackhole).
type link struct {
	p              *Proxy
	client, server net.Conn
	// cut, under p.mu, is set once the link lived through a blackhole:
	// nothing crosses it any more, and Pass closes it.
	cut  bool
	dead chan struct{}
	once sync.Once
}

type chunk struct {
	data []byte
	read time.Time
}

// pipe copies src to dst (nil: nowhere, the link is cut) through the
// proxy's mode: a reader that never stops reading (so that a blackhole
// drops rather than holds), and a writer that waits out the delay.
func (l *link) pipe(src, dst net.Conn) {
	defer l.p.wg.Done()
	ch := make(chan chunk, queued)
	l.p.wg.Add(1)
	go func() {
		defer l.p.wg.Done()
		defer close(ch)
		for {
			buf := make([]byte, chunkSize)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case ch <- chunk{buf[:n], time.Now()}:
				case <-l.dead:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		if !l.due(c.read) {
			continue // dropped: the link is cut
		}
		if _, err := dst.Write(c.data); err != nil {
			l.close(false)
			return
		}
	}
	// src ended. A cut link carries no FIN either: Pass or Close ends it.
	l.p.mu.Lock()
	cut := l.cut
	l.p.mu.Unlock()
	if !cut {
		l.close(false)
	}
}

// due waits until a chunk read at read may be written, the delay counted
// from then (re-read at every change of mode), and says whether it may be
// written at all.
func (l *link) due(read time.Time) bool {
	for {
		l.p.mu.Lock()
		cut, d, changed := l.cut, l.p.delay, l.p.changed
		l.p.mu.Unlock()
		if cut {
			return false
		}
		wait := time.Until(read.Add(d))
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-changed:
			t.Stop()
		case <-l.dead:
			t.Stop()
			return false
		}
	}
}

// close closes both connections, with an RST when reset, and forgets the
// link.
func (l *link) close(reset bool) {
	l.once.Do(func() {
		close(l.dead)
		for _, c := range []net.Conn{l.client, l.server} {
			if c == nil {
				continue
			}
			if tc, ok := c.(*net.TCPConn); ok && reset {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
		}
		l.p.mu.Lock()
		delete(l.p.links, l)
		l.p.mu.Unlock()
	})
}
