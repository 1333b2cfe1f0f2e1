package daemon

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/serve"
)

// The health server closes kept-alive connections left idle, and one that
// never sends a request, and serves a bounded number at once, closing the
// others at once. The counting listener lies under the bound, so it also
// counts, for a moment, the one connection being closed at the bound.
func TestHealthServerLimits(t *testing.T) {
	saved := healthLimits
	defer func() { healthLimits = saved }()
	// Read and write timeouts past the clients' patience: Go falls back
	// on them for the idle timeout when it is unset.
	healthLimits = serve.Limits{ReadHeaderTimeout: time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
		IdleTimeout: time.Second, MaxConns: 5}
	ln, err := listenHealth("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &testutil.CountingListener{Listener: ln}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serveHealth(ctx, counted, prometheus.NewRegistry(), probes{})

	const n = 20
	errs := make(chan error, n+1)
	var wg sync.WaitGroup
	start := time.Now()
	// One deadline for every client: without the timeouts, the test fails
	// at it rather than wave after wave of connections.
	deadline := start.Add(20 * time.Second)
	for i := range n + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := (&net.Dialer{Deadline: deadline}).Dial("tcp", ln.Addr().String())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(deadline)
			br := bufio.NewReader(conn)
			if i < n { // the last one never asks
				fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, err := http.ReadResponse(br, nil)
				if testutil.Refused(err) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
			}
			if _, err := br.ReadByte(); !testutil.Refused(err) {
				errs <- fmt.Errorf("idle connection: %v, want closed by the server", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	took := time.Since(start)
	t.Logf("%d idle connections closed in %v, at most %d served at once", n+1, took.Round(time.Millisecond), counted.Most.Load())
	if m := counted.Most.Load(); m > int64(healthLimits.MaxConns)+1 || took > 20*time.Second {
		t.Fatalf("at most %d served at once (bound %d), all closed in %v", m, healthLimits.MaxConns, took)
	}
}
