package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// Webhook configures the admission webhook's HTTPS server. The Handler is
// built by the caller from its flags; its Service admissions are judged
// once the process's cache has filled, and its handling times are summed
// up when the server stops.
type Webhook struct {
	Addr, CertFile, KeyFile string
	// ClientCAFile, when set, makes every caller present a client
	// certificate signed by one of its CAs (the API server's, from its
	// AdmissionConfiguration): only then are Service warnings' Pod names
	// shown, to writers who may list the Pods.
	ClientCAFile string
	Handler      *webhook.Handler
	// AllowSelf lets the process's own identity (as the API server
	// authenticates it: a SelfSubjectReview at start) write our slices:
	// the webhook serves beside the loop, whose writes are its own.
	AllowSelf bool
}

// webhookServer is a webhook bound and ready to serve.
type webhookServer struct {
	cfg      Webhook
	stats    webhook.Stats
	certs    *webhook.CertReloader
	cas      *webhook.ClientCAs
	log      io.Writer
	requests func() int
	ln       net.Listener

	access *webhook.AccessCache

	mu        sync.Mutex
	baseline  int // API requests counted when the caches filled
	hasSynced bool
}

// listenWebhook loads the certificate and binds the address before the
// caches or the loop start: a missing file or a taken port is a
// ConfigError and nothing has run. Then, with AllowSelf, it asks the API
// server who this process is (one request).
func listenWebhook(ctx context.Context, client kubernetes.Interface, cfg Webhook, log io.Writer, requests func() int) (*webhookServer, error) {
	s := &webhookServer{cfg: cfg, log: log, requests: requests}
	cfg.Handler.Observe = s.stats.Observe
	if cfg.Handler.Access == nil {
		// Pod data in Service warnings only for those who may list Pods.
		s.access = webhook.NewAccessCache(client.AuthorizationV1().SubjectAccessReviews().Create)
		cfg.Handler.Access = s.access
	}
	var err error
	if s.certs, err = webhook.NewCertReloader(cfg.CertFile, cfg.KeyFile); err != nil {
		return nil, &ConfigError{err}
	}
	s.certs.OnReload = func(err error) {
		if err != nil {
			fmt.Fprintln(s.log, printers.WebhookCertKept(err))
			return
		}
		fmt.Fprintln(s.log, printers.WebhookCertLoaded(cfg.CertFile))
	}
	if err = s.loadClientCAs(); err != nil {
		return nil, &ConfigError{err}
	}
	if s.ln, err = webhook.Listen(cfg.Addr); err != nil {
		return nil, &ConfigError{fmt.Errorf("--webhook-addr %s: %v", cfg.Addr, errors.Unwrap(err))}
	}
	if cfg.AllowSelf {
		allowSelf(ctx, client, cfg.Handler, log)
	}
	fmt.Fprintln(s.log, printers.WebhookServing(s.ln.Addr().String(), webhook.ServicesPath, webhook.EndpointSlicesPath))
	return s, nil
}

// loadClientCAs loads --client-ca-file, if any, and says what it means.
func (s *webhookServer) loadClientCAs() error {
	if s.cfg.ClientCAFile == "" {
		fmt.Fprintln(s.log, printers.WebhookNoClientCA())
		return nil
	}
	var err error
	if s.cas, err = webhook.NewClientCAs(s.cfg.ClientCAFile); err != nil {
		return fmt.Errorf("--client-ca-file: %w", err)
	}
	s.cas.OnReload = func(err error) {
		if err != nil {
			fmt.Fprintln(s.log, printers.WebhookClientCAKept(err))
			return
		}
		fmt.Fprintln(s.log, printers.WebhookClientCAReloaded(s.cfg.ClientCAFile))
	}
	fmt.Fprintln(s.log, printers.WebhookClientCA(s.cfg.ClientCAFile))
	return nil
}

// allowSelf adds the process's own user, as the API server authenticates
// it, to the identities the guard lets write our slices: the loop beside
// the webhook writes with it. Its groups are not added (they would admit
// every ServiceAccount, or everyone authenticated). Without the answer the
// loop's writes pass only if --allow-user or --allow-group names it.
func allowSelf(ctx context.Context, client kubernetes.Interface, h *webhook.Handler, log io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		fmt.Fprintln(log, printers.WebhookSelfUnknown(err))
		return
	}
	h.Guard.Users = append(slices.Clone(h.Guard.Users), r.Status.UserInfo.Username)
	fmt.Fprintln(log, printers.WebhookSelfAllowed(h.Guard.Users, h.Guard.Groups))
}

// synced lets the Service handler answer from the filled cache.
func (s *webhookServer) synced(c *cluster.Cache, namespace string) {
	s.cfg.Handler.SetSource(webhook.CacheSource{Cache: c, Namespace: namespace})
	s.mu.Lock()
	s.baseline, s.hasSynced = s.requests(), true
	s.mu.Unlock()
	fmt.Fprintln(s.log, printers.WebhookCachesFilled())
}

// run serves on the bound listener until ctx is done and prints a summary
// line.
func (s *webhookServer) run(ctx context.Context) error {
	err := webhook.Serve(ctx, s.ln, s.cfg.Handler.Mux(), webhook.TLS{Certs: s.certs, ClientCAs: s.cas})
	counts, p50, p99 := s.stats.Summary()
	st := printers.WebhookStats{Services: counts[webhook.ServicesPath], EndpointSlices: counts[webhook.EndpointSlicesPath],
		P50: p50, P99: p99, Handshakes: s.certs.Handshakes(), Requests: -1, Reviews: -1, Limited: -1}
	s.mu.Lock()
	if n := s.requests(); n >= 0 && s.hasSynced {
		st.Requests = n - s.baseline
	}
	s.mu.Unlock()
	if s.access != nil {
		// Each is a cache miss: at most one per user and namespace per
		// 30 s (10 s when refused), for Services with findings.
		st.Reviews, st.Limited = s.access.Reviews(), s.access.Limited()
	}
	fmt.Fprintln(s.log, printers.WebhookStopped(st))
	return err
}
