package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/serve"
)

// Paths the handlers are served at.
const (
	ServicesPath       = "/validate/services"
	EndpointSlicesPath = "/validate/endpointslices"
)

// maxBody bounds an AdmissionReview; the API server sends at most a few
// objects' worth (old and new).
const maxBody = 8 << 20

// Source is the cluster cache as the Service handler reads it: in memory,
// never an API call.
type Source interface {
	// Facts gathers what ServiceFindings needs about a Service.
	Facts(svc *corev1.Service) Facts
}

// Handler answers AdmissionReviews. The Service handler answers "allowed,
// no warnings" until a Source is set (the cache has not synced yet): the
// Services webhook fails open anyway, and no warning beats a wrong one.
type Handler struct {
	Plan   reconcile.Options
	DenyOn map[Kind]bool
	Guard  Guard
	// Access says who may read the Pod data behind a Service finding; nil
	// hides it from everyone.
	Access PodAccess
	// Observe, when set, is told how long each admission took to handle.
	Observe func(path string, d time.Duration)

	source atomic.Pointer[Source]
}

// SetSource makes the Service handler answer from src.
func (h *Handler) SetSource(src Source) { h.source.Store(&src) }

// Mux serves both paths.
func (h *Handler) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc(ServicesPath, h.serve(h.services))
	mux.HandleFunc(EndpointSlicesPath, h.serve(h.endpointSlices))
	return mux
}

// serve decodes an AdmissionReview, asks decide and encodes the answer; a
// request that is not an AdmissionReview gets 400.
func (h *Handler) serve(decide func(context.Context, *admissionv1.AdmissionRequest) (Verdict, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.Method != http.MethodPost {
			http.Error(w, "POST an admission.k8s.io/v1 AdmissionReview", http.StatusMethodNotAllowed)
			return
		}
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		v, err := decide(withCaller(r.Context(), r), review.Request)
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: v.Allowed, Warnings: v.Warnings}
		switch {
		case err != nil:
			// An object we cannot read is the API server's to validate;
			// never block a write on our own failure.
			resp.Allowed = true
			resp.Warnings = []string{warning(warnPrefix + "admission check failed: " + err.Error())}
		case !v.Allowed:
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: v.Message}
		}
		out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
		if out.APIVersion == "" {
			out.APIVersion, out.Kind = "admission.k8s.io/v1", "AdmissionReview"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
		if h.Observe != nil {
			h.Observe(r.URL.Path, time.Since(start))
		}
	}
}

func (h *Handler) services(ctx context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return Verdict{Allowed: true}, nil
	}
	src := h.source.Load()
	if src == nil {
		return Verdict{Allowed: true}, nil
	}
	svc := &corev1.Service{}
	if err := decode(req.Object, svc); err != nil {
		return Verdict{}, err
	}
	if svc.Namespace == "" {
		svc.Namespace = req.Namespace
	}
	if svc.Name == "" {
		svc.Name = req.Name
	}
	findings, err := ServiceFindings(svc, (*src).Facts(svc), h.Plan)
	if err != nil {
		return Verdict{}, err
	}
	return Decide(findings, h.DenyOn, h.mayListPods(ctx, findings, req.UserInfo, svc.Namespace)), nil
}

// mayListPods asks Access only when a finding holds Pod data: a correct
// Service, the common case, costs no review even on a cache miss. And only
// for a caller whose client certificate was verified: a review from anyone
// else may claim any userInfo (system:masters), so it neither reads Pod
// data nor makes the webhook ask the API server anything.
func (h *Handler) mayListPods(ctx context.Context, findings []Finding, u authenticationv1.UserInfo, ns string) bool {
	for _, f := range findings {
		if f.HasPodData() {
			return callerVerified(ctx) && h.Access != nil && h.Access.MayListPods(ctx, u, ns)
		}
	}
	return false
}

func (h *Handler) endpointSlices(_ context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
	w := SliceWrite{Operation: string(req.Operation), User: req.UserInfo.Username, Groups: req.UserInfo.Groups}
	if req.Operation == admissionv1.Delete || req.Operation == admissionv1.Connect {
		return Verdict{Allowed: true}, nil
	}
	w.New = &discovery.EndpointSlice{}
	if err := decode(req.Object, w.New); err != nil {
		return Verdict{}, err
	}
	if w.New.Namespace == "" {
		w.New.Namespace = req.Namespace
	}
	if len(req.OldObject.Raw) > 0 {
		w.Old = &discovery.EndpointSlice{}
		if err := decode(req.OldObject, w.Old); err != nil {
			return Verdict{}, err
		}
	}
	w.FieldManager = fieldManager(req.Options)
	return h.Guard.Judge(w), nil
}

// fieldManager reads the field manager from the request's options: the API
// server sends CreateOptions for a create and UpdateOptions for an update
// or a patch (a patch's options are converted), both with fieldManager.
func fieldManager(opts runtime.RawExtension) string {
	if len(opts.Raw) == 0 {
		return ""
	}
	var o struct {
		FieldManager string `json:"fieldManager"`
	}
	if err := json.Unmarshal(opts.Raw, &o); err != nil {
		return ""
	}
	return o.FieldManager
}

func decode(raw runtime.RawExtension, into any) error {
	if len(raw.Raw) == 0 {
		return fmt.Errorf("the request carries no object")
	}
	return json.Unmarshal(raw.Raw, into)
}

// Listen binds addr for Serve, so that a taken port is an error at start,
// before anything else runs, and ":0" tells the caller the port it got.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("webhook: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Limits are the webhook server's timeouts and connection bound. The API
// server waits at most 30 s for an admission (timeoutSeconds' maximum), so
// a request or response that takes longer is nobody's; it keeps its
// connections (HTTP/2, or HTTP/1.1 keep-alives) open between admissions,
// and one idle for IdleTimeout is closed (HTTP/2 with a GOAWAY, after
// which the API server opens a new one: a handshake of a few
// milliseconds). MaxConns is far above the few connections an API server
// keeps, and bounds what a peer that reaches the port can hold (1,000
// idle TLS connections to it and 1,000 to the health server raised the
// process's memory by 28 MiB: e2e TestServerIdleConnections); one remote
// address holds at most 32 of them, so that one peer cannot keep the API
// server out.
var Limits = serve.Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, MaxConns: 512, MaxPerSource: 32}

// TLS is what the server presents and asks of its callers: its serving
// pair, and, when ClientCAs is set, the authorities one of which must have
// signed the caller's client certificate.
type TLS struct {
	Certs     *CertReloader
	ClientCAs *ClientCAs
}

// Serve serves h over TLS on ln (from Listen) until ctx is done, then shuts
// down, letting requests in flight finish. ServeTLS (not Serve on a TLS
// listener) sets up HTTP/2 as the API server expects, whose connections
// Shutdown closes at once when idle.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, t TLS) error {
	return serveWith(ctx, ln, h, t, Limits)
}

func serveWith(ctx context.Context, ln net.Listener, h http.Handler, t TLS, l serve.Limits) error {
	srv := l.Server(h)
	srv.TLSConfig = tlsConfig(t.Certs, t.ClientCAs)
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(l.Listener(ln), "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Admissions in flight finish; connections the API server keeps open
	// (HTTP/2 ones are not closed by Shutdown until the client lets go) are
	// cut after the grace period. Stopping was asked for, so neither is an
	// error of the command.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
