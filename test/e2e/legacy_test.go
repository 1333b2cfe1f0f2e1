package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

const endpointsManagedByLabel = "endpoints.kubernetes.io/managed-by"

// testLegacyEndpoints records what the Endpoints controller writes for every
// fidelity scenario, stops it (the outage kubectl-slices repairs), and
// requires sync --with-endpoints to write the same objects.
func testLegacyEndpoints(t *testing.T, cp *controlplane.ControlPlane) {
	ctx := context.Background()
	type recorded struct{ ns, svc, upstream string }
	var all []recorded
	dists, version, minor := acceptedTrafficDistributions(t, cp), serverVersion(t, cp), serverMinor(t, cp)
	for _, sc := range fidelityScenarios() {
		ns := newNamespace(t, cp)
		svc := sc.service(ns)
		if d := svc.Spec.TrafficDistribution; d != nil && !contains(dists, *d) {
			t.Logf("%s: API server %s does not accept trafficDistribution %s", sc.name, version, *d)
			continue
		}
		if why := controllerDifference(minor, true, svc, sc.pods); why != "" {
			t.Logf("%s: %s: known difference: %s", sc.name, version, why)
			continue
		}
		mustService(t, cp, svc)
		mustPods(t, cp, ns, sc.pods...)
		if sc.then != nil {
			sc.then(t, cp, ns)
		}
		all = append(all, recorded{ns: ns, svc: svc.Name})
	}
	for i := range all {
		all[i].upstream = endpointsCanonical(awaitStableEndpoints(t, cp, all[i].ns, all[i].svc))
	}
	cp.StopControllerManager()

	// The controller's own objects are someone else's: left alone, said so.
	first := all[0]
	before := endpointsRaw(t, cp, first.ns, first.svc)
	out := kubectl(t, cp, "slices", "sync", "svc/"+first.svc, "-n", first.ns, "--with-endpoints").mustCode(t, 0)
	// Before v1.33 the controller does not mark its Endpoints: sync cannot
	// tell them from anyone else's, and says so.
	said := "left alone: managed by kube-controller-manager's Endpoints controller"
	if minor < 33 {
		said = "left alone: written by someone else (no " + endpointsManagedByLabel + " label; kube-controller-manager's Endpoints controller before v1.33 writes none either)"
	}
	if !strings.Contains(out.Stdout, said) {
		t.Fatalf("sync does not say why it skipped the controller's Endpoints:\n%s", out.Stdout)
	}
	if after := endpointsRaw(t, cp, first.ns, first.svc); after != before {
		t.Fatalf("the controller's Endpoints object changed:\n%s\n---\n%s", before, after)
	}

	for _, rec := range all {
		t.Run(rec.ns, func(t *testing.T) {
			if err := cp.Admin.CoreV1().Endpoints(rec.ns).Delete(ctx, rec.svc, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			kubectl(t, cp, "slices", "sync", "svc/"+rec.svc, "-n", rec.ns, "--with-endpoints").mustCode(t, 0)
			ep, err := cp.Admin.CoreV1().Endpoints(rec.ns).Get(ctx, rec.svc, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := ep.Labels[endpointsManagedByLabel]; got != "kubectl-slices" {
				t.Fatalf("our Endpoints carry %s=%q", endpointsManagedByLabel, got)
			}
			svc, err := cp.Admin.CoreV1().Services(rec.ns).Get(ctx, rec.svc, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ep.Annotations[corev1.EndpointsLastChangeTriggerTime], latestChange(t, cp, svc).UTC().Format(time.RFC3339Nano); got != want {
				t.Fatalf("trigger time %q, want the latest of the Service's creation and its Pods' Ready transitions, %q", got, want)
			}
			if ours := endpointsCanonical(ep); ours != rec.upstream {
				t.Fatalf("Endpoints differ\n--- kubectl-slices\n%s--- kube-controller-manager\n%s", ours, rec.upstream)
			}
			rv := ep.ResourceVersion
			again := kubectl(t, cp, "slices", "sync", "svc/"+rec.svc, "-n", rec.ns, "--with-endpoints").mustCode(t, 0)
			if ep, err = cp.Admin.CoreV1().Endpoints(rec.ns).Get(ctx, rec.svc, metav1.GetOptions{}); err != nil || ep.ResourceVersion != rv {
				t.Fatalf("second sync rewrote the Endpoints (%v):\n%s", err, again.Stdout)
			}
		})
	}

	t.Run("hand-written Endpoints are never written over", func(t *testing.T) {
		ns := newNamespace(t, cp)
		svc := mustService(t, cp, service(ns, "web"))
		mustPods(t, cp, ns, pods("web", 3, 40, nil)...)
		hand := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc.Name, Labels: map[string]string{"owner": "me"}},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.99.0.1"}}, Ports: []corev1.EndpointPort{{Port: 1234}}}}}
		if _, err := cp.Admin.CoreV1().Endpoints(ns).Create(ctx, hand, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		before := endpointsRaw(t, cp, ns, svc.Name)
		out := kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns, "--with-endpoints").mustCode(t, 0)
		want := fmt.Sprintf("Endpoints %s/web left alone: written by someone else (no %s label;", ns, endpointsManagedByLabel)
		if !strings.Contains(out.Stdout, want) {
			t.Fatalf("sync does not say %q:\n%s%s", want, out.Stdout, out.Stderr)
		}
		if after := endpointsRaw(t, cp, ns, svc.Name); after != before {
			t.Fatalf("hand-written Endpoints changed:\n%s\n---\n%s", before, after)
		}
		// The slices were still synced.
		if n := len(listSlices(t, cp, ns, "web", "kubectl-slices")); n != 1 {
			t.Fatalf("want 1 slice of ours, got %d", n)
		}
	})
}

// awaitStableEndpoints waits for the Endpoints controller's object to exist
// and keep its resourceVersion for 2 s.
func awaitStableEndpoints(t *testing.T, cp *controlplane.ControlPlane, ns, name string) *corev1.Endpoints {
	t.Helper()
	var last *corev1.Endpoints
	since := time.Now()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ep, err := cp.Admin.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if last == nil || ep.ResourceVersion != last.ResourceVersion {
			last, since = ep, time.Now()
		}
		if time.Since(since) > 2*time.Second {
			return last
		}
	}
	t.Fatalf("the Endpoints controller wrote no stable Endpoints for %s/%s", ns, name)
	return nil
}

// endpointsRaw is the object as the API server stores it, as JSON.
func endpointsRaw(t *testing.T, cp *controlplane.ControlPlane, ns, name string) string {
	t.Helper()
	b, err := cp.Admin.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", ns, "endpoints", name).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// endpointsCanonical prints an Endpoints object with its subsets as sets:
// one line per address, readiness and port; labels but managed-by; whether
// the over-capacity annotation. The trigger time is left out: the
// controller stamps the time of the last Pod change it saw (none after a
// deletion), a one-shot sync the Service's creation time.
func endpointsCanonical(ep *corev1.Endpoints) string {
	var b strings.Builder
	var labels []string
	for k, v := range ep.Labels {
		if k != endpointsManagedByLabel {
			labels = append(labels, k+"="+v)
		}
	}
	sort.Strings(labels)
	fmt.Fprintf(&b, "labels %v over-capacity %q\n", labels, ep.Annotations[corev1.EndpointsOverCapacity])
	var lines []string
	for _, s := range ep.Subsets {
		ports := []string{"<none>"}
		if len(s.Ports) > 0 {
			ports = nil
		}
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d/%s/%s", p.Name, p.Port, p.Protocol, str(p.AppProtocol)))
		}
		for _, l := range []struct {
			a     []corev1.EndpointAddress
			ready bool
		}{{s.Addresses, true}, {s.NotReadyAddresses, false}} {
			for _, a := range l.a {
				ref := "nil"
				if a.TargetRef != nil {
					ref = fmt.Sprintf("%s/%s/%s/%s", a.TargetRef.Kind, a.TargetRef.Namespace, a.TargetRef.Name, a.TargetRef.UID)
				}
				for _, p := range ports {
					lines = append(lines, fmt.Sprintf("  %s ready=%v hostname=%q node=%s ref=%s port=%s", a.IP, l.ready, a.Hostname, str(a.NodeName), ref, p))
				}
			}
		}
	}
	sort.Strings(lines)
	fmt.Fprintf(&b, "%d lines\n%s\n", len(lines), strings.Join(lines, "\n"))
	return b.String()
}

// latestChange is the trigger time a one-shot sync stamps, worked out from
// the cluster: the Service's creation or its Pods' last Ready transition,
// whichever came last.
func latestChange(t *testing.T, cp *controlplane.ControlPlane, svc *corev1.Service) time.Time {
	t.Helper()
	pods, err := cp.Admin.CoreV1().Pods(svc.Namespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		t.Fatal(err)
	}
	latest := svc.CreationTimestamp.Time
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.LastTransitionTime.After(latest) {
				latest = c.LastTransitionTime.Time
			}
		}
	}
	return latest
}
