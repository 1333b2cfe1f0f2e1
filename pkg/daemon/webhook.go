package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// Webhook configures the admission webhook's HTTPS server. The Handler is
// built by the caller from its flags; its Service admissions are judged
// once the process's cache has filled, and its handling times are summed
// up when the server stops.
type Webhook struct {
	Addr, CertFile, KeyFile string
	Handler                 *webhook.Handler
}

// webhookServer is a webhook bound and ready to serve.
type webhookServer struct {
	cfg      Webhook
	stats    webhook.Stats
	certs    *webhook.CertReloader
	log      io.Writer
	requests func() int
	ln       net.Listener

	mu        sync.Mutex
	baseline  int // API requests counted when the caches filled
	hasSynced bool
}

// listenWebhook loads the certificate and binds the address before the
// caches or the loop start: a missing file or a taken port is a
// ConfigError and nothing has run.
func listenWebhook(cfg Webhook, log io.Writer, requests func() int) (*webhookServer, error) {
	s := &webhookServer{cfg: cfg, log: log, requests: requests}
	cfg.Handler.Observe = s.stats.Observe
	var err error
	if s.certs, err = webhook.NewCertReloader(cfg.CertFile, cfg.KeyFile); err != nil {
		return nil, &ConfigError{err}
	}
	s.certs.OnReload = func(err error) {
		if err != nil {
			fmt.Fprintf(s.log, "webhook: cannot reload the serving certificate, keeping the previous one: %v\n", err)
			return
		}
		fmt.Fprintf(s.log, "webhook: serving certificate loaded from %s\n", cfg.CertFile)
	}
	if s.ln, err = webhook.Listen(cfg.Addr); err != nil {
		return nil, &ConfigError{fmt.Errorf("--webhook-addr %s: %v", cfg.Addr, errors.Unwrap(err))}
	}
	fmt.Fprintf(s.log, "webhook: serving https://%s%s and %s\n", s.ln.Addr(), webhook.ServicesPath, webhook.EndpointSlicesPath)
	return s, nil
}

// synced lets the Service handler answer from the filled cache.
func (s *webhookServer) synced(c *cluster.Cache, namespace string) {
	s.cfg.Handler.SetSource(webhook.CacheSource{Cache: c, Namespace: namespace})
	s.mu.Lock()
	s.baseline, s.hasSynced = s.requests(), true
	s.mu.Unlock()
	fmt.Fprintln(s.log, "webhook: caches filled; Service admissions are judged from now on")
}

// run serves on the bound listener until ctx is done and prints a summary
// line.
func (s *webhookServer) run(ctx context.Context) error {
	err := webhook.Serve(ctx, s.ln, s.cfg.Handler.Mux(), s.certs)
	counts, p50, p99 := s.stats.Summary()
	line := fmt.Sprintf("webhook: stopped; %d Service and %d EndpointSlice admissions, handling time p50 %v p99 %v, %d TLS handshakes",
		counts[webhook.ServicesPath], counts[webhook.EndpointSlicesPath], p50.Round(time.Microsecond), p99.Round(time.Microsecond), s.certs.Handshakes())
	s.mu.Lock()
	if n := s.requests(); n >= 0 && s.hasSynced {
		line += fmt.Sprintf("; API requests since the caches filled: %d", n-s.baseline)
	}
	s.mu.Unlock()
	fmt.Fprintln(s.log, line)
	return err
}
