package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// forgedReview is an AdmissionReview of a Service create in ns, as anyone
// who reaches the webhook's port can write it, claiming user and groups.
func forgedReview(t testing.TB, ns, name string, sel map[string]string, target string, user string, groups ...string) []byte {
	t.Helper()
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{controlplane.ServicePort("http", 80, intstr.FromString(target))}}}
	obj, _ := json.Marshal(svc)
	b, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("forged-" + user), Operation: admissionv1.Create, Namespace: ns, Name: name,
			Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "Service"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "services"},
			UserInfo: authenticationv1.UserInfo{Username: user, Groups: groups}, Object: runtime.RawExtension{Raw: obj}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postReview posts a review to the webhook at addr with client; it returns
// the warnings of the answer.
func postReview(client *http.Client, addr string, review []byte) ([]string, error) {
	resp, err := client.Post("https://"+addr+"/validate/services", "application/json", bytes.NewReader(review))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
		return nil, fmt.Errorf("status %d, not an AdmissionReview: %v", resp.StatusCode, err)
	}
	return out.Response.Warnings, nil
}

// reviewClient is an HTTPS client of the webhook presenting certs (none:
// no client certificate); the serving certificate is not checked.
func reviewClient(certs ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 16,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: certs}}}
}

// accessReviews is the API server's count of SubjectAccessReview requests
// (apiserver_request_total), whoever made them.
func accessReviews(t testing.TB, cp *controlplane.ControlPlane) int {
	t.Helper()
	raw, err := cp.Admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `resource="subjectaccessreviews"`) {
			v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			n += int(v)
		}
	}
	return n
}

// flood posts n reviews, 10 at a time, the i-th from review(i); it returns
// every warning answered and how long the flood took.
func flood(t testing.TB, client *http.Client, addr string, n int, review func(i int) []byte) ([]string, time.Duration) {
	t.Helper()
	start := time.Now()
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			w, err := postReview(client, addr, review(i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("review %d: %v", i, err)
			}
			all = append(all, w...)
		}()
	}
	wg.Wait()
	return all, time.Since(start)
}

// Without --client-ca-file the webhook cannot tell the API server from
// anyone who reaches its port: a forged review claiming system:masters
// learns that the selector matches nothing and how many Pods lack a port,
// but no Pod name or label, and 150 of them make the webhook ask the API
// server nothing.
func TestWebhookUnauthenticatedCaller(t *testing.T) {
	ns := newNamespace(t, shared)
	secret := podSpec("web", 0, 8)
	secret.Labels = map[string]string{"app": "web", "tier": "payments-secret"}
	mustPods(t, shared, ns, secret, podSpec("web", 1, 8))
	dir := t.TempDir()
	writeServingCert(t, dir)
	addr := freeAddr(t)
	t.Setenv("KUBECTL_SLICES_COUNT_REQUESTS", "1")
	w := startWatch(t, shared, shared.Kubeconfig, "webhook", "--webhook-addr", addr, "--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key")
	w.waitLine(t, "caches filled", 30*time.Second)
	if !strings.Contains(w.output(), "no --client-ca-file: callers are not authenticated") {
		t.Errorf("the webhook does not say its callers are not authenticated:\n%s", w.output())
	}

	client := reviewClient()
	typo := forgedReview(t, ns, "typo", map[string]string{"app": "Web", "tier": "payments-secret"}, "http", "admin", "system:masters")
	noPort := forgedReview(t, ns, "noport", map[string]string{"app": "web"}, "metrics", "admin", "system:masters")
	for name, want := range map[string]string{
		"typo":   "selector app=Web,tier=payments-secret matches no Pods in namespace " + ns + "; 1 Pod differs by one label (details hidden",
		"noport": `targetPort "metrics" of port http is not declared by 2 of 2 Pods: they receive no traffic on it (details hidden`,
	} {
		review := typo
		if name == "noport" {
			review = noPort
		}
		warnings, err := postReview(client, addr, review)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(warnings, "\n")
		t.Logf("forged %s review, claiming system:masters: %s", name, got)
		if !strings.Contains(got, want) || strings.Contains(got, "web-0") || strings.Contains(got, "web-1") || strings.Contains(got, "app=web") {
			t.Errorf("forged %s review: %q, want %q and no Pod name or label", name, got, want)
		}
	}

	before := accessReviews(t, shared)
	warnings, took := flood(t, client, addr, 150, func(i int) []byte {
		return forgedReview(t, ns, "typo", map[string]string{"app": "Web"}, "http", fmt.Sprint("user-", i), "system:masters")
	})
	made := accessReviews(t, shared) - before
	t.Logf("150 forged reviews in %v: %d access reviews on the API server", took.Round(time.Millisecond), made)
	if made > 0 {
		t.Errorf("150 forged reviews made %d SubjectAccessReviews, want none", made)
	}
	for _, s := range warnings {
		if strings.Contains(s, "web-0") || strings.Contains(s, "nearest miss") {
			t.Fatalf("a forged review learned a Pod: %s", s)
		}
	}
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("webhook exit code %d:\n%s", code, w.output())
	}
	if !strings.Contains(w.output(), "(0 of them access reviews)") {
		t.Errorf("the webhook's summary counts access reviews:\n%s", w.output())
	}
}

// With --client-ca-file, the API server (presenting the certificate its
// AdmissionConfiguration names) is served, and its reviews are trusted:
// a Pod reader's typo names the Pod. A caller without that certificate is
// refused at the TLS handshake. And however many users the verified
// caller's reviews name, access reviews stay at about one a second.
func TestWebhookClientCert(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := webhookCluster(t, ctx)
	ns := newNamespace(t, cp)
	mustPods(t, cp, ns, podSpec("web", 0, 8), podSpec("web", 1, 8))
	dir := t.TempDir()
	ca := writeServingCert(t, dir)
	addr := freeAddr(t)
	t.Setenv("KUBECTL_SLICES_COUNT_REQUESTS", "1")
	w := startWatch(t, cp, cp.Kubeconfig, append([]string{"webhook", "--webhook-addr", addr, "--tls-cert-file", dir + "/tls.crt", "--tls-private-key-file", dir + "/tls.key"},
		clientCAFlag(cp)...)...)
	w.waitLine(t, "caches filled", 30*time.Second)
	w.waitLine(t, "callers must present a client certificate", time.Second)
	registerWebhook(t, cp, addr, ca)
	within(t, "the API server's call to be served and trusted", 20*time.Second, func() bool {
		r := applyYAML(t, cp, serviceYAML(ns, "typo", "app: Web", "http"), "--dry-run=server")
		return strings.Contains(r.Stderr, "nearest miss: pod web-0 has app=web")
	})

	review := forgedReview(t, ns, "typo", map[string]string{"app": "Web"}, "http", "admin", "system:masters")
	if _, err := postReview(reviewClient(), addr, review); err == nil {
		t.Error("a caller without a client certificate was served")
	}
	w.waitLine(t, "TLS handshake error from 127.0.0.1", 5*time.Second)
	if !strings.Contains(w.output(), "tls: client didn't provide a certificate") {
		t.Errorf("the refusal was not at the TLS handshake:\n%s", w.output())
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("kube-apiserver", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	selfSigned, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postReview(reviewClient(selfSigned), addr, review); err == nil {
		t.Error("a caller with a certificate of another CA was served")
	}

	// The API server's own certificate, presented by a caller that names
	// 150 users: reviews at the limiter's rate, the rest hidden.
	apiserver, err := tls.LoadX509KeyPair(cp.WebhookClient.CertFile, cp.WebhookClient.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	before := accessReviews(t, cp)
	_, took := flood(t, reviewClient(apiserver), addr, 150, func(i int) []byte {
		return forgedReview(t, ns, "typo", map[string]string{"app": "Web"}, "http", fmt.Sprint("user-", i), "system:masters")
	})
	made := accessReviews(t, cp) - before
	t.Logf("150 reviews naming 150 users in %v: %d access reviews on the API server", took.Round(time.Millisecond), made)
	if limit := 3 + int(took.Seconds()+1); made > limit {
		t.Errorf("150 reviews made %d SubjectAccessReviews in %v, want at most %d (a burst of 3, then 1/s)", made, took, limit)
	}
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("webhook exit code %d:\n%s", code, w.output())
	}
	if !strings.Contains(w.output(), "access reviews skipped by the rate limit") {
		t.Errorf("the summary does not count the reviews the rate limit skipped:\n%s", w.output())
	}
	t.Log(w.output())
}
