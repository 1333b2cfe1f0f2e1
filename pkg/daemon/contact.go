package daemon

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"
)

// A loop cut off from the API server sees nothing: its caches stop, and
// its slices, if it writes them, go stale. The probes say so. /readyz
// fails once the API server has answered nothing for BlindReady, so that
// a Service or a dashboard routing on readiness knows the loop is blind;
// /healthz fails after BlindLive, by when client-go's own check of an idle
// HTTP/2 connection (a ping after 30 s, 15 s to answer) has replaced a
// dead one, so that a loop still blind is stuck or partitioned, and the
// kubelet's restart gives it a new process and new connections. While it
// has heard nothing for contactEvery, the loop asks the API server for its
// version, so that a quiet cluster (no Lease to renew, no write to make)
// is not taken for a silent one.
const (
	BlindReady   = 15 * time.Second
	BlindLive    = 60 * time.Second
	contactEvery = 5 * time.Second
)

// contact keeps the loop's word with the API server: the probes' checks
// and the periodic question.
type contact struct {
	heard func() (time.Time, bool)
	now   func() time.Time
}

// blind is a check failing once nothing was heard for longer than bound;
// it passes when nothing can be said (no transport watched).
func (c contact) blind(bound time.Duration) check {
	return func(*http.Request) error {
		at, ok := c.heard()
		if !ok {
			return nil
		}
		if d := c.now().Sub(at); d > bound {
			return fmt.Errorf("blind: no answer from the API server for %v (longer than %v)", d.Round(time.Second), bound)
		}
		return nil
	}
}

// keepInTouch asks the API server its version whenever nothing was heard
// for contactEvery, until ctx ends; the answer is heard through the
// client's watched transport.
func (c contact) keepInTouch(ctx context.Context, client kubernetes.Interface) {
	if _, ok := c.heard(); !ok {
		return // nothing would hear the answer
	}
	t := time.NewTicker(contactEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if at, _ := c.heard(); c.now().Sub(at) < contactEvery {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, contactEvery)
		_ = client.Discovery().RESTClient().Get().AbsPath("/version").Do(actx).Error()
		cancel()
	}
}

// probes are the loop's: ready once its caches filled and while it hears
// the API server; alive while its run loop beats, its informers run, its
// Lease is renewed in time (the election's watchdog) and it has not been
// blind for long.
func (lp *loop) probes() probes {
	p := probes{
		ready: []check{func(*http.Request) error { return lp.ctrl.Ready() }, lp.contact.blind(BlindReady)},
		live:  []check{func(*http.Request) error { return lp.ctrl.Healthy() }, lp.contact.blind(BlindLive)},
	}
	if lp.watchdog != nil {
		p.live = append(p.live, lp.watchdog.Check)
	}
	return p
}
