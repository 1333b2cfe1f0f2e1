package explain

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Viewer plans one Service's input as the command does (its Endpoints
// lookup, its options; it prints the planner's warnings): explain pod and
// --ip judge each Service from the view it returns.
type Viewer func(reconcile.Input) (ServiceView, error)

// PodsInput is what explain pod/NAME reads: the Pods, every Service of
// their namespace, the Nodes, and the slices of each Service.
type PodsInput struct {
	Pods     []*corev1.Pod
	Services []*corev1.Service
	Nodes    reconcile.Nodes
	SlicesOf func(*corev1.Service) []*discovery.EndpointSlice
}

// BuildPods explains each Pod (BuildPod) against the Services that select
// it, each planned by view with that Pod alone, and its near misses;
// source is each report's Source. inSync says every selecting Service
// publishes every Pod as desired.
func BuildPods(in PodsInput, view Viewer, source string, o Options) (reports []PodReport, inSync bool, err error) {
	reports = make([]PodReport, 0, len(in.Pods))
	inSync = true
	for _, pod := range in.Pods {
		selecting, near := SelectingServices(pod, in.Services)
		views := make([]ServiceView, 0, len(selecting))
		for _, svc := range selecting {
			v, err := view(reconcile.Input{Service: svc, Pods: []*corev1.Pod{pod}, Nodes: in.Nodes, Slices: in.SlicesOf(svc)})
			if err != nil {
				return nil, false, err
			}
			views = append(views, v)
		}
		r := BuildPod(pod, views, near, o)
		r.Source = source
		inSync = inSync && r.InSync
		reports = append(reports, r)
	}
	return reports, inSync, nil
}

// IPViews plans each of services with the holders of its namespace
// (IPView), by view: the Views of an IPInput.
func IPViews(services []*corev1.Service, holders []*corev1.Pod, slices []*discovery.EndpointSlice, nodes reconcile.Nodes, view Viewer) ([]ServiceView, error) {
	views := make([]ServiceView, 0, len(services))
	for _, svc := range services {
		v, err := view(IPView(svc, holders, slices, nodes))
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	return views, nil
}
