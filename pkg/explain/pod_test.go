package explain

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

var nodeA = reconcile.Nodes{ByName: map[string]*corev1.Node{"node-a": testutil.NewNode("node-a").Build()}}

// view plans svc with the given Pods, as explain pod and --ip do.
func view(t *testing.T, svc *corev1.Service, pods []*corev1.Pod, live ...*discovery.EndpointSlice) ServiceView {
	t.Helper()
	in := reconcile.Input{Service: svc, Pods: pods, Slices: live, Nodes: nodeA}
	plan, err := reconcile.Compute(in, reconcile.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return ServiceView{Input: in, Plan: plan}
}

func webService(name string) *corev1.Service {
	return testutil.NewService("shop", name).UID("svc-uid").ClusterIP("10.96.0.1").Selector("app", "web").Port("http", 80, "8080").Build()
}

func TestSelectingServices(t *testing.T) {
	pod := testutil.NewPod("shop", "web-1").Labels(map[string]string{"app": "web", "tier": "front"}).Build()
	typo := testutil.NewService("shop", "typo").Selector("app", "web").Selector("tier", "frnt").Build()
	far := testutil.NewService("shop", "far").Selector("app", "api").Selector("tier", "back").Build()
	other := testutil.NewService("other", "web").Selector("app", "web").Build()
	none := testutil.NewService("shop", "manual").Build()
	matched, near := SelectingServices(pod, []*corev1.Service{typo, far, other, none, webService("web")})
	if len(matched) != 1 || matched[0].Name != "web" {
		t.Errorf("matched %v", matched)
	}
	if len(near) != 1 || near[0] != (ServiceNearMiss{Service: "typo", Label: "tier", Want: "frnt", Have: "front"}) {
		t.Errorf("near misses %+v", near)
	}
}

func TestBuildPodTwoServicesOneLacksPort(t *testing.T) {
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build()
	metrics := testutil.NewService("shop", "metrics").UID("m-uid").ClusterIP("10.96.0.2").Selector("app", "web").Port("metrics", 9090, "metrics").Build()
	published := liveSlice("web-abc", reconcile.DefaultManagedBy, 8080, ep("10.0.0.1", "web-1", true))
	r := BuildPod(pod, []ServiceView{view(t, metrics, []*corev1.Pod{pod}), view(t, webService("web"), []*corev1.Pod{pod}, published)}, nil, Options{ManagedBy: reconcile.DefaultManagedBy})
	if r.Schema != PodSchemaVersion || r.InSync || len(r.Services) != 2 {
		t.Fatalf("report %+v", r)
	}
	m, w := r.Services[0], r.Services[1]
	if m.Published || len(m.Decision.MissingPorts) != 1 || m.Decision.MissingPorts[0] != "metrics" || m.Decision.Notes[0].Reason != reconcile.PortNotFound {
		t.Errorf("metrics: %+v", m)
	}
	if !w.Published || len(w.Drift) != 0 || len(w.Publications) != 1 || !w.Publications[0].Desired || w.Publications[0].Role != "ours" {
		t.Errorf("web: %+v", w)
	}
	if r.Diagnosis != m.Diagnosis {
		t.Errorf("diagnosis %+v, want the metrics Service's", r.Diagnosis)
	}
}

func TestBuildPodDriftOnlyItsOwn(t *testing.T) {
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build()
	// Another Pod's endpoint in the slice is not this Pod's drift; this
	// Pod's, published not ready while it is ready, is.
	live := liveSlice("web-abc", reconcile.DefaultManagedBy, 8080, ep("10.0.0.1", "web-1", false), ep("10.0.0.9", "web-9", true))
	r := BuildPod(pod, []ServiceView{view(t, webService("web"), []*corev1.Pod{pod}, live)}, nil, Options{ManagedBy: reconcile.DefaultManagedBy})
	s := r.Services[0]
	if r.InSync || len(s.Drift) != 1 || s.Drift[0].Kind != Changed || len(s.Publications) != 1 || s.Publications[0].Desired {
		t.Errorf("report %+v", s)
	}
	if !strings.Contains(r.Diagnosis.Command, "kubectl slices sync svc/web -n shop") {
		t.Errorf("diagnosis %+v", r.Diagnosis)
	}
}

func TestBuildPodNoService(t *testing.T) {
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Build()
	r := BuildPod(pod, nil, []ServiceNearMiss{{Service: "web", Label: "app", Want: "Web", Have: "web"}}, Options{})
	if !r.InSync || len(r.Services) != 0 || !strings.Contains(r.Diagnosis.Summary, "nearest miss: svc/web wants app=Web, the Pod has app=web") {
		t.Errorf("report %+v", r)
	}
}

func TestBuildPodExcluded(t *testing.T) {
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-gone").IP("10.0.0.1").Build()
	r := BuildPod(pod, []ServiceView{view(t, webService("web"), []*corev1.Pod{pod})}, nil, Options{ManagedBy: reconcile.DefaultManagedBy})
	if r.InSync || r.Services[0].Published || r.Services[0].Decision.Reason != reconcile.NodeNotFound || r.Diagnosis.Command != "kubectl get node node-gone" {
		t.Errorf("report %+v", r)
	}
}

func TestBuildIPStaleAddress(t *testing.T) {
	addr := netip.MustParseAddr("10.0.0.1")
	fresh := testutil.NewPod("shop", "new-1").Label("app", "new").Node("node-a").IP("10.0.0.1").Build()
	stale := liveSlice("web-abc", reconcile.DefaultManagedBy, 8080, ep("10.0.0.1", "web-1", true))
	orphan := testutil.NewSlice("shop", "gone-xyz").Service("gone").ManagedBy("other").Port("http", 80, corev1.ProtocolTCP).Endpoints(ep("10.0.0.1", "web-1", true)).Build()
	r := BuildIP(IPInput{Address: addr, Namespace: "shop", Holders: []*corev1.Pod{fresh}, Slices: []*discovery.EndpointSlice{stale, orphan},
		Views: []ServiceView{view(t, webService("web"), []*corev1.Pod{fresh}, stale)}}, Options{ManagedBy: reconcile.DefaultManagedBy})
	if r.Schema != IPSchemaVersion || !r.Found || r.InSync || len(r.Holders) != 1 || r.Holders[0].Name != "new-1" || len(r.Publications) != 2 {
		t.Fatalf("report %+v", r)
	}
	for _, p := range r.Publications {
		if !p.Stale || p.Desired || !strings.Contains(strings.Join(p.Problems, ";"), "but pod new-1 holds the address now") {
			t.Errorf("publication %+v", p)
		}
	}
	if !strings.Contains(r.Publications[0].Problems[len(r.Publications[0].Problems)-1], "its Service gone does not exist") {
		t.Errorf("orphan %+v", r.Publications[0])
	}
	if !strings.Contains(r.Diagnosis.Summary, "stale publications name another Pod") {
		t.Errorf("diagnosis %+v", r.Diagnosis)
	}
}

func TestBuildIPAsDesired(t *testing.T) {
	addr := netip.MustParseAddr("fd00::1")
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("fd00:0::1").Build()
	svc := webService("web")
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies = "fd00:96::1", []string{"fd00:96::1"}, []corev1.IPFamily{corev1.IPv6Protocol}
	ready := true
	eps := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{NotReadyAddresses: []corev1.EndpointAddress{{IP: "fd00:0::1",
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "web-1"}}}}}}
	eps.Namespace, eps.Name, eps.Labels = "shop", "web", map[string]string{endpoints.LabelManagedBy: endpoints.ControllerManagedBy}
	v := view(t, svc, []*corev1.Pod{pod})
	r := BuildIP(IPInput{Address: addr, Holders: []*corev1.Pod{pod}, Endpoints: []*corev1.Endpoints{eps}, Views: []ServiceView{v}}, Options{ManagedBy: reconcile.DefaultManagedBy})
	// Not published by any slice: Missing; the Endpoints lists it not
	// ready while the Pod is ready: not desired.
	if r.Family != "IPv6" || r.InSync || len(r.Missing) != 1 || r.Missing[0] != "shop/web" || len(r.Publications) != 1 {
		t.Fatalf("report %+v", r)
	}
	if p := r.Publications[0]; p.Stale || p.Desired || *p.Ready || len(p.Problems) != 1 || !strings.Contains(p.Problems[0], "want "+map[bool]string{true: "true"}[ready]) {
		t.Errorf("endpoints publication %+v", p)
	}
	if r := BuildIP(IPInput{Address: netip.MustParseAddr("10.9.9.9")}, Options{}); r.Found || !r.InSync {
		t.Errorf("nothing: %+v", r)
	}
}

func TestBuildIPUnpublishedAndOrphaned(t *testing.T) {
	addr := netip.MustParseAddr("10.0.0.1")
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build()
	// Selected, ready, published by no manager: Missing, not in sync.
	r := BuildIP(IPInput{Address: addr, Holders: []*corev1.Pod{pod}, Views: []ServiceView{view(t, webService("web"), []*corev1.Pod{pod})}}, Options{ManagedBy: reconcile.DefaultManagedBy})
	if !r.Found || r.InSync || len(r.Missing) != 1 || len(r.Publications) != 0 || !strings.Contains(r.Diagnosis.Summary, "not published by shop/web although selected") {
		t.Errorf("unpublished: %+v", r)
	}
	// A slice of a Service that is gone, naming the Pod that holds the
	// address: not stale, still not desired.
	orphan := testutil.NewSlice("shop", "gone-xyz").Service("gone").ManagedBy("other").Port("http", 80, corev1.ProtocolTCP).Endpoints(ep("10.0.0.1", "web-1", true)).Build()
	r = BuildIP(IPInput{Address: addr, Holders: []*corev1.Pod{pod}, Slices: []*discovery.EndpointSlice{orphan}}, Options{ManagedBy: reconcile.DefaultManagedBy})
	if p := r.Publications[0]; p.Stale || p.Desired || r.InSync {
		t.Errorf("orphan: %+v", r)
	}
	// Published with no Pod holding the address: found, stale.
	r = BuildIP(IPInput{Address: addr, Slices: []*discovery.EndpointSlice{orphan}}, Options{ManagedBy: reconcile.DefaultManagedBy})
	if !r.Found || !r.Publications[0].Stale || !strings.Contains(r.Publications[0].Problems[0], "no Pod holds the address now") {
		t.Errorf("unheld: %+v", r)
	}
}

func TestAddressesCompareAsAddresses(t *testing.T) {
	addr := netip.MustParseAddr("fd00::1")
	pod := testutil.NewPod("shop", "web-1").IP("10.0.0.1", "FD00:0::1").Build()
	slice := testutil.NewSlice("shop", "web-abc").Service("web").Endpoints(ep("fd00:0:0::1", "web-1", true)).Build()
	if !PodHoldsAddress(pod, addr) || !HoldsAddress(slice, addr) || PodHoldsAddress(pod, netip.MustParseAddr("fd00::2")) {
		t.Error("an address written another way is not found")
	}
}
