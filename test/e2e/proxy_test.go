package e2e

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// interceptor sees every request before the API server does; it returns
// true when it has answered the request itself.
type interceptor func(w http.ResponseWriter, r *http.Request) bool

// apiProxy puts a reverse proxy on loopback in front of cp's API
// server, so a test can stage a race or a failure on a real server, and
// returns a kubeconfig that reaches cp through it as the admin.
func apiProxy(t *testing.T, cp *controlplane.ControlPlane, hook interceptor) string {
	t.Helper()
	target, err := url.Parse(cp.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // loopback, self-signed
	// TLS, since clients send no credentials over plain HTTP.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hook != nil && hook(w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: admin\n  user: {token: %q}\ncontexts:\n- name: proxy\n  context: {cluster: proxy, user: admin}\ncurrent-context: proxy\n",
		srv.URL, cp.AdminConfig.BearerToken)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
