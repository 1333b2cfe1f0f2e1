package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

type fixedSource struct{ pods []*corev1.Pod }

// podReaders plays the authorizer: the users who may list Pods.
type podReaders map[string]bool

func (p podReaders) MayListPods(_ context.Context, u authenticationv1.UserInfo, ns string) bool {
	return p[u.Username+"@"+ns]
}

func (s fixedSource) Facts(svc *corev1.Service) Facts { return matching(svc, s.pods) }

// review posts req as a caller whose client certificate was verified (the
// API server, with --client-ca-file).
func review(t *testing.T, h http.Handler, path string, req admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	return post(t, h, path, req, &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{}}}})
}

// post posts req over a connection in state cs (nil: not TLS).
func post(t *testing.T, h http.Handler, path string, req admissionv1.AdmissionRequest, cs *tls.ConnectionState) *admissionv1.AdmissionResponse {
	t.Helper()
	body, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: &req})
	rec := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	hr.TLS = cs
	h.ServeHTTP(rec, hr)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response.UID != req.UID {
		t.Fatalf("bad envelope: %+v", out)
	}
	return out.Response
}

func raw(t *testing.T, obj any) runtime.RawExtension {
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

func TestHandler(t *testing.T) {
	stats := &Stats{}
	h := &Handler{Plan: reconcile.DefaultOptions(), Observe: stats.Observe, Access: podReaders{"admin@ns": true},
		Guard: Guard{ManagedBy: "kubectl-slices", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}}}
	mux := h.Mux()
	typo := svc(map[string]string{"app": "Web"}, sport("http", 80, intstr.FromString("http")))
	req := admissionv1.AdmissionRequest{UID: types.UID("u1"), Operation: admissionv1.Create, Namespace: "ns", Object: raw(t, typo),
		UserInfo: authenticationv1.UserInfo{Username: "admin"}}
	if r := review(t, mux, ServicesPath, req); !r.Allowed || len(r.Warnings) != 0 {
		t.Fatalf("before the cache filled: %+v", r)
	}
	h.SetSource(fixedSource{pods: []*corev1.Pod{pod("web-0", map[string]string{"app": "web"}, "10.1.0.1", "", httpPort)}})
	r := review(t, mux, ServicesPath, req)
	if !r.Allowed || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "nearest miss: pod web-0 has app=web") {
		t.Fatalf("typo: %+v", r)
	}
	// A writer who may not list the namespace's Pods learns of the typo,
	// not of the Pods.
	blind := req
	blind.UserInfo = authenticationv1.UserInfo{Username: "svc-writer"}
	r = review(t, mux, ServicesPath, blind)
	if !r.Allowed || len(r.Warnings) != 1 || strings.Contains(r.Warnings[0], "web-0") || strings.Contains(r.Warnings[0], "app=web") ||
		!strings.Contains(r.Warnings[0], "matches no Pods in namespace ns; 1 Pod differs by one label (details hidden: you may not list pods in ns)") {
		t.Fatalf("typo, as a writer who may not list Pods: %+v", r)
	}
	h.Access = nil // no authorizer to ask: hidden
	if r := review(t, mux, ServicesPath, req); len(r.Warnings) != 1 || strings.Contains(r.Warnings[0], "web-0") {
		t.Fatalf("typo without an authorizer: %+v", r)
	}
	h.Access = podReaders{"admin@ns": true}
	h.DenyOn = map[Kind]bool{NoPods: true}
	if r := review(t, mux, ServicesPath, req); r.Allowed || r.Result == nil || r.Result.Code != 403 || !strings.Contains(r.Result.Message, "app=Web") {
		t.Fatalf("deny-on: %+v", r)
	}

	ours := slice("kubectl-slices")
	upd := admissionv1.AdmissionRequest{UID: "u2", Operation: admissionv1.Update, Namespace: "ns", Object: raw(t, labelled(ours, "touched", "yes")), OldObject: raw(t, ours),
		Options:  raw(t, metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, FieldManager: "kubectl-label"}),
		UserInfo: authenticationv1.UserInfo{Username: "admin"}}
	if r := review(t, mux, EndpointSlicesPath, upd); r.Allowed || !strings.Contains(r.Result.Message, "kubectl slices sync svc/web -n ns") {
		t.Fatalf("hand label: %+v", r)
	}
	upd.Options = raw(t, metav1.UpdateOptions{FieldManager: "kubectl-slices"})
	if r := review(t, mux, EndpointSlicesPath, upd); !r.Allowed {
		t.Fatalf("our own update: %+v", r)
	}
	del := admissionv1.AdmissionRequest{UID: "u3", Operation: admissionv1.Delete, Namespace: "ns", OldObject: raw(t, ours)}
	if r := review(t, mux, EndpointSlicesPath, del); !r.Allowed {
		t.Fatalf("delete: %+v", r)
	}
	if counts, _, _ := stats.Summary(); counts[ServicesPath] != 5 || counts[EndpointSlicesPath] != 3 {
		t.Fatalf("counts %v", counts)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ServicesPath, strings.NewReader("{}")))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("empty review: %d", rec.Code)
	}
}

func writePair(t *testing.T, dir, host string, at time.Time) (certFile, keyFile string, leafDER []byte) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for f, b := range map[string][]byte{certFile: certPEM, keyFile: keyPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair.Certificate[0]
}

func TestCertReloader(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	certFile, keyFile, first := writePair(t, dir, "one.example", now.Add(-time.Hour))
	r, err := NewCertReloader(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	served := func() []byte {
		c, err := r.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Certificate[0]
	}
	if !bytes.Equal(served(), first) {
		t.Fatal("not the first certificate")
	}
	_, _, second := writePair(t, dir, "two.example", now)
	if !bytes.Equal(served(), second) {
		t.Fatal("the rotated certificate is not served")
	}
	// A half-written rotation keeps the last good pair.
	if err := os.WriteFile(keyFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served(), second) {
		t.Fatal("a broken pair replaced the served certificate")
	}
	if _, err := NewCertReloader(certFile, keyFile); err == nil {
		t.Fatal("a broken pair must not start")
	}
}

// The server takes TLS 1.3, and TLS 1.2 only with ECDHE and an AEAD
// cipher: a client offering only CBC-SHA1 suites (or RSA key exchange) is
// refused at the handshake.
func TestServeCipherSuites(t *testing.T) {
	certFile, keyFile, _ := writePair(t, t.TempDir(), "127.0.0.1", time.Now())
	certs, err := NewCertReloader(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, http.NotFoundHandler(), TLS{Certs: certs}) }()
	defer func() { cancel(); <-done }()
	dial := func(version uint16, suites ...uint16) error {
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true,
			MinVersion: version, MaxVersion: version, CipherSuites: suites})
		if err == nil {
			conn.Close()
		}
		return err
	}
	for _, c := range []struct {
		name    string
		version uint16
		suites  []uint16
		ok      bool
	}{
		{"1.2 CBC-SHA1 only", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, tls.TLS_RSA_WITH_AES_128_CBC_SHA}, false},
		{"1.2 RSA key exchange with GCM", tls.VersionTLS12, []uint16{tls.TLS_RSA_WITH_AES_128_GCM_SHA256}, false},
		{"1.2 ECDHE-RSA-AES128-GCM", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}, true},
		{"1.2 ECDHE-RSA-CHACHA20", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}, true},
		{"1.3", tls.VersionTLS13, nil, true},
		{"1.1", tls.VersionTLS11, nil, false},
	} {
		err := dial(c.version, c.suites...)
		if (err == nil) != c.ok {
			t.Errorf("%s: handshake error %v, want success %v", c.name, err, c.ok)
		}
	}
}
