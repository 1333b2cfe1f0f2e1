package explain

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Each Pod is judged by the Services that select it, each planned with
// that Pod alone and its own slices; one Pod not published as desired
// makes the whole run out of sync.
func TestBuildPods(t *testing.T) {
	published := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build()
	missing := testutil.NewPod("shop", "web-2").Label("app", "web").Node("node-a").IP("10.0.0.2").Build()
	alone := testutil.NewPod("shop", "db-0").Label("app", "db").Build()
	live := liveSlice("web-abc", reconcile.DefaultManagedBy, 8080, ep("10.0.0.1", "web-1", true))
	in := PodsInput{Pods: []*corev1.Pod{published, missing, alone}, Services: []*corev1.Service{webService("web")}, Nodes: nodeA,
		SlicesOf: func(svc *corev1.Service) []*discovery.EndpointSlice { return []*discovery.EndpointSlice{live} }}
	var planned [][]*corev1.Pod
	viewer := func(in reconcile.Input) (ServiceView, error) {
		planned = append(planned, in.Pods)
		return view(t, in.Service, in.Pods, in.Slices...), nil
	}
	reports, inSync, err := BuildPods(in, viewer, "local", Options{ManagedBy: reconcile.DefaultManagedBy})
	if err != nil || inSync || len(reports) != 3 {
		t.Fatalf("%d reports, in sync %v, %v", len(reports), inSync, err)
	}
	if len(planned) != 2 || len(planned[0]) != 1 || planned[0][0] != published || planned[1][0] != missing {
		t.Errorf("planned %v: want each selected Pod alone", planned)
	}
	for i, want := range []bool{true, false, true} {
		if r := reports[i]; r.InSync != want || r.Source != "local" {
			t.Errorf("%s: in sync %v, source %q; want %v, local", r.Pod.Name, r.InSync, r.Source, want)
		}
	}
	if _, _, err := BuildPods(in, func(reconcile.Input) (ServiceView, error) { return ServiceView{}, errors.New("no plan") }, "cluster", Options{}); err == nil {
		t.Error("a Service that cannot be planned is no error")
	}
}

// An address's Services are each planned with the holders of their own
// namespace.
func TestIPViews(t *testing.T) {
	holder := testutil.NewPod("shop", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build()
	elsewhere := testutil.NewPod("other", "web-1").Label("app", "web").Node("node-a").IP("10.0.0.1").Build()
	viewer := func(in reconcile.Input) (ServiceView, error) { return view(t, in.Service, in.Pods, in.Slices...), nil }
	views, err := IPViews([]*corev1.Service{webService("web")}, []*corev1.Pod{holder, elsewhere}, nil, nodeA, viewer)
	if err != nil || len(views) != 1 || len(views[0].Input.Pods) != 1 || views[0].Input.Pods[0] != holder {
		t.Errorf("views %+v, %v", views, err)
	}
}
