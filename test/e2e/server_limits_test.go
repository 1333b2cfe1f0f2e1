package e2e

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// procStatus reads a field of /proc/PID/status in KiB (VmRSS, VmHWM).
func procStatus(pid int, field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	return 0
}

// openFiles is the number of the process's file descriptors.
func openFiles(pid int) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(fds)
}

// idlers holds connections that made one request each and then sit idle
// until the server closes them.
type idlers struct {
	open, most, closed atomic.Int64
	// refused are the connections the server closed before answering,
	// slowest the longest one took from the dial to its end.
	refused, slowest atomic.Int64
	mu               sync.Mutex
	errs             []error
	last             time.Time
}

func (c *idlers) fail(err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}

// hold dials with dial, sends req, reads the answer and waits for the
// server to close the connection, for up to limit.
func (c *idlers) hold(dial func() (net.Conn, error), req string, limit time.Duration) {
	start := time.Now()
	conn, err := dial()
	if closedEarly(err) {
		c.refusedAfter(start)
		return
	}
	if err != nil {
		c.fail(err)
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(limit))
	if _, err := io.WriteString(conn, req); err != nil {
		c.fail(err)
		return
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if closedEarly(err) {
		c.refusedAfter(start)
		return
	}
	if err != nil {
		c.fail(fmt.Errorf("request: %w", err))
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.most.Store(max(c.most.Load(), c.open.Add(1)))
	_, err = br.ReadByte() // idle: no request, until the server closes
	c.open.Add(-1)
	if err != io.EOF {
		c.fail(fmt.Errorf("idle connection: %v, want closed by the server", err))
		return
	}
	c.closed.Add(1)
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
}

// closedEarly says whether err is the server closing a connection before
// it answered: past its bounds on connections.
func closedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

func (c *idlers) refusedAfter(start time.Time) {
	c.refused.Add(1)
	took := int64(time.Since(start))
	for m := c.slowest.Load(); took > m && !c.slowest.CompareAndSwap(m, took); m = c.slowest.Load() {
	}
}

// getFrom asks the health server at addr for path from the loopback
// address src, within 1 s, under the 2 s timeout of deploy's probes.
func getFrom(src, addr, path string) (int, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// openIdleConnections opens n connections to each of the webhook and health
// servers, each sending one request and then held open until the server
// closes it or limit passes; wg is done when all are.
func openIdleConnections(wg *sync.WaitGroup, hook, health *idlers, hookAddr, healthAddr string, n int, limit time.Duration) {
	dialer := &net.Dialer{Timeout: limit}
	for range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			hook.hold(func() (net.Conn, error) {
				return tls.DialWithDialer(dialer, "tcp", hookAddr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
			}, "GET /validate/services HTTP/1.1\r\nHost: webhook\r\n\r\n", limit)
		}()
		go func() {
			defer wg.Done()
			health.hold(func() (net.Conn, error) { return dialer.Dial("tcp", healthAddr) }, "GET /healthz HTTP/1.1\r\nHost: health\r\n\r\n", limit)
		}()
	}
}

// The webhook and the health server close idle connections and serve a
// bounded number at once, at most 32 from one address: of 1,000 TLS
// keep-alives to the webhook and 1,000 to the health server from one
// address, each idle after one request, at most 32 are open at a time and
// closed by the servers when idle, the others closed at once, while the
// process's memory grows by a bounded amount; during the flood /readyz
// answers another address (the kubelet's) at once, and afterwards both
// answer.
func TestServerIdleConnections(t *testing.T) {
	ns := newNamespace(t, shared)
	dir := t.TempDir()
	writeServingCert(t, dir)
	hookAddr, healthAddr := freeAddr(t), freeAddr(t)
	w := startWatch(t, shared, shared.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--summary-interval=0", "--health-addr", healthAddr,
		"--webhook-addr", hookAddr, "--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key")
	w.waitLine(t, "webhook: caches filled", 30*time.Second)
	pid := w.cmd.Process.Pid
	rss0, fds0 := procStatus(pid, "VmRSS"), openFiles(pid)

	const n = 1000
	const limit = 3 * time.Minute
	var hook, health idlers
	var wg sync.WaitGroup
	start := time.Now()
	openIdleConnections(&wg, &hook, &health, hookAddr, healthAddr, n, limit)
	// The process's open files while the connections come and go.
	stop := make(chan struct{})
	var maxFDs atomic.Int64
	go func() {
		for {
			maxFDs.Store(max(maxFDs.Load(), int64(openFiles(pid))))
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	// Another address, as the kubelet's node address, while the flood
	// holds its share of both servers.
	time.Sleep(2 * time.Second)
	if code, err := getFrom("127.0.0.2", healthAddr, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz from 127.0.0.2 during the flood (%d held): %d %v", health.open.Load(), code, err)
	}
	wg.Wait()
	close(stop)
	took := time.Since(start)
	hwm := procStatus(pid, "VmHWM")
	for _, c := range []struct {
		name string
		*idlers
	}{{"webhook", &hook}, {"health", &health}} {
		t.Logf("%s: %d of %d idle connections closed by the server, at most %d open at once, the last after %v; "+
			"%d closed at once, the slowest in %v", c.name, c.closed.Load(), n, c.most.Load(), c.last.Sub(start).Round(time.Second),
			c.refused.Load(), time.Duration(c.slowest.Load()).Round(time.Millisecond))
	}
	t.Logf("process: %d open files before, at most %d during; RSS %d MiB before, peak %d MiB; all done in %v",
		fds0, maxFDs.Load(), rss0/1024, hwm/1024, took.Round(time.Second))
	for _, c := range []*idlers{&hook, &health} {
		for i, err := range c.errs {
			if i < 5 {
				t.Error(err)
			}
		}
	}
	for _, c := range []*idlers{&hook, &health} {
		if c.closed.Load()+c.refused.Load() != n || c.closed.Load() < 32 || time.Duration(c.slowest.Load()) > 5*time.Second {
			t.Fatalf("closed by the servers: webhook %d+%d, health %d+%d of %d each, at least 32 served; "+
				"closed at once in at most %v and %v, want 5 s",
				hook.closed.Load(), hook.refused.Load(), health.closed.Load(), health.refused.Load(), n,
				time.Duration(hook.slowest.Load()), time.Duration(health.slowest.Load()))
		}
	}
	// The process's open files are the servers' truth; the clients' counts
	// also hold connections the server closed and the client has not yet
	// read the end of, while the next ones are served.
	if maxFDs.Load() > int64(fds0+32+32+16) || hook.most.Load() > 32+16 || health.most.Load() > 32+16 {
		t.Errorf("connections served at once: open files %d (from %d, bounds 32+32 from one address), webhook %d, health %d",
			maxFDs.Load(), fds0, hook.most.Load(), health.most.Load())
	}
	if grew := (hwm - rss0) / 1024; grew > 128 {
		t.Errorf("the process grew by %d MiB holding the connections, want at most 128", grew)
	}
	// Both servers answer at once afterwards.
	r := replica{addr: healthAddr}
	if code, body := r.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the flood: %d %s", code, body)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", hookAddr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Errorf("the webhook after the flood: %v", err)
	} else {
		conn.Close()
	}
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, w.output())
	}
}
