package cluster

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// The client asks for protobuf through the wrapped transport, and the
// config it was made from is left as it was.
func TestNewClient(t *testing.T) {
	var accept, agent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept, agent = r.Header.Get("Accept"), r.Header.Get("User-Agent")
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c := Tune(&rest.Config{Host: srv.URL}, 5, 10, false, "kubectl-slices/test")
	if c.QPS != 5 || c.Burst != 10 || c.RateLimiter != nil {
		t.Errorf("qps %v burst %d limiter %v: want client-go's bucket of the limits given", c.QPS, c.Burst, c.RateLimiter)
	}
	wrapped := 0
	client, err := NewClient(c, func(rt http.RoundTripper) http.RoundTripper { wrapped++; return rt })
	if err != nil {
		t.Fatal(err)
	}
	_, _ = client.CoreV1().Services("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if !strings.HasPrefix(accept, "application/vnd.kubernetes.protobuf") || agent != "kubectl-slices/test" || wrapped == 0 {
		t.Errorf("Accept %q, User-Agent %q, wrapped %d", accept, agent, wrapped)
	}
	if c.ContentType != "" || c.AcceptContentTypes != "" {
		t.Errorf("the config was changed: %q %q", c.ContentType, c.AcceptContentTypes)
	}
}

// -v N turns client-go's logs on up to level N; without -v none is on.
func TestSetupLogging(t *testing.T) {
	defer SetupLogging(0, nil)
	SetupLogging(0, &bytes.Buffer{})
	if klog.V(1).Enabled() {
		t.Errorf("-v 0: level 1 on")
	}
	SetupLogging(2, &bytes.Buffer{})
	if !klog.V(2).Enabled() || klog.V(3).Enabled() {
		t.Errorf("-v 2: level 2 on %v, level 3 on %v", klog.V(2).Enabled(), klog.V(3).Enabled())
	}
}

// The default limits hold until a response shows API Priority and
// Fairness; from then on no request waits. A server without it keeps them.
func TestLimitsLiftedByFairness(t *testing.T) {
	for _, fair := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fair {
				w.Header().Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, "uid-1")
			}
			http.NotFound(w, r)
		}))
		c := Tune(&rest.Config{Host: srv.URL}, 1, 1, true, "kubectl-slices/test")
		client, err := NewClient(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The one token of the bucket pays for this request.
		_, _ = client.CoreV1().Services("ns").Get(context.Background(), "web", metav1.GetOptions{})
		srv.Close()
		free := c.RateLimiter.TryAccept() && c.RateLimiter.TryAccept()
		if free != fair {
			t.Errorf("server with fairness %v: further requests free %v", fair, free)
		}
	}
}
