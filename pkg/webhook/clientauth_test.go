package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/serve"
)

// countingReaders is podReaders that counts the questions asked.
type countingReaders struct {
	podReaders
	asked atomic.Int64
}

func (c *countingReaders) MayListPods(ctx context.Context, u authenticationv1.UserInfo, ns string) bool {
	c.asked.Add(1)
	return c.podReaders.MayListPods(ctx, u, ns)
}

// A review from a caller whose certificate was not verified may claim any
// user: claiming system:masters, it learns no Pod name or label and makes
// the webhook ask nothing, however many it sends; the same review from the
// verified API server names the Pods to a Pod reader.
func TestForgedReview(t *testing.T) {
	access := &countingReaders{podReaders: podReaders{"admin@ns": true}}
	h := &Handler{Plan: reconcile.DefaultOptions(), Access: access}
	h.SetSource(fixedSource{pods: []*corev1.Pod{pod("web-0", map[string]string{"app": "web", "tier": "secret-tier"}, "10.1.0.1", "", httpPort)}})
	mux := h.Mux()
	typo := svc(map[string]string{"app": "Web", "tier": "secret-tier"}, sport("http", 80, intstr.FromString("http")))
	req := admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create, Namespace: "ns", Object: raw(t, typo),
		UserInfo: authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}}
	unverified := []*tls.ConnectionState{nil, {}, {PeerCertificates: []*x509.Certificate{{}}}}
	for i := range 150 {
		r := post(t, mux, ServicesPath, req, unverified[i%len(unverified)])
		if len(r.Warnings) != 1 || strings.Contains(r.Warnings[0], "web-0") || strings.Contains(r.Warnings[0], "app=web") ||
			!strings.Contains(r.Warnings[0], "details hidden") {
			t.Fatalf("forged review %d: %+v", i, r)
		}
	}
	if n := access.asked.Load(); n != 0 {
		t.Fatalf("150 forged reviews asked the authorizer %d times", n)
	}
	if r := review(t, mux, ServicesPath, req); len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "nearest miss: pod web-0 has app=web") {
		t.Fatalf("the verified API server's review: %+v", r)
	}
}

// pki is a CA and what it signs, written as PEM files.
type pki struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T, name string) pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return pki{cert, key}
}

func (ca pki) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// client returns a client certificate for cn signed by ca.
func (ca pki) client(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// startServer serves h on loopback with a fresh serving pair, client CAs
// from caFile when set, and limits l; it stops with the test.
func startServer(t *testing.T, h http.Handler, caFile string, l serve.Limits) string {
	t.Helper()
	return startOn(t, h, caFile, l, func(ln net.Listener) net.Listener { return ln })
}

// startOn is startServer on the listener wrap makes of its own.
func startOn(t *testing.T, h http.Handler, caFile string, l serve.Limits, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	certFile, keyFile, _ := writePair(t, t.TempDir(), "127.0.0.1", time.Now())
	certs, err := NewCertReloader(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	var cas *ClientCAs
	if caFile != "" {
		if cas, err = NewClientCAs(caFile); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveWith(ctx, wrap(ln), h, TLS{Certs: certs, ClientCAs: cas}, l) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// With --client-ca-file, a caller without a certificate, or with one that
// another CA signed, is refused at the TLS handshake; one signed by the
// file's CA is served, over HTTP/2 as the API server speaks it, and its
// requests are marked verified. A rotated CA file is read on the next
// handshake.
func TestServeClientCA(t *testing.T) {
	dir := t.TempDir()
	apiCA, other := newCA(t, "webhook-client-ca"), newCA(t, "someone-else")
	caFile := filepath.Join(dir, "client-ca.crt")
	if err := os.WriteFile(caFile, apiCA.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClientCAs(filepath.Join(dir, "none")); err == nil {
		t.Fatal("a missing client CA file must not start")
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s verified=%v", r.Proto, callerVerified(withCaller(r.Context(), r)))
	})
	addr := startServer(t, h, caFile, Limits)
	get := func(certs ...tls.Certificate) (string, error) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: certs}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get(apiCA.client(t, "kube-apiserver")); err != nil || got != "HTTP/2.0 verified=true" {
		t.Fatalf("the API server's certificate: %q, %v", got, err)
	}
	if got, err := get(); err == nil {
		t.Fatalf("no client certificate was served: %q", got)
	}
	if got, err := get(other.client(t, "kube-apiserver")); err == nil {
		t.Fatalf("a certificate of another CA was served: %q", got)
	}
	time.Sleep(10 * time.Millisecond) // a distinct modification time
	if err := os.WriteFile(caFile, other.pem(), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := get(other.client(t, "kube-apiserver")); err != nil || got != "HTTP/2.0 verified=true" {
		t.Fatalf("after rotating the CA file: %q, %v", got, err)
	}
	if _, err := get(apiCA.client(t, "kube-apiserver")); err == nil {
		t.Fatal("the replaced CA still admits")
	}
	// Without client CAs nothing is asked and nothing is verified.
	plain := startServer(t, h, "", Limits)
	addr = plain
	if got, err := get(other.client(t, "anyone")); err != nil || got != "HTTP/2.0 verified=false" {
		t.Fatalf("without --client-ca-file: %q, %v", got, err)
	}
}
