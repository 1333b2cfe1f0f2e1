package faultproxy

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// dialTimeout bounds the connection to the target; the target is on
// loopback, so anything longer is a target that is down.
const dialTimeout = 5 * time.Second

// probeEvery is how often a refusing proxy asks whether its target
// accepts again.
const probeEvery = 50 * time.Millisecond

// Proxy forwards TCP connections from a loopback port to one target,
// through the fault of the moment. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	addr   string

	mu sync.Mutex
	// ln is the listener while the proxy listens; refusing is set while
	// it does not, because its target refuses connections (refuse).
	ln        net.Listener
	refusing  bool
	blackhole bool
	delay     time.Duration
	// changed is closed and replaced at every change of mode, to wake the
	// writers waiting out a delay.
	changed chan struct{}
	links   map[*link]struct{}
	closed  bool

	quit      chan struct{}
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
	p := &Proxy{target: target, addr: ln.Addr().String(), ln: ln, changed: make(chan struct{}),
		links: map[*link]struct{}{}, quit: make(chan struct{})}
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// Addr is the proxy's address, "127.0.0.1:PORT".
func (p *Proxy) Addr() string { return p.addr }

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
	if p.refusing && !p.closed {
		// A partition is silence, not a refusal: listen again, even though
		// the target is down (if the port was taken meanwhile, the probe
		// keeps trying once the target is back).
		p.listenLocked()
	}
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
		close(p.quit)
		all := make([]*link, 0, len(p.links))
		for l := range p.links {
			all = append(all, l)
		}
		p.signalLocked()
		ln := p.ln
		p.mu.Unlock()
		_ = ln.Close()
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

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed: by Close, or to refuse
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
			if tc, ok := client.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = client.Close()
			if errors.Is(err, syscall.ECONNREFUSED) {
				p.refuse()
			}
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

// refuse stops listening because the target refuses connections (it is
// down), so that the proxy's clients are refused too, as they would be
// without it: clients tell a refusal from a connection that breaks (the
// one that found the target down was accepted already, and is reset). A
// probe listens again on the same address once the target accepts.
func (p *Proxy) refuse() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.refusing || p.blackhole {
		return
	}
	p.refusing = true
	_ = p.ln.Close()
	p.wg.Add(1)
	go p.probe()
}

// probe dials the target every probeEvery until it accepts, then listens
// again (unless Blackhole did meanwhile, or Close).
func (p *Proxy) probe() {
	defer p.wg.Done()
	for {
		select {
		case <-p.quit:
			return
		case <-time.After(probeEvery):
		}
		c, err := net.DialTimeout("tcp", p.target, dialTimeout)
		if err != nil {
			continue
		}
		_ = c.Close()
		p.mu.Lock()
		if p.closed || !p.refusing {
			p.mu.Unlock()
			return
		}
		p.listenLocked()
		done := !p.refusing
		p.mu.Unlock()
		if done {
			return
		}
	}
}

// listenLocked listens on the proxy's address again and accepts there.
func (p *Proxy) listenLocked() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return // the port is taken for now; still refusing
	}
	p.ln, p.refusing = ln, false
	p.wg.Add(1)
	go p.accept(ln)
}
