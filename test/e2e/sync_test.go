package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The broken-cluster story: without kube-controller-manager a Service with
// ready Pods has no slices; sync writes them under our label, a second sync
// writes nothing, and diff's exit code follows.
func TestSyncRepairsServiceWithoutEndpoints(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	var want []string
	for i := 0; i < 5; i++ {
		p := podSpec("web", i, 1)
		if i == 4 {
			p.Ready = false
		}
		mustPods(t, shared, ns, p)
		want = append(want, p.IPs[0])
	}
	if got := listSlices(t, shared, ns, "web", ""); len(got) != 0 {
		t.Fatalf("before sync: %d slices, want none (no controller runs)", len(got))
	}
	slices(t, "diff", "svc/web", "-n", ns).mustCode(t, 1)

	r := slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "synced: 1 created") || !strings.Contains(r.Stdout, "4 ready, 1 not ready") {
		t.Errorf("summary: %q", r.Stdout)
	}
	got := listSlices(t, shared, ns, "web", "")
	if len(got) != 1 || got[0].Labels[discovery.LabelManagedBy] != oursLabel {
		t.Fatalf("after sync: %+v", got)
	}
	if addrs := endpointAddresses(got); !reflect.DeepEqual(addrs, sortedCopy(want)) {
		t.Errorf("addresses %v, want %v", addrs, sortedCopy(want))
	}
	ep := got[0].Endpoints
	if len(got[0].Ports) != 1 || *got[0].Ports[0].Port != 8080 || got[0].OwnerReferences[0].Kind != "Service" || *ep[0].Zone == "" {
		t.Errorf("slice content: ports %+v owner %+v zone %v", got[0].Ports, got[0].OwnerReferences, ep[0].Zone)
	}

	// A second sync writes nothing: every resourceVersion stays.
	before := allSliceVersions(t, shared, ns)
	r = slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "in sync: 0 created, 0 updated, 0 deleted, 1 unchanged") {
		t.Errorf("second sync summary: %q", r.Stdout)
	}
	if after := allSliceVersions(t, shared, ns); !reflect.DeepEqual(before, after) {
		t.Errorf("second sync changed resourceVersions: %v -> %v", before, after)
	}
	slices(t, "diff", "svc/web", "-n", ns).mustCode(t, 0)

	// A Pod becoming ready is one update, and diff shows it first.
	if err := shared.SetPodReady(context.Background(), ns, "web-4", true); err != nil {
		t.Fatal(err)
	}
	d := slices(t, "diff", "svc/web", "-n", ns).mustCode(t, 1)
	if !strings.Contains(d.Stdout, "-    ready: false") || !strings.Contains(d.Stdout, "+    ready: true") {
		t.Errorf("diff does not show the readiness change:\n%s", d.Stdout)
	}
	r = slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "0 created, 1 updated, 0 deleted") {
		t.Errorf("summary after readiness change: %q", r.Stdout)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

// Dry runs write nothing and print what would be written.
func TestSyncDryRun(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 2), podSpec("web", 1, 2))
	for _, mode := range []string{"server", "client"} {
		r := slices(t, "sync", "svc/web", "-n", ns, "--dry-run="+mode, "-o", "yaml").mustCode(t, 0)
		if !strings.Contains(r.Stdout, "kind: EndpointSlice") || !strings.Contains(r.Stdout, "10.2.0.1") ||
			!strings.Contains(r.Stdout, "endpointslice.kubernetes.io/managed-by: kubectl-slices") {
			t.Errorf("--dry-run=%s -o yaml printed:\n%s", mode, r.Stdout)
		}
		if !strings.Contains(r.Stderr, "would sync (dry run: "+mode+")") {
			t.Errorf("--dry-run=%s summary: %q", mode, r.Stderr)
		}
		if n := len(allSliceVersions(t, shared, ns)); n != 0 {
			t.Fatalf("--dry-run=%s wrote %d slices", mode, n)
		}
	}
	r := slices(t, "sync", "svc/web", "-n", ns, "--dry-run=server", "-o", "name").mustCode(t, 0)
	if !strings.HasPrefix(r.Stdout, "endpointslice.discovery.k8s.io/web-") || !strings.Contains(r.Stdout, "created (server dry run)") {
		t.Errorf("-o name: %q", r.Stdout)
	}
}

// A slice of another manager for the same Service is never touched.
func TestSyncLeavesForeignSlicesAlone(t *testing.T) {
	ns := newNamespace(t, shared)
	svc := mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 3))
	ready := true
	foreign := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-manual", Namespace: ns, Labels: map[string]string{
			discovery.LabelServiceName: "web", discovery.LabelManagedBy: "someone-else"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: svc.UID}}},
		AddressType: discovery.AddressTypeIPv4,
		Endpoints:   []discovery.Endpoint{{Addresses: []string{"10.3.9.9"}, Conditions: discovery.EndpointConditions{Ready: &ready}}},
	}
	before, err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Create(context.Background(), foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	after, err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Get(context.Background(), "web-manual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("foreign slice changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if ours := listSlices(t, shared, ns, "web", oursLabel); len(ours) != 1 || endpointAddresses(ours)[0] != "10.3.0.1" {
		t.Errorf("our slices: %+v", ours)
	}
}

// Selecting Services by label and with --all; skipped Services are reported,
// not failed.
func TestSyncSelectsAndSkips(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web", func(s *corev1.Service) { s.Labels = map[string]string{"tier": "front"} }))
	mustService(t, shared, service(ns, "api"))
	mustService(t, shared, service(ns, "ext", func(s *corev1.Service) {
		s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}
	}))
	mustPods(t, shared, ns, podSpec("web", 0, 4), podSpec("api", 1, 4))

	r := slices(t, "sync", "-l", "tier=front", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "service "+ns+"/web synced") || strings.Contains(r.Stdout, "/api") {
		t.Errorf("-l sync: %q", r.Stdout)
	}
	r = slices(t, "sync", "--all", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "/ext skipped (ExternalName)") || !strings.Contains(r.Stdout, "/api synced: 1 created") {
		t.Errorf("--all sync: %q", r.Stdout)
	}
	// A bare name and the "svc NAME" form work too.
	slices(t, "sync", "api", "-n", ns).mustCode(t, 0)
	slices(t, "sync", "svc", "web", "api", "-n", ns).mustCode(t, 0)
}

// version prints the plugin's version (set at build time) and the server's.
func TestVersion(t *testing.T) {
	r := slices(t, "version").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "Client Version: v0.0.0-e2e") || !strings.Contains(r.Stdout, "Server Version: v1.36.3") {
		t.Errorf("version: %q", r.Stdout)
	}
}
