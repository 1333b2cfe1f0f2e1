package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/cert"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// throttlingServer grants every access review and answers every other
// request 429 without Retry-After, as an overloaded API server: client-go's
// watch-list retry then sleeps out its backoff (Reflector.watchList).
func throttlingServer(t *testing.T) (url string, watches *atomic.Int32) {
	t.Helper()
	watches = new(atomic.Int32)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/selfsubjectaccessreviews") {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","status":{"allowed":true}}`))
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			watches.Add(1)
		}
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"TooManyRequests","code":429,"message":"slow down"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, watches
}

// After an API server overload the informers sleep out their watch-list
// backoff; stopping either long-running command must not wait for it.
func TestStopDoesNotWaitForInformerBackoff(t *testing.T) {
	url, watches := throttlingServer(t)
	t.Setenv("KUBECONFIG", writeKubeconfig(t, url, "shop"))
	dir := t.TempDir()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	_ = os.WriteFile(crt, certPEM, 0o600)
	_ = os.WriteFile(key, keyPEM, 0o600)
	for _, args := range [][]string{
		{"sync", "--all", "-A", "--watch", "--summary-interval=0"},
		{"webhook", "--webhook-addr", "127.0.0.1:0", "--tls-cert-file", crt, "--tls-private-key-file", key},
	} {
		t.Run(args[0], func(t *testing.T) {
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			root := NewRootCommand(streams)
			root.SetArgs(args)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			start := watches.Load()
			var sent time.Time
			go func() {
				// Let the backoff grow past a few seconds: 0.8-1.6 s,
				// 1.6-3.2 s, 3.2-6.4 s ...
				time.Sleep(5 * time.Second)
				sent = time.Now()
				cancel(&exit.InterruptedError{Signal: syscall.SIGTERM})
			}()
			_ = exit.InterruptWins(ctx, root.ExecuteContext(ctx))
			took := time.Since(sent)
			if watches.Load()-start == 0 {
				t.Fatal("no watch was attempted")
			}
			if took > 2*time.Second {
				t.Errorf("%s returned %v after the signal: it waited on the informers' backoff", args[0], took.Round(time.Millisecond))
			}
		})
	}
}
