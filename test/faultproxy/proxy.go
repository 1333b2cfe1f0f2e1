package faultproxy

import (
	"net"
	"sync"
	"time"
)

// dialTimeout bounds the connection to the target; the target is on
// loopback, so anything longer is a target that is down.
const dialTimeout = 5 * time.Second

// Proxy forwards TCP connections from a loopback port to one target,
// through the fault of the moment. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener

	mu        sync.Mutex
	blackhole bool
	delay     time.Duration
	// changed is closed and replaced at every change of mode, to wake the
	// writers waiting out a delay.
	changed chan struct{}
	links   map[*link]struct{}
	closed  bool

	closeOnce sync.Once
	wg        sync.WaitGroup
}

// Start listens on 127.0.0.1:0 and forwards every connection it accepts
// to target (host:port), passing.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, changed: make(chan struct{}), links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, "127.0.0.1:PORT".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the address as an API server URL a kubeconfig can name.
func (p *Proxy) URL() string { return "https://" + p.Addr() }

// Pass forwards normally. It ends a Delay; after a Blackhole it closes
// every connection that lived through it, whose streams lost bytes and
// cannot resume, so that the client dials again.
func (p *Proxy) Pass() {
	p.mu.Lock()
	p.blackhole, p.delay = false, 0
	var cut []*link
	for l := range p.links {
		if l.cut {
			cut = append(cut, l)
		}
	}
	p.signalLocked()
	p.mu.Unlock()
	for _, l := range cut {
		l.close(false)
	}
}

// Blackhole partitions: from now on no byte crosses in either direction,
// on the connections open and on those accepted meanwhile (held open and
// silent), and what arrives is dropped. A chunk already being written
// when it is called may still arrive.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.blackhole = true
	for l := range p.links {
		l.cut = true
	}
	p.signalLocked()
	p.mu.Unlock()
}

// Reset closes every connection at once with an RST (SO_LINGER 0) on both
// sides, and passes from then on (ending a Blackhole or a Delay).
func (p *Proxy) Reset() {
	p.mu.Lock()
	p.blackhole, p.delay = false, 0
	all := make([]*link, 0, len(p.links))
	for l := range p.links {
		all = append(all, l)
	}
	p.signalLocked()
	p.mu.Unlock()
	for _, l := range all {
		l.close(true)
	}
}

// Delay forwards every chunk d after it was read, in order, in each
// direction, on every connection: a round trip costs 2d. It ends a
// Blackhole as Pass does.
func (p *Proxy) Delay(d time.Duration) {
	p.Pass()
	p.mu.Lock()
	p.delay = d
	p.signalLocked()
	p.mu.Unlock()
}

// Close stops listening and closes every connection; it waits until every
// goroutine of the proxy has ended. Calling it again does nothing.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		all := make([]*link, 0, len(p.links))
		for l := range p.links {
			all = append(all, l)
		}
		p.signalLocked()
		p.mu.Unlock()
		_ = p.ln.Close()
		for _, l := range all {
			l.close(false)
		}
		p.wg.Wait()
	})
}

// Conns is the number of connections open through the proxy.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

func (p *Proxy) signalLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve dials the target for a new connection, unless the proxy is
// blackholed: then the client is held silent and never reaches it.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	p.mu.Lock()
	black, closed := p.blackhole, p.closed
	p.mu.Unlock()
	if closed {
		_ = client.Close()
		return
	}
	l := &link{p: p, client: client, dead: make(chan struct{})}
	if !black {
		server, err := net.DialTimeout("tcp", p.target, dialTimeout)
		if err != nil {
			_ = client.Close()
			return
		}
		l.server = server
	}
	p.mu.Lock()
	switch {
	case p.closed, l.server == nil && !p.blackhole:
		// Closed meanwhile, or accepted during a blackhole that Pass has
		// ended already: it lived through it, so it is closed as Pass
		// closes the others.
		p.mu.Unlock()
		l.close(false)
		return
	}
	l.cut = p.blackhole
	p.links[l] = struct{}{}
	p.mu.Unlock()

	p.wg.Add(1)
	go l.pipe(client, l.server)
	if l.server != nil {
		p.wg.Add(1)
		go l.pipe(l.server, client)
	}
}
