package e2e

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// sync --watch plans a readiness flip, a new Pod, a deleted one and a
// relabelled one from the Pods that changed (kubectl_slices_plans_total counts
// the memo's path), and after each the full planner, through `kubectl
// slices diff`, finds nothing to change.
func TestWatchPlansFromChangedPods(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	var specs []controlplane.PodSpec
	for i := range 250 {
		specs = append(specs, podSpec("web", i, 41))
	}
	mustPods(t, shared, ns, specs...)
	addr := freeAddr(t)
	r := replica{startWatch(t, shared, shared.Kubeconfig, "sync", "--watch", "--all", "-n", ns, "--summary-interval=0", "--health-addr", addr), addr}
	settled := func(what string) {
		t.Helper()
		within(t, what, reflectLimit, func() bool { return slices(t, "diff", "svc/web", "-n", ns).Code == 0 })
	}
	// The first sync starts the process and fills its caches: it is held to
	// a start-up bound, as every test's first sync is; the changes after it,
	// the subject here, to reflectLimit.
	within(t, "first sync", 20*time.Second, func() bool { return slices(t, "diff", "svc/web", "-n", ns).Code == 0 })
	rng := rand.New(rand.NewPCG(4, 2))
	flips := 0
	for range 6 {
		name := specs[rng.IntN(len(specs))].Name
		for _, ready := range []bool{false, true} {
			if err := shared.SetPodReady(ctx, ns, name, ready); err != nil {
				t.Fatal(err)
			}
			flips++
			settled("readiness flip of " + name)
		}
	}
	mustPods(t, shared, ns, podSpec("web", 250, 41))
	settled("new Pod")
	if err := shared.Admin.CoreV1().Pods(ns).Delete(ctx, "web-7", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	settled("deleted Pod")
	p, err := shared.Admin.CoreV1().Pods(ns).Get(ctx, "web-9", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels["app"] = "other"
	if _, err := shared.Admin.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settled("relabelled Pod")
	m := r.metrics(t)
	memo := value(m, "kubectl_slices_plans_total", map[string]string{"path": "memo"})
	full := value(m, "kubectl_slices_plans_total", map[string]string{"path": "full"})
	t.Logf("plans: %v from the memo, %v in full", memo, full)
	if memo < float64(flips+3) {
		t.Fatalf("%v plans from the memo for %d changes (%v in full): the changed Pods were not planned alone", memo, flips+3, full)
	}
}
