package e2e

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verify --watch through the built binary, beside the test Nodes (none
// runs a kube-proxy here; the real nodes' scenarios are e2enode's
// TestVerifyWatch): /readyz once the first round is judged, each node's
// status and UNKNOWN class on /metrics and a line each, a change of the
// selected Service's slices read a sync period after it (not at once),
// a change of another Service's not read at all, and SIGTERM exits 0.
func TestVerifyWatchRounds(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustService(t, shared, service(ns, "other"))
	mustPods(t, shared, ns, podSpec("web", 0, 45), podSpec("web", 1, 45), podSpec("other", 0, 46))
	slices(t, "sync", "--all", "-n", ns).mustCode(t, 0)
	// A node with a kube-proxy Pod at an address nobody answers: its tiers
	// are tried (and fail), so it is read, where the test Nodes have none.
	proxyOnNode(t, "verify-watch", "kube-proxy-watch", map[string]string{"k8s-app": "kube-proxy"}, "192.0.2.4")
	const settle = 3 * time.Second
	addr := freeAddr(t)
	r := replica{startWatch(t, shared, shared.Kubeconfig, "verify", "--watch", "svc/web", "-n", ns, "--interval", "10m",
		"--sync-period", settle.String(), "--node-timeout", "2s", "--health-addr", addr), addr}
	within(t, "/readyz after the first round", 30*time.Second, func() bool { code, _ := r.get("/readyz"); return code == http.StatusOK })
	r.waitLine(t, "node "+testNodes[0].Name+": UNKNOWN: no kube-proxy Pod on the node", 5*time.Second)
	m := r.metrics(t)
	for _, n := range testNodes {
		if v := value(m, "kubectl_slices_dataplane_status", map[string]string{"kind": "node", "target": n.Name, "status": "UNKNOWN"}); v != 1 {
			t.Errorf("node %s: UNKNOWN gauge %v, want 1", n.Name, v)
		}
		if v := value(m, "kubectl_slices_dataplane_unknown_info", map[string]string{"target": n.Name, "class": "no-proxy"}); v != 1 {
			t.Errorf("node %s: unknown_info{class=no-proxy} %v, want 1", n.Name, v)
		}
	}
	if v := value(m, "kubectl_slices_dataplane_unknown_info", map[string]string{"target": "verify-watch", "class": "unreadable"}); v != 1 {
		t.Errorf("node verify-watch: unknown_info{class=unreadable} %v, want 1", v)
	}
	if v := value(m, "kubectl_slices_dataplane_last_verified_timestamp_seconds", map[string]string{"target": testNodes[0].Name}); v != -1 && v != 0 {
		t.Errorf("node %s, never read, has a last verification: %v", testNodes[0].Name, v)
	}
	heldToTheDocs(t, m)
	rounds := func() float64 { return value(r.metrics(t), "kubectl_slices_dataplane_rounds_total", nil) }
	if n := rounds(); n != 1 {
		t.Fatalf("rounds after start: %v, want 1", n)
	}

	// Another Service's slices change: no round.
	notReady(t, ns, "other-0")
	slices(t, "sync", "svc/other", "-n", ns).mustCode(t, 0)
	time.Sleep(settle + 2*time.Second)
	if n := rounds(); n != 1 {
		t.Fatalf("rounds after another Service's slices changed: %v, want 1", n)
	}

	// The selected Service's slices change: a round a sync period later.
	notReady(t, ns, "web-1")
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	written := time.Now()
	took := within(t, "a round after web's slices changed", settle+10*time.Second, func() bool { return rounds() == 2 })
	if took < settle-500*time.Millisecond {
		t.Errorf("the round came %s after the change, before the sync period (%s)", took.Round(time.Millisecond), settle)
	}
	t.Logf("change written at %s, round %s later", written.Format(time.TimeOnly), took.Round(time.Millisecond))
	if evs, err := shared.Admin.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "source=kubectl-slices-verify"}); err != nil || len(evs.Items) > 0 {
		t.Errorf("Events for UNKNOWN nodes: %v %v", evs, err)
	}
	if code, _ := r.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("exit code after SIGTERM: %d", code)
	}
	if out := r.output(); strings.Contains(out, "panic") {
		t.Errorf("output:\n%s", out)
	}
}

// notReady sets a Pod's Ready condition False.
func notReady(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	pod, err := shared.Admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			pod.Status.Conditions[i].Status, pod.Status.Conditions[i].LastTransitionTime = corev1.ConditionFalse, metav1.Now()
		}
	}
	if _, err := shared.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// heldToTheDocs: the verifier serves the families docs/monitoring.md's
// section lists, and no other, and every verifier family the alerts'
// tests name.
func heldToTheDocs(t *testing.T, mf map[string]*dto.MetricFamily) {
	t.Helper()
	documented := documentedMetrics(t, verifierMetrics)
	for name := range mf {
		if !documented.has(name) {
			t.Errorf("verify --watch serves %s, which docs/monitoring.md's verifier section does not list", name)
		}
	}
	for _, name := range documented.names {
		if _, ok := mf[name]; !ok {
			t.Errorf("docs/monitoring.md's verifier section lists %s, which verify --watch does not serve", name)
		}
	}
	for _, name := range metricNames(t, "../monitoring/alerts_test.yaml", seriesLine) {
		if _, ok := mf[name]; strings.HasPrefix(name, verifierPrefix) && !ok {
			t.Errorf("the alerts' tests name %s, which verify --watch does not serve", name)
		}
	}
}
