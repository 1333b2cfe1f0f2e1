package e2e

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// bigService makes a Service of n Pods in a fresh namespace.
func bigService(t *testing.T, n int) string {
	t.Helper()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "big"))
	specs := make([]controlplane.PodSpec, 0, n)
	for i := range n {
		specs = append(specs, podSpec("big", i, 42))
	}
	mustPods(t, shared, ns, specs...)
	return ns
}

func sliceNames(t *testing.T, ns string) []string {
	var out []string
	for _, s := range listSlices(t, shared, ns, "big", oursLabel) {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// Ctrl-C during a large first sync: every slice in the cluster is reported
// (-o name lists it, the interrupted line counts it), the run says it was
// interrupted, and exits 130.
func TestSyncInterruptReportsEveryWrite(t *testing.T) {
	ns := bigService(t, 3000)
	w := startWatch(t, shared, shared.Kubeconfig, "sync", "svc/big", "-n", ns, "--max-endpoints-per-slice=2",
		"-o", "name")
	within(t, "first slices", 30*time.Second, func() bool { return oursCount(t, shared, ns, "big") >= 100 })
	code, took := w.stop(t, syscall.SIGINT)
	got := sliceNames(t, ns)
	out := w.output()
	if len(got) >= 1500 {
		t.Fatalf("all %d slices written before the signal: the test proves nothing", len(got))
	}
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, tail(out))
	}
	var reported []string
	for _, l := range strings.Split(out, "\n") {
		if name, ok := strings.CutSuffix(l, " created"); ok {
			reported = append(reported, strings.TrimPrefix(name, "endpointslice.discovery.k8s.io/"))
		}
	}
	sort.Strings(reported)
	m := regexp.MustCompile(`service \S+/big: interrupted after (\d+) created, 0 updated, 0 deleted`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no interrupted line:\n%s", tail(out))
	}
	counted, _ := strconv.Atoi(m[1])
	if strings.Contains(out, "synced") {
		t.Errorf("a cut run is reported as synced:\n%s", tail(out))
	}
	t.Logf("SIGINT: exit %d after %v; %d slices in the cluster, %d counted, %d listed by -o name", code, took.Round(time.Millisecond), len(got), counted, len(reported))
	if counted != len(got) || strings.Join(reported, ",") != strings.Join(got, ",") {
		t.Fatalf("%d slices in the cluster, %d counted, %d listed", len(got), counted, len(reported))
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// SIGTERM in the middle of a 2,500-slice first sync of --watch: no new write
// starts, the writes in flight finish, the process exits 0 within 5 s
// having reported each write, and the next run converges.
func TestWatchSigtermStopsWithinGrace(t *testing.T) {
	ns := bigService(t, 2500)
	w := startWatch(t, shared, shared.Kubeconfig, "sync", "svc/big", "-n", ns, "--watch",
		"--max-endpoints-per-slice=1", "--summary-interval=0")
	within(t, "first slices", 30*time.Second, func() bool { return oursCount(t, shared, ns, "big") >= 50 })
	atSignal := oursCount(t, shared, ns, "big")
	code, took := w.stop(t, syscall.SIGTERM)
	got := len(sliceNames(t, ns))
	out := w.output()
	t.Logf("SIGTERM mid-sync: exit %d after %v; %d slices at the signal, %d of 2500 at the exit", code, took.Round(time.Millisecond), atSignal, got)
	if atSignal >= 2500 {
		t.Fatalf("the sync had finished before the signal: the test proves nothing")
	}
	if code != 0 || took > 5*time.Second {
		t.Fatalf("exit %d after %v, want 0 within 5 s\n%s", code, took, tail(out))
	}
	m := regexp.MustCompile(`summary: \d+ syncs, \d+ writes \((\d+) created`).FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("no summary:\n%s", tail(out))
	}
	if created, _ := strconv.Atoi(m[len(m)-1][1]); created != got {
		t.Fatalf("summary reports %d created, %d slices in the cluster", created, got)
	}
	slices(t, "sync", "svc/big", "-n", ns, "--max-endpoints-per-slice=1").mustCode(t, 0)
	if n := len(endpointAddresses(listSlices(t, shared, ns, "big", oursLabel))); n != 2500 {
		t.Fatalf("after a second run %d endpoints, want 2500", n)
	}
}

// SIGTERM while the caches fill (the API server never answers) exits 0:
// a signal is how the loop is stopped.
func TestWatchSigtermBeforeCachesFill(t *testing.T) {
	kubeconfig, accepted := stalledServer(t)
	w := startWatch(t, shared, kubeconfig, "sync", "--all", "--watch")
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("never connected")
	}
	time.Sleep(300 * time.Millisecond)
	code, took := w.stop(t, syscall.SIGTERM)
	t.Logf("SIGTERM before the caches filled: exit %d after %v; output %q", code, took.Round(time.Millisecond), w.output())
	if code != 0 || took > 5*time.Second {
		t.Fatalf("exit %d after %v, want 0 within 5 s", code, took)
	}
}

// A hand edit of one of our slices is put back, and said so: the slice was
// restored, not a Pod changed.
func TestWatchSaysHandEditRestored(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 44), podSpec("web", 1, 44))
	w := startWatch(t, shared, shared.Kubeconfig, "sync", "svc/web", "-n", ns, "--watch", "--summary-interval=0")
	within(t, "first sync", 20*time.Second, func() bool { return oursCount(t, shared, ns, "web") == 1 })
	w.waitLine(t, "created", 10*time.Second)
	name := listSlices(t, shared, ns, "web", oursLabel)[0].Name
	kubectl(t, shared, "patch", "endpointslice", name, "-n", ns, "--type=json",
		`-p=[{"op":"replace","path":"/endpoints/0/addresses/0","value":"10.99.99.99"}]`).mustCode(t, 0)
	w.waitLine(t, "endpointslice "+name+" restored", 10*time.Second)
	if got := endpointAddresses(listSlices(t, shared, ns, "web", oursLabel)); strings.Contains(strings.Join(got, ","), "10.99.99.99") {
		t.Fatalf("the edit stayed: %v", got)
	}
	if strings.Contains(w.output(), "changed") {
		t.Errorf("the repair is reported as a Pod change:\n%s", w.output())
	}
	t.Logf("output:\n%s", w.output())
}
