package e2e

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// endpointsDump is every Endpoints object of ns as the API server stores it.
func endpointsDump(t *testing.T, cp *controlplane.ControlPlane, ns string) map[string]string {
	t.Helper()
	list, err := cp.Admin.CoreV1().Endpoints(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ep := range list.Items {
		out[ep.Name] = endpointsRaw(t, cp, ns, ep.Name)
	}
	return out
}

// handEndpoints creates an Endpoints object, labelled as given.
func handEndpoints(t *testing.T, cp *controlplane.ControlPlane, ns, name string, labels map[string]string) {
	t.Helper()
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.99.0.1"}}, Ports: []corev1.EndpointPort{{Port: 1234}}}}}
	if _, err := cp.Admin.CoreV1().Endpoints(ns).Create(context.Background(), ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func editService(t *testing.T, cp *controlplane.ControlPlane, ns, name string, edit func(*corev1.Service)) {
	t.Helper()
	ctx := context.Background()
	svc, err := cp.Admin.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit(svc)
	if _, err := cp.Admin.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// check and prune cover our Endpoints objects: those whose Service is
// gone, lost its selector or became ExternalName are reported and pruned,
// a stale one is reported; every Endpoints object not labelled as ours
// (hand-written, the controller's, another tool's) and ours of a live
// Service stay byte-identical.
func TestPruneEndpoints(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	for i, name := range []string{"gone", "nosel", "ext", "keep"} {
		mustService(t, shared, service(ns, name))
		mustPods(t, shared, ns, podSpec(name, 0, 30+i), podSpec(name, 1, 30+i))
		slices(t, "sync", "svc/"+name, "-n", ns, "--with-endpoints").mustCode(t, 0)
	}
	// Not ours: for missing Services, and a selector-less Service's own.
	handEndpoints(t, shared, ns, "hand-gone", nil)
	handEndpoints(t, shared, ns, "kcm-gone", map[string]string{endpointsManagedByLabel: "endpoint-controller"})
	handEndpoints(t, shared, ns, "other-gone", map[string]string{endpointsManagedByLabel: "someone-else"})
	mustService(t, shared, service(ns, "manual", func(s *corev1.Service) { s.Spec.Selector = nil }))
	handEndpoints(t, shared, ns, "manual", nil)

	// Deleting a Service deletes its Endpoints object in the API server
	// (the service storage's afterDelete); ours outlives it when a sync
	// races the delete, as here.
	goneEp, err := shared.Admin.CoreV1().Endpoints(ns).Get(ctx, "gone", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := shared.Admin.CoreV1().Services(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the API server to delete endpoints/gone", func() bool {
		_, err := shared.Admin.CoreV1().Endpoints(ns).Get(ctx, "gone", metav1.GetOptions{})
		return err != nil
	})
	goneEp.ResourceVersion, goneEp.UID = "", ""
	if _, err := shared.Admin.CoreV1().Endpoints(ns).Create(ctx, goneEp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	editService(t, shared, ns, "nosel", func(s *corev1.Service) { s.Spec.Selector = nil })
	editService(t, shared, ns, "ext", func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeExternalName, "example.com", "", nil
		s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = nil, nil
	})
	mustPods(t, shared, ns, podSpec("keep", 2, 33)) // ours for keep is now stale
	before := endpointsDump(t, shared, ns)
	doomed := []string{"ext", "gone", "nosel"}

	checkReportsEachWithItsRepair(t, ns)

	// A dry run lists them, with reasons, and changes nothing.
	r := slices(t, "prune", "-n", ns, "--dry-run=client").mustCode(t, 0)
	for _, name := range doomed {
		if !strings.Contains(r.Stdout, "endpoints/"+name+" deleted (dry run") {
			t.Errorf("dry run does not list endpoints/%s:\n%s", name, r.Stdout)
		}
	}
	for _, reason := range []string{"ServiceGone", "NoSelector", "ExternalName"} {
		if !strings.Contains(r.Stdout, reason) {
			t.Errorf("dry run does not say %s:\n%s", reason, r.Stdout)
		}
	}
	if after := endpointsDump(t, shared, ns); len(after) != len(before) {
		t.Fatalf("dry run deleted Endpoints: %d -> %d", len(before), len(after))
	}

	r = slices(t, "prune", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stderr, "3 of 4 Endpoints objects of kubectl-slices pruned") {
		t.Errorf("prune summary:\n%s", r.Stderr)
	}
	after := endpointsDump(t, shared, ns)
	for name, raw := range before {
		gone := false
		for _, d := range doomed {
			gone = gone || d == name
		}
		switch got, ok := after[name]; {
		case gone && ok:
			t.Errorf("endpoints/%s was not pruned", name)
		case !gone && got != raw:
			t.Errorf("endpoints/%s changed:\n%s\n---\n%s", name, raw, got)
		}
	}
	// Again: nothing left to prune.
	r = slices(t, "prune", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "Nothing to prune") {
		t.Errorf("second prune:\n%s", r.Stdout)
	}
}

// checkReportsEachWithItsRepair: check finds the three orphaned Endpoints
// objects and the stale one, each with the command that repairs it.
func checkReportsEachWithItsRepair(t *testing.T, ns string) {
	r := slices(t, "check", "-n", ns, "-o", "json").mustCode(t, 1)
	var report struct {
		Endpoints int `json:"endpoints"`
		Findings  []struct{ Service, Kind, Command string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("%v:\n%s", err, r.Stdout)
	}
	var got []string
	for _, f := range report.Findings {
		if strings.HasSuffix(f.Kind, "Endpoints") {
			got = append(got, f.Service+" "+f.Kind+" "+f.Command)
		}
	}
	sort.Strings(got)
	want := []string{"ext OrphanedEndpoints kubectl slices prune -n " + ns, "gone OrphanedEndpoints kubectl slices prune -n " + ns,
		"keep StaleEndpoints kubectl slices sync svc/keep -n " + ns + " --with-endpoints", "nosel OrphanedEndpoints kubectl slices prune -n " + ns}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || report.Endpoints != 4 {
		t.Errorf("check found (%d Endpoints checked):\n%s\nwant\n%s", report.Endpoints, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// release hands our Endpoints object to kube-controller-manager's Endpoints
// controller: refused while it is down (nothing changes), then, with the
// controller started, handed back once it has rewritten the object under
// its own label, never deleted, so v1 Endpoints consumers never see fewer
// ready addresses. --force removes only our label. A selector-less
// Service's hand-written Endpoints is never touched.
func TestReleaseEndpointsToController(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	ns := newNamespace(t, cp)
	for _, name := range []string{"web", "forced"} {
		mustService(t, cp, service(ns, name))
		base := map[string]int{"web": 40, "forced": 41}[name]
		mustPods(t, cp, ns, podSpec(name, 0, base), podSpec(name, 1, base), podSpec(name, 2, base))
		kubectl(t, cp, "slices", "sync", "svc/"+name, "-n", ns, "--with-endpoints").mustCode(t, 0)
	}
	mustService(t, cp, service(ns, "manual", func(s *corev1.Service) { s.Spec.Selector = nil }))
	handEndpoints(t, cp, ns, "manual", nil)
	manual := endpointsRaw(t, cp, ns, "manual")
	webBefore := endpointsRaw(t, cp, ns, "web")
	ours := readyAddresses(t, cp, ns, "web")
	if len(ours) != 3 {
		t.Fatalf("our Endpoints list %v", ours)
	}

	// The controllers are down: refused, nothing changes.
	r := kubectl(t, cp, "slices", "release", "svc/web", "svc/manual", "-n", ns).mustCode(t, 1)
	if !strings.Contains(r.Stderr, "endpoints "+ns+"/web not released") || !strings.Contains(r.Stderr, "has not taken it over") {
		t.Errorf("release does not refuse the Endpoints:\n%s", r.Stderr)
	}
	if endpointsRaw(t, cp, ns, "web") != webBefore || endpointsRaw(t, cp, ns, "manual") != manual {
		t.Fatal("a refused release changed an Endpoints object")
	}

	// --force: only our label goes; every address stays.
	forcedBefore := readyAddresses(t, cp, ns, "forced")
	kubectl(t, cp, "slices", "release", "svc/forced", "-n", ns, "--force").mustCode(t, 0)
	ep, err := cp.Admin.CoreV1().Endpoints(ns).Get(ctx, "forced", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, marked := ep.Labels[endpointsManagedByLabel]; marked || strings.Join(readyAddresses(t, cp, ns, "forced"), ",") != strings.Join(forcedBefore, ",") {
		t.Errorf("--force: labels %v, addresses %v (had %v)", ep.Labels, readyAddresses(t, cp, ns, "forced"), forcedBefore)
	}

	// The controllers come back; release waits for the takeover while a
	// poller watches the ready addresses v1 Endpoints consumers see.
	poller := startCountPoller(func() (int, error) {
		ep, err := cp.Admin.CoreV1().Endpoints(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return 0, err
		}
		n := 0
		for _, s := range ep.Subsets {
			n += len(s.Addresses)
		}
		return n, nil
	})
	done := make(chan result, 1)
	go func() {
		done <- kubectl(t, cp, "slices", "release", "svc/web", "svc/manual", "-n", ns, "--wait=90s")
	}()
	time.Sleep(2 * time.Second) // release is waiting
	if err := cp.StartControllers(ctx, "endpointslice-controller", "endpoints-controller"); err != nil {
		t.Fatal(err)
	}
	r = (<-done).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "service "+ns+"/web released after waiting") ||
		!strings.Contains(r.Stdout, "endpoints "+ns+"/web released: kube-controller-manager's Endpoints controller has taken it over") {
		t.Errorf("release output:\n%s\n%s", r.Stdout, r.Stderr)
	}
	time.Sleep(time.Second)
	poller.finish(t)
	ep, err = cp.Admin.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager marks the Endpoints it writes from v1.33 on;
	// before, its takeover replaces the labels with the Service's own, so our
	// mark is gone and no other takes its place.
	marks := serverMinor(t, cp) >= 33
	wantMark := map[bool]string{true: "endpoint-controller", false: ""}[marks]
	if got := ep.Labels[endpointsManagedByLabel]; got != wantMark {
		t.Errorf("web's Endpoints carry %s=%q after release, want %q", endpointsManagedByLabel, got, wantMark)
	}
	if got := readyAddresses(t, cp, ns, "web"); strings.Join(got, ",") != strings.Join(ours, ",") {
		t.Errorf("the controller publishes %v, we published %v", got, ours)
	}
	if endpointsRaw(t, cp, ns, "manual") != manual {
		t.Error("the selector-less Service's hand-written Endpoints changed")
	}
	// The forced one was taken over too, by the controller. Before v1.33 the
	// controller has nothing to rewrite there (right addresses, the
	// Service's labels) and leaves it as --force left it.
	if marks {
		waitFor(t, 60*time.Second, "the controller to take over forced's Endpoints", func() bool {
			ep, err := cp.Admin.CoreV1().Endpoints(ns).Get(ctx, "forced", metav1.GetOptions{})
			return err == nil && ep.Labels[endpointsManagedByLabel] == "endpoint-controller"
		})
	} else if got := readyAddresses(t, cp, ns, "forced"); strings.Join(got, ",") != strings.Join(forcedBefore, ",") {
		t.Errorf("forced's Endpoints list %v, had %v", got, forcedBefore)
	}
	// Nothing of ours is left: a second release says so.
	kubectl(t, cp, "slices", "release", "--all", "-n", ns).mustCode(t, 0)
}

// readyAddresses lists the ready IPs of a Service's Endpoints, sorted.
func readyAddresses(t *testing.T, cp *controlplane.ControlPlane, ns, name string) []string {
	t.Helper()
	ep, err := cp.Admin.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			out = append(out, a.IP)
		}
	}
	sort.Strings(out)
	return out
}
