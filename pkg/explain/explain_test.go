package explain

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func podWith(name string, labels map[string]string) *corev1.Pod {
	return testutil.NewPod("shop", name).Labels(labels).Build()
}

func TestNearMisses(t *testing.T) {
	pods := []*corev1.Pod{
		podWith("a", map[string]string{"app": "api"}),
		podWith("b", map[string]string{"app": "Web"}),
		podWith("c", map[string]string{"tier": "x"}),
	}
	got := NearMisses(map[string]string{"app": "web"}, pods)
	if len(got) != 2 || got[0].Pod != "b" || got[1].Pod != "a" {
		t.Errorf("one-label selector: %+v", got)
	}
	got = NearMisses(map[string]string{"app": "web", "tier": "x"}, []*corev1.Pod{podWith("c", map[string]string{"tier": "x"})})
	if len(got) != 1 || !got[0].Missing || got[0].Label != "app" {
		t.Errorf("two-label selector, label missing: %+v", got)
	}
}

// A Service with two ready Pods; live slices are built by the test.
func setup(live ...*discovery.EndpointSlice) (reconcile.Input, *reconcile.Plan) {
	svc := testutil.NewService("shop", "web").UID("svc-uid").ClusterIP("10.96.0.1").Selector("app", "web").Port("http", 80, "8080").Build()
	pods := []*corev1.Pod{
		testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build(),
		testutil.NewPod("shop", "web-2").Label("app", "web").Node("node-a").IP("10.0.0.2").Build(),
	}
	in := reconcile.Input{Service: svc, Pods: pods, Slices: live,
		Nodes: reconcile.Nodes{ByName: map[string]*corev1.Node{"node-a": testutil.NewNode("node-a").Build()}}}
	plan, err := reconcile.Compute(in, reconcile.DefaultOptions())
	if err != nil {
		panic(err)
	}
	return in, plan
}

func liveSlice(name, managedBy string, port int32, eps ...discovery.Endpoint) *discovery.EndpointSlice {
	return testutil.NewSlice("shop", name).Service("web").ManagedBy(managedBy).OwnedBy(testutil.NewService("shop", "web").UID("svc-uid").Build()).
		Port("http", port, corev1.ProtocolTCP).Endpoints(eps...).Build()
}

func ep(ip, pod string, ready bool) discovery.Endpoint {
	serving, term, node := ready, false, "node-a"
	return discovery.Endpoint{Addresses: []string{ip}, NodeName: &node,
		Conditions: discovery.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &term},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: pod, UID: types.UID("uid-" + pod)}}
}

func kinds(r Report) map[DriftKind]int {
	out := map[DriftKind]int{}
	for _, d := range r.Drift {
		out[d.Kind]++
	}
	return out
}

func TestDriftKinds(t *testing.T) {
	opts := Options{ManagedBy: reconcile.DefaultManagedBy, MaxEndpointsPerSlice: 100}
	good1, good2 := ep("10.0.0.1", "web-1", true), ep("10.0.0.2", "web-2", true)

	in, plan := setup(liveSlice("a", reconcile.DefaultManagedBy, 8080, good1, good2))
	if r := Build(in, plan, opts); !r.InSync || len(r.Drift) != 0 {
		t.Errorf("in sync: %+v", r.Drift)
	}
	in, plan = setup(liveSlice("a", reconcile.DefaultManagedBy, 8080, good1, good2), liveSlice("b", reconcile.DefaultManagedBy, 8080, good1))
	if k := kinds(Build(in, plan, opts)); k[Duplicate] != 1 {
		t.Errorf("duplicate: %v", k)
	}
	in, plan = setup(liveSlice("a", reconcile.DefaultManagedBy, 8080, good1, good2),
		liveSlice("k", reconcile.ControllerManagedBy, 8080, ep("10.0.0.1", "web-1", false), good2))
	if k := kinds(Build(in, plan, opts)); k[Conflict] != 1 || k[Changed] != 1 {
		t.Errorf("conflict: %v", k)
	}
	in, plan = setup(liveSlice("k", reconcile.ControllerManagedBy, 9090, good1, good2))
	r := Build(in, plan, opts)
	if k := kinds(r); k[Changed] != 2 || k[Missing] != 0 || r.InSync {
		t.Errorf("ports changed: %v", k)
	}
	in, plan = setup(liveSlice("k", reconcile.ControllerManagedBy, 8080, good1, good2, ep("10.0.0.9", "gone", true)))
	r = Build(in, plan, opts)
	if k := kinds(r); k[Stale] != 1 || r.Diagnosis.Command == "" {
		t.Errorf("stale: %v %+v", k, r.Diagnosis)
	}
}

// A slice with no managed-by label is named as such in the diagnosis, not
// as an empty manager.
func TestUnlabelledSliceNamed(t *testing.T) {
	opts := Options{ManagedBy: reconcile.DefaultManagedBy, MaxEndpointsPerSlice: 100}
	good1, good2 := ep("10.0.0.1", "web-1", true), ep("10.0.0.2", "web-2", true)
	in, plan := setup(liveSlice("a", reconcile.DefaultManagedBy, 8080, good1, good2),
		liveSlice("k", reconcile.ControllerManagedBy, 8080, good1, good2), liveSlice("x", "", 8080, ep("10.0.0.9", "gone", true)))
	r := Build(in, plan, opts)
	if !strings.Contains(r.Diagnosis.Summary, "slices of other managers ((no managed-by label))") {
		t.Errorf("diagnosis %q", r.Diagnosis.Summary)
	}
}
