package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The repair lifecycle, start to end, on a cluster of its own (check -A sees
// every namespace): kube-controller-manager down → check finds the Service
// → sync → the controller's EndpointSlice controller starts → sync holds
// back → release hands back → only the controller's slices remain → check
// is clean. A second Service is released by a release --wait started while
// the controller was still down: it deletes ours only once the controller's
// slices publish the same endpoints. A poller counting ready endpoints every 100 ms, as kube-proxy
// merges them, never sees the Service lose one.
func TestRepairLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	ns := newNamespace(t, cp)
	mustService(t, cp, service(ns, "web"))
	for i := 0; i < 4; i++ {
		p := podSpec("web", i, 12)
		p.Ready = i != 3
		mustPods(t, cp, ns, p)
	}
	// A second Service, handed back by a release started while the
	// controller is still down.
	mustService(t, cp, service(ns, "api"))
	mustPods(t, cp, ns, podSpec("api", 0, 14), podSpec("api", 1, 14))

	// 1. The controller is down: no slices at all.
	r := kubectl(t, cp, "slices", "check", "-A").mustCode(t, 1)
	if !strings.Contains(r.Stdout, ns) || !strings.Contains(r.Stdout, "web") || !strings.Contains(r.Stdout, "NoSlices") ||
		!strings.Contains(r.Stdout, "kubectl slices sync svc/web -n "+ns) {
		t.Fatalf("check -A does not name the Service and its repair:\n%s", r.Stdout)
	}

	t.Logf("check -A, controller down:\n%s", r.Stdout)

	// 2. sync repairs; from here on the Service may never lose a ready
	// endpoint (the poller runs from before the sync to the end).
	poller := startReadyPoller(cp, ns, "web")
	defer func() {
		if poller != nil {
			poller.finish(t)
		}
	}()
	apiPoller := startReadyPoller(cp, ns, "api")
	defer func() {
		if apiPoller != nil {
			apiPoller.finish(t)
		}
	}()
	kubectl(t, cp, "slices", "sync", "svc/web", "svc/api", "-n", ns).mustCode(t, 0)
	if n, _ := readyEndpoints(cp, ns, "web"); n != 3 {
		t.Fatalf("after sync: %d ready endpoints, want 3", n)
	}
	kubectl(t, cp, "slices", "check", "-A").mustCode(t, 0)

	// 3. release --wait, started while the controller is down, waits.
	released := make(chan result, 1)
	go func() { released <- kubectl(t, cp, "slices", "release", "svc/api", "-n", ns, "--wait=90s") }()
	time.Sleep(time.Second)

	// The controller comes back and publishes the same endpoints.
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	ours := canonical(listSlices(t, cp, ns, "web", oursLabel))
	waitFor(t, 60*time.Second, "kube-controller-manager's slices equal ours", func() bool {
		return canonical(listSlices(t, cp, ns, "web", controllerLabel)) == ours
	})
	select {
	case r = <-released:
	case <-time.After(90 * time.Second):
		t.Fatal("release --wait of svc/api did not return")
	}
	r.mustCode(t, 0)
	if !strings.Contains(r.Stdout, "service "+ns+"/api released after waiting") {
		t.Errorf("release --wait did not wait:\n%s", r.Stdout)
	}
	for _, s := range listSlices(t, cp, ns, "api", "") {
		if s.Labels[discovery.LabelManagedBy] != controllerLabel {
			t.Errorf("svc/api: slice %s of %s remains after release", s.Name, s.Labels[discovery.LabelManagedBy])
		}
	}
	r = kubectl(t, cp, "slices", "check", "-A").mustCode(t, 1)
	if !strings.Contains(r.Stdout, "HandBack") || !strings.Contains(r.Stdout, "kubectl slices release svc/web -n "+ns) {
		t.Errorf("check -A with both managers does not point to release:\n%s", r.Stdout)
	}

	syncHoldsBackWhileControllerIsCurrent(t, cp, ns)
	releaseAllHandsBackEveryService(t, cp, ns)

	// 6. Healthy again. Give the poller a last look.
	kubectl(t, cp, "slices", "check", "-A").mustCode(t, 0)
	time.Sleep(time.Second)
	poller.finish(t)
	apiPoller.finish(t)
	poller, apiPoller = nil, nil
}

// syncHoldsBackWhileControllerIsCurrent: with kube-controller-manager
// publishing svc/web correctly, sync writes nothing and points to release.
func syncHoldsBackWhileControllerIsCurrent(t *testing.T, cp *controlplane.ControlPlane, ns string) {
	// 4. sync now writes nothing, says why, and points to release.
	before := allSliceVersions(t, cp, ns)
	r := kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "kube-controller-manager publishes svc/web correctly") || !strings.Contains(r.Stdout, "kubectl slices release svc/web -n "+ns) {
		t.Errorf("second sync does not hold back:\n%s", r.Stdout)
	}
	if after := allSliceVersions(t, cp, ns); !reflect.DeepEqual(before, after) {
		t.Errorf("sync wrote although the controller is current: %v -> %v", before, after)
	}
}

// releaseAllHandsBackEveryService: release --all -A leaves only
// kube-controller-manager's slices for svc/web.
func releaseAllHandsBackEveryService(t *testing.T, cp *controlplane.ControlPlane, ns string) {
	// 5. Hand back, every Service of the cluster at once.
	r := kubectl(t, cp, "slices", "release", "--all", "-A", "--wait=60s").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "service "+ns+"/web released") || !strings.Contains(r.Stderr, "1 released, 0 refused") {
		t.Errorf("release output:\n%s\n%s", r.Stdout, r.Stderr)
	}
	all := listSlices(t, cp, ns, "web", "")
	for _, s := range all {
		if s.Labels[discovery.LabelManagedBy] != controllerLabel {
			t.Errorf("slice %s of %s remains after release", s.Name, s.Labels[discovery.LabelManagedBy])
		}
	}
	if len(all) == 0 {
		t.Fatal("no slices remain")
	}
}

// release refuses, with the difference endpoint by endpoint, when the
// controller's slices disagree with ours; deletes nothing on a dry run;
// waits with --wait until they agree. The controller's slices here are
// written by the test under its managed-by value: no controller runs on
// the shared cluster.
func TestReleaseRefusesOnDifference(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	for i := 0; i < 3; i++ {
		mustPods(t, shared, ns, podSpec("web", i, 13))
	}
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	poller := startReadyPoller(shared, ns, "web")

	// No controller slices at all: refused.
	r := slices(t, "release", "svc/web", "-n", ns).mustCode(t, 1)
	if !strings.Contains(r.Stderr, "publishes no slices for svc/web") {
		t.Errorf("refusal without controller slices:\n%s", r.Stderr)
	}

	ours := listSlices(t, shared, ns, "web", oursLabel)
	theirs := copySlice(t, shared, ours[0], "web-kcm", controllerLabel, func(s *discovery.EndpointSlice) {
		f := false
		s.Endpoints[1].Conditions.Ready = &f // one endpoint not ready
		s.Endpoints = s.Endpoints[:2]        // one missing
	})
	before := sliceDump(t, shared, ns)
	r = slices(t, "release", "svc/web", "-n", ns).mustCode(t, 1)
	for _, want := range []string{
		"differ from ours in 2 endpoints",
		ours[0].Endpoints[1].Addresses[0] + " (pod " + ours[0].Endpoints[1].TargetRef.Name + ") ports http:8080/TCP: kubectl-slices has ready=true",
		"kube-controller-manager has ready=false",
		ours[0].Endpoints[2].Addresses[0] + " (pod " + ours[0].Endpoints[2].TargetRef.Name + ") ports http:8080/TCP: published only by kubectl-slices",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("refusal lacks %q:\n%s", want, r.Stderr)
		}
	}
	if after := sliceDump(t, shared, ns); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused release changed slices")
	}
	t.Logf("refusal:\n%s", r.Stderr)

	// --wait: the controller catches up two seconds later.
	go func() {
		time.Sleep(2 * time.Second)
		fixed := theirs.DeepCopy()
		fixed.Endpoints = ours[0].Endpoints
		if _, err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Update(context.Background(), fixed, metav1.UpdateOptions{}); err != nil {
			t.Errorf("update controller slice: %v", err)
		}
	}()
	// A dry run first would race the update; wait, then dry-run, then release.
	r = slices(t, "release", "svc/web", "-n", ns, "--wait=30s", "--dry-run=server").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "would be released (server dry run) after waiting") || !strings.Contains(r.Stdout, ours[0].Name+" deleted (server dry run)") {
		t.Errorf("dry run after waiting:\n%s", r.Stdout)
	}
	if got := listSlices(t, shared, ns, "web", oursLabel); len(got) != 1 {
		t.Fatalf("dry run deleted our slice: %d left", len(got))
	}
	slices(t, "release", "svc/web", "-n", ns).mustCode(t, 0)
	if got := listSlices(t, shared, ns, "web", oursLabel); len(got) != 0 {
		t.Errorf("%d of our slices left after release", len(got))
	}
	if got := listSlices(t, shared, ns, "web", controllerLabel); len(got) != 1 {
		t.Errorf("the controller's slice was touched: %d left", len(got))
	}
	poller.finish(t)
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubectl completes the new commands and release's Service names.
func TestLifecycleCompletion(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	r := kubectl(t, shared, "__complete", "slices", "").mustCode(t, 0)
	for _, want := range []string{"check", "release", "prune"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("subcommands: %q lacks %s", r.Stdout, want)
		}
	}
	r = kubectl(t, shared, "__complete", "slices", "release", "-n", ns, "svc/").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "svc/web") {
		t.Errorf("release: service names: %q", r.Stdout)
	}
	r = kubectl(t, shared, "__complete", "slices", "check", "-o", "").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "json") || !strings.Contains(r.Stdout, "yaml") {
		t.Errorf("check -o values: %q", r.Stdout)
	}
}
