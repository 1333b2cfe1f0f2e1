package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// reflectLimit is how soon a change must show in our slices.
const reflectLimit = time.Second

// expected is the endpoint state a test expects, built from the Pods it
// made: address → "ready:zone".
type expected map[string]string

func (e expected) String() string {
	var out []string
	for addr, v := range e {
		out = append(out, addr+":"+v)
	}
	sortStrings(out)
	return strings.Join(out, " ")
}

// Every kind of change is reflected within a second; SIGTERM exits 0 within
// 5 s.
func TestWatchKeepsSlicesCurrent(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	node := "node-" + ns[:min(len(ns), 40)]
	if err := shared.Node(ctx, controlplane.NodeSpec{Name: node, Zone: "zone-w1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Admin.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}) })
	mustService(t, shared, service(ns, "web"))
	var specs []controlplane.PodSpec
	want := expected{}
	for i := range 3 {
		s := podSpec("web", i, 40)
		s.Node = node
		specs = append(specs, s)
		want[s.IPs[0]] = "true:zone-w1"
	}
	mustPods(t, shared, ns, specs...)

	w := startWatch(t, shared, shared.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--summary-interval=0")
	within(t, "first sync", 10*time.Second, func() bool { return endpointState(t, shared, ns, "web") == want.String() })

	step := func(what string, change func(), line string) {
		t.Helper()
		change()
		within(t, what, reflectLimit, func() bool { return endpointState(t, shared, ns, "web") == want.String() })
		if line != "" {
			w.waitLine(t, line, 2*time.Second)
		}
	}
	step("readiness flip", func() {
		if err := shared.SetPodReady(ctx, ns, "web-1", false); err != nil {
			t.Fatal(err)
		}
		want[specs[1].IPs[0]] = "false:zone-w1"
	}, "pod web-1 not ready")
	step("pod delete", func() {
		if err := shared.Admin.CoreV1().Pods(ns).Delete(ctx, "web-2", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		delete(want, specs[2].IPs[0])
	}, "pod web-2 removed")
	step("new pod", func() {
		s := podSpec("web", 3, 40)
		s.Node = node
		mustPods(t, shared, ns, s)
		want[s.IPs[0]] = "true:zone-w1"
	}, "pod web-3 added")
	step("node zone change", func() {
		n, err := shared.Admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Labels[corev1.LabelTopologyZone] = "zone-w2"
		if _, err := shared.Admin.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for addr, v := range want {
			want[addr] = strings.Replace(v, "zone-w1", "zone-w2", 1)
		}
	}, "zone zone-w1→zone-w2")
	step("hand-deleted slice", func() {
		for _, s := range listSlices(t, shared, ns, "web", oursLabel) {
			if err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}, "")
	step("hand-edited slice", func() {
		s := listSlices(t, shared, ns, "web", oursLabel)[0]
		s.Endpoints = s.Endpoints[:1]
		if _, err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Update(ctx, &s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}, "")
	// A deleted Service's slices of ours are removed (no garbage collector
	// runs here, as when the controller manager is down).
	if err := shared.Admin.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "deleted Service's slices removed", reflectLimit, func() bool { return oursCount(t, shared, ns, "web") == 0 })
	w.waitLine(t, "service deleted", 2*time.Second)

	code, took := w.stop(t, syscall.SIGTERM)
	t.Logf("SIGTERM: exit %d after %v", code, took.Round(time.Millisecond))
	if code != 0 || took > 5*time.Second {
		t.Fatalf("SIGTERM: exit %d after %v, want 0 within 5 s", code, took)
	}
	out := w.output()
	t.Logf("output:\n%s", out)
	if strings.Contains(out, "error") {
		t.Errorf("errors in the output:\n%s", out)
	}
}

var _ = discovery.LabelManagedBy
var _ = fmt.Sprint
