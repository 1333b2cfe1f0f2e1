package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubectl-slices/kubectl-slices/pkg/serve"
)

// check is one probe's condition; nil means fine.
type check func(*http.Request) error

// probe answers 200 "ok" while every check passes, else 503 naming the first
// failure, as the kubelet's probes and kube-controller-manager's expect.
func probe(checks ...check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, c := range checks {
			if c == nil {
				continue
			}
			if err := c(r); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
}

// listenHealth binds addr before anything else starts, so that a taken port
// fails before any request and /readyz can say "not ready" while the caches
// fill.
func listenHealth(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("--health-addr %s: %v", addr, err)}
	}
	return ln, nil
}

// healthLimits bound the health server: its callers are the kubelet's
// probes (a connection each) and a metrics scraper (one kept-alive
// connection, reopened if it idles past the scrape interval), so a few
// dozen connections is plenty, and anything more is a peer holding them.
// One remote address holds at most 32, so that a peer (the NetworkPolicy
// leaves the port open to every Pod) cannot keep out the kubelet's probes,
// which come from the node's address.
var healthLimits = serve.Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: 10 * time.Second, MaxConns: 256, MaxPerSource: 32}

// probes are what /readyz and /healthz check, in order; the first failure
// is the answer.
type probes struct{ ready, live []check }

// serveHealth serves /healthz, /readyz and /metrics on ln until ctx is done.
func serveHealth(ctx context.Context, ln net.Listener, reg *prometheus.Registry, p probes) {
	mux := http.NewServeMux()
	mux.Handle("/healthz", probe(p.live...))
	mux.Handle("/readyz", probe(p.ready...))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := healthLimits.Server(mux)
	go func() {
		if err := srv.Serve(healthLimits.Listener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener closed under us: the probes fail, the kubelet acts
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
}
