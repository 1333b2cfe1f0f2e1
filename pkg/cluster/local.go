package cluster

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Manifests holds the objects read from files: a `kubectl get -o yaml` dump,
// a `kubectl cluster-info dump` directory, or hand-written manifests.
type Manifests struct {
	Services []*corev1.Service
	Pods     []*corev1.Pod
	Nodes    []*corev1.Node
	Slices   []*discovery.EndpointSlice
	// Endpoints are v1 Endpoints objects (explain --ip).
	Endpoints []*corev1.Endpoints

	// defaulted records what ApplyDefaults set, per object.
	defaulted map[any][]string
}

// Service finds a Service by namespace and name.
func (m *Manifests) Service(ns, name string) *corev1.Service {
	for _, s := range m.Services {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

// Namespaces lists the namespaces holding a Service of that name.
func (m *Manifests) Namespaces(name string) []string {
	var out []string
	for _, s := range m.Services {
		if s.Name == name {
			out = append(out, s.Namespace)
		}
	}
	return out
}

// Input assembles planner input for a Service from the manifests, as Load
// does from the API. Nodes count as complete when the files hold any: a
// dump has all of them or none.
func (m *Manifests) Input(svc *corev1.Service) reconcile.Input {
	in := reconcile.Input{Service: svc, Nodes: reconcile.Nodes{ByName: map[string]*corev1.Node{}}}
	for _, s := range m.Slices {
		if s.Namespace == svc.Namespace && s.Labels[discovery.LabelServiceName] == svc.Name {
			in.Slices = append(in.Slices, s)
		}
	}
	if len(svc.Spec.Selector) > 0 {
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		for _, p := range m.Pods {
			if p.Namespace == svc.Namespace && sel.Matches(labels.Set(p.Labels)) {
				in.Pods = append(in.Pods, p)
			}
		}
	}
	for _, n := range m.Nodes {
		in.Nodes.ByName[n.Name] = n
	}
	in.Nodes.Complete = len(m.Nodes) > 0
	in.Nodes.Unreadable = len(m.Nodes) == 0
	return in
}

// PodsIn lists the Pods of a namespace, for near misses.
func (m *Manifests) PodsIn(ns string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range m.Pods {
		if p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}
