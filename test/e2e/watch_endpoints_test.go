package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// legacyState is a Service's v1 Endpoints object as "ready a,b; not ready
// c" with our mark, or "absent".
func legacyState(t testing.TB, ns, name string) string {
	t.Helper()
	ep, err := shared.Admin.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	var ready, notReady []string
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			ready = append(ready, a.IP)
		}
		for _, a := range s.NotReadyAddresses {
			notReady = append(notReady, a.IP)
		}
	}
	sort.Strings(ready)
	sort.Strings(notReady)
	return fmt.Sprintf("%s: ready %s; not ready %s", ep.Labels[endpointsManagedByLabel], strings.Join(ready, ","), strings.Join(notReady, ","))
}

// sync --watch --with-endpoints keeps a Service's v1 Endpoints object as the
// Pods say through a readiness flip, a Pod delete, a hand edit and a
// delete of the object, removes it with its Service, and never writes an
// Endpoints object that is not marked ours.
func TestWatchKeepsLegacyEndpoints(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	specs := pods("web", 3, 41, nil)
	mustPods(t, shared, ns, specs...)
	ip := func(i int) string { return specs[i].IPs[0] }
	// Two Endpoints objects that are not ours, of Services with selectors.
	for _, f := range []struct{ name, mark string }{{"hand", ""}, {"ctl", "endpoint-controller"}} {
		mustService(t, shared, service(ns, f.name))
		mustPods(t, shared, ns, pods(f.name, 1, 42+len(f.mark)%7, nil)...)
		ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.name},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.99.0.1"}}, Ports: []corev1.EndpointPort{{Port: 1234}}}}}
		if f.mark != "" {
			ep.Labels = map[string]string{endpointsManagedByLabel: f.mark}
		}
		if _, err := shared.Admin.CoreV1().Endpoints(ns).Create(ctx, ep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	foreign := map[string]string{"hand": endpointsRaw(t, shared, ns, "hand"), "ctl": endpointsRaw(t, shared, ns, "ctl")}

	w := startWatch(t, shared, shared.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--with-endpoints", "--summary-interval=0")
	want := func(ready, notReady string) string {
		return "kubectl-slices: ready " + ready + "; not ready " + notReady
	}
	all := strings.Join([]string{ip(0), ip(1), ip(2)}, ",")
	within(t, "first sync", 10*time.Second, func() bool { return legacyState(t, ns, "web") == want(all, "") })
	w.waitLine(t, "endpoints "+ns+"/web: created: 3 ready, 0 not ready addresses", 2*time.Second)

	if err := shared.SetPodReady(ctx, ns, "web-1", false); err != nil {
		t.Fatal(err)
	}
	within(t, "readiness flip", 2*time.Second, func() bool { return legacyState(t, ns, "web") == want(ip(0)+","+ip(2), ip(1)) })
	if err := shared.Admin.CoreV1().Pods(ns).Delete(ctx, "web-2", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	within(t, "pod delete", 2*time.Second, func() bool { return legacyState(t, ns, "web") == want(ip(0), ip(1)) })

	ep, err := shared.Admin.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep.Subsets = []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.99.9.9"}}, Ports: []corev1.EndpointPort{{Port: 1}}}}
	if _, err := shared.Admin.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "hand edit undone", 2*time.Second, func() bool { return legacyState(t, ns, "web") == want(ip(0), ip(1)) })
	if err := shared.Admin.CoreV1().Endpoints(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "deleted object re-created", 2*time.Second, func() bool { return legacyState(t, ns, "web") == want(ip(0), ip(1)) })

	if err := shared.Admin.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "removed with its Service", 2*time.Second, func() bool { return legacyState(t, ns, "web") == "absent" })

	for name, before := range foreign {
		if after := endpointsRaw(t, shared, ns, name); after != before {
			t.Errorf("Endpoints %s, not ours, changed:\n%s\n---\n%s", name, before, after)
		}
	}
	if strings.Contains(w.output(), "error") || strings.Contains(w.output(), "endpoints "+ns+"/hand:") || strings.Contains(w.output(), "endpoints "+ns+"/ctl:") {
		t.Errorf("the loop reported errors:\n%s", w.output())
	}
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
}
