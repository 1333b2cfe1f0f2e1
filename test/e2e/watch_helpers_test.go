package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// watcher is a running `kubectl slices sync --watch`.
type watcher struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	err   error
}

// startWatch runs `kubectl slices ARGS...` in the background; the test's
// cleanup kills it if the test did not stop it.
func startWatch(t testing.TB, cp *controlplane.ControlPlane, kubeconfig string, args ...string) *watcher {
	t.Helper()
	cmd := exec.Command(cp.Kubectl(), append([]string{"slices"}, args...)...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"PATH="+pluginDir+string(os.PathListSeparator)+cp.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	w := &watcher{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, pr) // a line too long for the scanner must not block the process
	}()
	go func() {
		w.err = cmd.Wait()
		pw.Close()
		// done means every line is in w.lines: Wait returns once the pipe
		// is copied, which may be before the scanner stores the last line.
		<-scanned
		close(w.done)
	}()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() {
			t.Logf("watch output:\n%s", w.output())
		}
	})
	return w
}

func (w *watcher) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// waitLine waits for an output line containing s.
func (w *watcher) waitLine(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(w.output(), s) {
			return
		}
		select {
		case <-w.done:
			t.Fatalf("watch exited (%v) before printing %q", w.err, s)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no line with %q after %v", s, timeout)
}

// stop sends sig and returns the exit code and how long the exit took.
func (w *watcher) stop(t testing.TB, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	_ = w.cmd.Process.Signal(sig)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		t.Fatal("watch did not exit within 15 s of the signal")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(w.err, &ee) {
		code = ee.ExitCode()
	}
	return code, time.Since(start)
}

// within polls cond until it holds and returns how long that took, failing
// the test after limit.
func within(t testing.TB, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if cond() {
			d := time.Since(start)
			t.Logf("%s: %v", what, d.Round(time.Millisecond))
			return d
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// endpointState renders our slices' endpoints as "address:ready:zone" lines,
// sorted, for comparison with the state a test expects.
func endpointState(t testing.TB, cp *controlplane.ControlPlane, ns, svc string) string {
	var out []string
	for _, s := range listSlices(t, cp, ns, svc, oursLabel) {
		for _, e := range s.Endpoints {
			out = append(out, fmt.Sprintf("%s:%v:%s", strings.Join(e.Addresses, ","), e.Conditions.Ready != nil && *e.Conditions.Ready, deref(e.Zone)))
		}
	}
	sortStrings(out)
	return strings.Join(out, " ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// oursCount counts our slices of a Service.
func oursCount(t testing.TB, cp *controlplane.ControlPlane, ns, svc string) int {
	return len(listSlices(t, cp, ns, svc, oursLabel))
}

var _ = discovery.LabelManagedBy
var _ = context.Background
