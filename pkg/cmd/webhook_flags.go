package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// WebhookFlags are the admission webhook's flags, on `webhook` and on
// `sync --watch`.
type WebhookFlags struct {
	Addr, CertFile, KeyFile string
	DenyOn                  []string
	AllowUsers, AllowGroups []string
	denyOn                  map[webhook.Kind]bool
}

func addWebhookFlags(cmd *cobra.Command, w *WebhookFlags) {
	cmd.Flags().StringVar(&w.Addr, "webhook-addr", "", "Serve the validating admission webhook on HOST:PORT (HTTPS)")
	cmd.Flags().StringVar(&w.CertFile, "tls-cert-file", "", "The webhook's serving certificate (PEM); re-read when it changes")
	cmd.Flags().StringVar(&w.KeyFile, "tls-private-key-file", "", "The webhook's private key (PEM); re-read when it changes")
	cmd.Flags().StringSliceVar(&w.DenyOn, "deny-on", nil, "Service findings that deny the write instead of warning (comma-separated, e.g. NoPods,PortNotFound)")
	cmd.Flags().StringSliceVar(&w.AllowUsers, "allow-user", nil, "Users allowed to write our EndpointSlices whatever their field manager (e.g. system:serviceaccount:NS:NAME)")
	cmd.Flags().StringSliceVar(&w.AllowGroups, "allow-group", nil, "Groups allowed to write our EndpointSlices whatever their field manager")
}

// validate checks the flags; required says the webhook is the command's
// whole point (standalone) rather than an addition to sync --watch.
func (w *WebhookFlags) validate(required bool) error {
	set := w.Addr != "" || w.CertFile != "" || w.KeyFile != "" || len(w.DenyOn) > 0 || len(w.AllowUsers) > 0 || len(w.AllowGroups) > 0
	if !required && !set {
		return nil
	}
	if w.Addr == "" || w.CertFile == "" || w.KeyFile == "" {
		return usageError("the webhook needs --webhook-addr, --tls-cert-file and --tls-private-key-file")
	}
	var err error
	w.denyOn, err = parseKinds(w.DenyOn)
	return err
}

// webhookServer is a webhook ready to serve; it answers Service admissions
// once synced hands it the cache.
type webhookServer struct {
	flags   *WebhookFlags
	handler *webhook.Handler
	certs   *webhook.CertReloader
	stats   *webhook.Stats
	log     io.Writer
	ln      net.Listener // bound by listen, served by run

	mu        sync.Mutex
	baseline  int // API requests counted when the caches filled
	hasSynced bool
}

func (w *WebhookFlags) server(root *RootOptions, plan PlanFlags, fieldManagers []string) (*webhookServer, error) {
	s := &webhookServer{flags: w, stats: &webhook.Stats{}, log: root.ErrOut}
	var err error
	s.certs, err = webhook.NewCertReloader(w.CertFile, w.KeyFile)
	if err != nil {
		return nil, usageError("%v", err)
	}
	s.certs.OnReload = func(err error) {
		if err != nil {
			fmt.Fprintf(s.log, "webhook: cannot reload the serving certificate, keeping the previous one: %v\n", err)
			return
		}
		fmt.Fprintf(s.log, "webhook: serving certificate loaded from %s\n", w.CertFile)
	}
	s.handler = &webhook.Handler{Plan: plan.options(), DenyOn: w.denyOn, Observe: s.stats.Observe,
		Guard: webhook.Guard{ManagedBy: plan.ManagedBy, FieldManagers: fieldManagers, Users: w.AllowUsers, Groups: w.AllowGroups}}
	return s, nil
}

// synced lets the Service handler answer from the filled cache.
func (s *webhookServer) synced(c *cluster.Cache, namespace string) {
	s.handler.SetSource(webhook.CacheSource{Cache: c, Namespace: namespace})
	s.mu.Lock()
	s.baseline, s.hasSynced = requestsMade(), true
	s.mu.Unlock()
	fmt.Fprintln(s.log, "webhook: caches filled; Service admissions are judged from now on")
}

// listen binds --webhook-addr before the caches or the loop start, so a
// taken port is a usage error (as --health-addr's) and nothing has run.
func (s *webhookServer) listen() error {
	ln, err := webhook.Listen(s.flags.Addr)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--webhook-addr %s: %v", s.flags.Addr, errors.Unwrap(err))}
	}
	s.ln = ln
	fmt.Fprintf(s.log, "webhook: serving https://%s%s and %s\n", ln.Addr(), webhook.ServicesPath, webhook.EndpointSlicesPath)
	return nil
}

// run serves on the bound listener until ctx is done and prints a summary
// line.
func (s *webhookServer) run(ctx context.Context) error {
	err := webhook.Serve(ctx, s.ln, s.handler.Mux(), s.certs)
	counts, p50, p99 := s.stats.Summary()
	line := fmt.Sprintf("webhook: stopped; %d Service and %d EndpointSlice admissions, handling time p50 %v p99 %v, %d TLS handshakes",
		counts[webhook.ServicesPath], counts[webhook.EndpointSlicesPath], p50.Round(time.Microsecond), p99.Round(time.Microsecond), s.certs.Handshakes())
	s.mu.Lock()
	if n := requestsMade(); n >= 0 && s.hasSynced {
		line += fmt.Sprintf("; API requests since the caches filled: %d", n-s.baseline)
	}
	s.mu.Unlock()
	fmt.Fprintln(s.log, line)
	return err
}
