package cluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Manifests holds the objects read from files: a `kubectl get -o yaml` dump,
// a `kubectl cluster-info dump` directory, or hand-written manifests.
type Manifests struct {
	Services []*corev1.Service
	Pods     []*corev1.Pod
	Nodes    []*corev1.Node
	Slices   []*discovery.EndpointSlice

	// defaulted records what ApplyDefaults set, per object.
	defaulted map[any][]string
}

// ReadManifests reads every file (directories recursively) with
// cli-runtime's local builder, which needs no cluster and no kubeconfig.
// Objects of other kinds are ignored; Lists are expanded.
func ReadManifests(paths []string) (*Manifests, error) {
	infos, err := resource.NewLocalBuilder().Unstructured().ContinueOnError().
		FilenameParam(false, &resource.FilenameOptions{Filenames: paths, Recursive: true}).
		Flatten().Do().Infos()
	if err != nil {
		return nil, err
	}
	m := &Manifests{}
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		var target runtime.Object
		switch u.GroupVersionKind().GroupKind().String() {
		case "Service":
			s := &corev1.Service{}
			m.Services, target = append(m.Services, s), s
		case "Pod":
			p := &corev1.Pod{}
			m.Pods, target = append(m.Pods, p), p
		case "Node":
			n := &corev1.Node{}
			m.Nodes, target = append(m.Nodes, n), n
		case "EndpointSlice.discovery.k8s.io":
			s := &discovery.EndpointSlice{}
			m.Slices, target = append(m.Slices, s), s
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, target); err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", info.Source, u.GetKind(), u.GetName(), err)
		}
	}
	return m, nil
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
