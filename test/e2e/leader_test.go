package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// Short lease times keep the test quick; the defaults are
// kube-controller-manager's 15 s / 10 s / 2 s.
const (
	testLease = 6 * time.Second
	testRenew = 3 * time.Second
	testRetry = 500 * time.Millisecond
)

// replica is one `sync --watch --leader-elect` process and its health port.
type replica struct {
	*watcher
	addr string
}

func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startReplica(t testing.TB, cp *controlplane.ControlPlane, kubeconfig, ns, app string) replica {
	addr := freeAddr(t)
	w := startWatch(t, cp, kubeconfig, "sync", "--watch", "-A", "-l", "app="+app, "--summary-interval=0",
		"--leader-elect", "--leader-elect-resource-namespace", ns,
		"--leader-elect-lease-duration", testLease.String(), "--leader-elect-renew-deadline", testRenew.String(),
		"--leader-elect-retry-period", testRetry.String(), "--health-addr", addr)
	return replica{w, addr}
}

// get returns a health endpoint's status code and body; 0 when unreachable.
func (r replica) get(path string) (int, string) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + r.addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metrics parses /metrics with Prometheus' own text parser.
func (r replica) metrics(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := r.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics on %s: %d %s", r.addr, code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text exposition: %v", err)
	}
	return mf
}

// counts polls a counter of /metrics (labels unfiltered) until it reads
// want, for at most 5 s, and returns what it read last. The loop counts a
// takeover or a hand-back once its writes are answered, a moment after a
// test can see their effect in the API.
func (r replica) counts(t testing.TB, name string, want float64) float64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := value(r.metrics(t), name, nil)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// value sums a family's samples whose labels include want (samples); -1
// when /metrics has no such family.
func value(mf map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	if _, ok := mf[name]; !ok {
		return -1
	}
	n, _ := samples(mf, name, want)
	return n
}

// writes is the replica's EndpointSlice writes, from its own counters.
func (r replica) writes(t testing.TB) float64 {
	return value(r.metrics(t), "kubectl_slices_changes_total", nil)
}

// Two replicas against one API server: only the leader writes; a leader
// killed outright is replaced within the lease duration; a leader stopped
// with SIGTERM releases the lease, so its standby takes over at once; a
// leader that loses its lease stops and exits non-zero.
func TestLeaderElection(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	app := "le-" + ns // a label no other test's Services carry: -A selects only ours
	mustService(t, shared, service(ns, "web", func(s *corev1.Service) {
		s.Labels = map[string]string{"app": app}
		s.Spec.Selector = map[string]string{"app": app}
	}))
	want := expected{}
	var specs []controlplane.PodSpec
	pod := func(i int) {
		s := podSpec(app, i, 43)
		specs = append(specs, s)
		want[s.IPs[0]] = "true:" + nodeZone(s.Node)
		mustPods(t, shared, ns, s)
	}
	converged := func() bool { return endpointState(t, shared, ns, "web") == want.String() }
	pod(0)

	a := startReplica(t, shared, shared.Kubeconfig, ns, app)
	a.waitLine(t, "leading: writing from now on", 20*time.Second)
	b := startReplica(t, shared, shared.Kubeconfig, ns, app)
	b.waitLine(t, "standing by", 20*time.Second)
	within(t, "standby ready", 10*time.Second, func() bool { c, _ := b.get("/readyz"); return c == http.StatusOK })
	within(t, "first sync by the leader", 10*time.Second, converged)
	pod(1)
	within(t, "a new Pod reflected", 10*time.Second, converged)
	// The counter moves once the write returned, a moment after the API
	// server shows it.
	within(t, "leader's changes counter at 2 (a create, an update)", 2*time.Second, func() bool { return a.writes(t) >= 2 })
	if w := b.writes(t); w != 0 {
		t.Errorf("standby wrote %v slices", w)
	}
	if n := value(b.metrics(t), "kubectl_slices_syncs_total", nil); n != 0 {
		t.Errorf("standby synced %v times", n)
	}
	if l := value(a.metrics(t), "kubectl_slices_is_leader", nil); l != 1 {
		t.Errorf("leader's is_leader = %v", l)
	}
	if l := value(b.metrics(t), "kubectl_slices_is_leader", nil); l != 0 {
		t.Errorf("standby's is_leader = %v", l)
	}
	if c, body := b.get("/healthz"); c != http.StatusOK {
		t.Errorf("standby /healthz: %d %s", c, body)
	}

	// SIGKILL: no release; the standby waits out the lease.
	_ = a.cmd.Process.Kill()
	<-a.done
	pod(2)
	// The standby takes the lease once it has seen no renewal for the
	// lease duration, counted from its own last look (every retry period,
	// jittered by up to 1.2x): at most about lease + 1.2 x retry.
	took := within(t, "takeover after SIGKILL, and the Service converged", testLease+5*time.Second, converged)
	if took > testLease+3*testRetry+time.Second {
		t.Errorf("takeover took %v, lease duration %v", took, testLease)
	}
	within(t, "new leader's changes counter moved", 2*time.Second, func() bool { return b.writes(t) >= 1 })

	// SIGTERM: the lease is released and a standby takes it at once.
	c := startReplica(t, shared, shared.Kubeconfig, ns, app)
	c.waitLine(t, "standing by", 20*time.Second)
	start := time.Now()
	if code, _ := b.stop(t, syscall.SIGTERM); code == ExitLeaseLost {
		t.Errorf("a SIGTERM'd leader exited %d, as on a lost lease", code)
	}
	// Released: the Lease names no holder, or already the standby, well
	// before it would have expired.
	lease, err := shared.Admin.CoordinationV1().Leases(ns).Get(ctx, "kubectl-slices", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" && !strings.Contains(c.output(), "as "+*h) {
		t.Errorf("after the leader's SIGTERM the Lease is held by %q: not released", *h)
	}
	if strings.Contains(b.output(), "Failed to release lease") {
		t.Errorf("the SIGTERM'd leader could not release the lease:\n%s", b.output())
	}
	c.waitLine(t, "leading: writing from now on", testLease+5*time.Second)
	t.Logf("hand-over after SIGTERM: %v", time.Since(start).Round(time.Millisecond))
	pod(3)
	within(t, "the third leader converges", 10*time.Second, converged)

	// Another holder takes the lease: the leader cannot renew, stops
	// writing and exits non-zero, as kube-controller-manager does.
	patch := fmt.Sprintf(`{"spec":{"holderIdentity":"intruder","renewTime":%q,"leaseDurationSeconds":60}}`,
		time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	kubectl(t, shared, "-n", ns, "patch", "lease", "kubectl-slices", "--type=merge", "-p", patch).mustCode(t, 0)
	select {
	case <-c.done:
	case <-time.After(testRenew + 5*time.Second):
		t.Fatal("a leader whose lease was taken kept running")
	}
	if code := exitCode(c.err); code != ExitLeaseLost {
		t.Errorf("exit code after losing the lease: %d, want %d", code, ExitLeaseLost)
	}
	c.waitLine(t, "lost the lease", time.Second)
	_ = shared.Admin.CoordinationV1().Leases(ns).Delete(ctx, "kubectl-slices", metav1.DeleteOptions{})
}

// ExitLeaseLost is the documented code for an API failure, used when the
// lease is lost.
const ExitLeaseLost = 4

// /readyz stays 503 while the API server is slow to list Pods and the
// caches cannot fill, then turns 200; /metrics parses and its counters move
// with the writes.
func TestHealthEndpoints(t *testing.T) {
	ns := newNamespace(t, shared)
	var down atomic.Bool
	down.Store(true)
	held := make(chan struct{})
	var release sync.Once
	open := func() { release.Do(func() { close(held) }) }
	t.Cleanup(open) // before the proxy's own cleanup, which waits for the requests in flight
	var failWrites atomic.Bool
	kc := apiProxy(t, shared, func(w http.ResponseWriter, r *http.Request) bool {
		if down.Load() && strings.HasSuffix(r.URL.Path, "/pods") {
			<-held // listing Pods (a list or a streaming watch-list) hangs until the test lets it through
		}
		if failWrites.Load() && strings.Contains(r.URL.Path, "/endpointslices") && r.Method != http.MethodGet {
			http.Error(w, "injected failure", http.StatusInternalServerError)
			return true
		}
		return false
	})
	mustService(t, shared, service(ns, "web"))
	addr := freeAddr(t)
	r := replica{startWatch(t, shared, kc, "sync", "--watch", "--all", "-n", ns, "--summary-interval=0", "--health-addr", addr), addr}
	r.waitLine(t, "serving /healthz", 10*time.Second)
	time.Sleep(time.Second) // the other caches have filled; Pods' has not
	if code, body := r.get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the API server unreachable: %d %s", code, body)
	}
	if code, _ := r.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while the caches fill: %d", code)
	}
	before := r.metrics(t)
	if w := value(before, "kubectl_slices_changes_total", map[string]string{"operation": "create"}); w != 0 {
		t.Errorf("creates before any sync: %v", w)
	}
	down.Store(false)
	open()
	within(t, "/readyz once the caches filled", 15*time.Second, func() bool { c, _ := r.get("/readyz"); return c == http.StatusOK })
	s := podSpec("web", 0, 44)
	mustPods(t, shared, ns, s)
	want := expected{s.IPs[0]: "true:" + nodeZone(s.Node)}
	within(t, "synced", 10*time.Second, func() bool { return endpointState(t, shared, ns, "web") == want.String() })
	within(t, "counters moved", 5*time.Second, func() bool {
		m := r.metrics(t)
		return value(m, "kubectl_slices_changes_total", map[string]string{"operation": "create"}) >= 1 &&
			value(m, "kubectl_slices_syncs_total", map[string]string{"result": "success"}) >= 1 &&
			value(m, "kubectl_slices_endpoints_desired", nil) == 1
	})
	// A write the API server refuses: an error sync, and upstream's
	// Warning event on the Service.
	failWrites.Store(true)
	s1 := podSpec("web", 1, 44)
	mustPods(t, shared, ns, s1)
	want[s1.IPs[0]] = "true:" + nodeZone(s1.Node)
	within(t, "a failed sync counted", 10*time.Second, func() bool {
		return value(r.metrics(t), "kubectl_slices_syncs_total", map[string]string{"result": "error"}) >= 1
	})
	within(t, "a FailedToUpdateEndpointSlices event on the Service", 10*time.Second, func() bool {
		evs, err := shared.Admin.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=FailedToUpdateEndpointSlices"})
		return err == nil && len(evs.Items) > 0 && evs.Items[0].Source.Component == "kubectl-slices" && evs.Items[0].Type == corev1.EventTypeWarning
	})
	failWrites.Store(false)
	within(t, "converged after the failure, with backoff", 10*time.Second, func() bool { return endpointState(t, shared, ns, "web") == want.String() })
	m := r.metrics(t)
	for _, name := range []string{"workqueue_depth", "kubectl_slices_last_successful_sync_age_seconds",
		"kubectl_slices_is_leader", "kubectl_slices_services_controller_current", "kubectl_slices_endpoints_added_per_sync",
		"kubectl_slices_desired_endpoint_slices", "process_resident_memory_bytes", "go_goroutines"} {
		if _, ok := m[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if code, _ := r.stop(t, syscall.SIGTERM); code != 0 && code != 143 {
		t.Errorf("exit code after SIGTERM: %d", code)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var code int
	if _, e := fmt.Sscanf(err.Error(), "exit status %d", &code); e == nil {
		return code
	}
	return -1
}

// nodeZone is the zone of one of the shared test Nodes.
func nodeZone(node string) string {
	for _, n := range testNodes {
		if n.Name == node {
			return n.Zone
		}
	}
	return ""
}
