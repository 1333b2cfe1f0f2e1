package webhook

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/serve"
)

// Idle connections are closed after the idle timeout (a kept-alive one
// after a request, and one that never completes its handshake after the
// header timeout), and no more than MaxConns are served at once: the
// others are closed at once. The counting listener lies under the bound,
// so it also counts, for a moment, the one connection being closed at it.
func TestServeLimits(t *testing.T) {
	// Read and write timeouts past the clients' patience: Go falls back
	// on them for the idle and handshake timeouts when those are unset.
	l := serve.Limits{ReadHeaderTimeout: time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
		IdleTimeout: time.Second, MaxConns: 10}
	counted := &testutil.CountingListener{}
	addr := startOn(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }), "", l,
		func(ln net.Listener) net.Listener { counted.Listener = ln; return counted })
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n+2)
	start := time.Now()
	// One deadline for every client: without the timeouts, the test fails
	// at it rather than wave after wave of connections.
	deadline := start.Add(20 * time.Second)
	dialer := &net.Dialer{Deadline: deadline}
	// A connection that never says hello is closed too.
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := dialer.Dial("tcp", addr)
		if err != nil {
			errs <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(deadline)
		if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
			errs <- fmt.Errorf("a silent connection: %v, want EOF", err)
		}
	}()
	// An HTTP/2 connection, as the API server's, with no stream open:
	// closed after its GOAWAY.
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
		if err != nil {
			errs <- err
			return
		}
		defer conn.Close()
		if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
			errs <- fmt.Errorf("negotiated %q, want h2", p)
			return
		}
		// The client preface and an empty SETTINGS frame.
		fmt.Fprint(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
		_ = conn.SetDeadline(deadline)
		if _, err := io.Copy(io.Discard, conn); err != nil {
			errs <- fmt.Errorf("an idle HTTP/2 connection: %v, want EOF", err)
		}
	}()
	// The others, past the bound, are closed at once.
	time.Sleep(200 * time.Millisecond)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
			if testutil.Refused(err) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if testutil.Refused(err) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
			// Idle until the server closes the connection.
			_ = conn.SetDeadline(deadline)
			_, err = br.ReadByte()
			if !testutil.Refused(err) {
				errs <- fmt.Errorf("an idle HTTP/1.1 connection: %v, want EOF", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	took := time.Since(start)
	most := counted.Most.Load()
	t.Logf("%d idle connections closed in %v, at most %d served at once", n+2, took.Round(time.Millisecond), most)
	if most > int64(l.MaxConns)+1 || took > 10*time.Second {
		t.Fatalf("at most %d served at once (bound %d), all closed in %v", most, l.MaxConns, took)
	}
}
