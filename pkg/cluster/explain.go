package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// What explain reads besides the planner's input, from the cluster or
// from manifests.

// LoadNearMisses is Load, and, when svc's selector matches no Pod, every
// Pod of its namespace: explain lists those one label away.
func (r Reader) LoadNearMisses(ctx context.Context, svc *corev1.Service) (reconcile.Input, []*corev1.Pod, error) {
	in, err := r.Load(ctx, svc)
	if err != nil || len(in.Pods) > 0 || len(svc.Spec.Selector) == 0 {
		return in, nil, err
	}
	pods, err := r.Pods(ctx, svc.Namespace, "")
	return in, pods, err
}

// ControllerEndpoints is svc's v1 Endpoints object when kube-controller-
// manager's Endpoints controller wrote it; nil when svc has no selector
// (the controller writes none), when there is none, or when it cannot be
// read: explain's other findings do not depend on it.
func (r Reader) ControllerEndpoints(ctx context.Context, svc *corev1.Service) *corev1.Endpoints {
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return nil
	}
	ep, err := r.Client.CoreV1().Endpoints(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil || ep.Labels[endpoints.LabelManagedBy] != endpoints.ControllerManagedBy {
		return nil
	}
	return ep
}

// Find finds a Service named name: in ns or, unless pinned (the namespace
// was given), in the one namespace of the manifests that holds a Service of
// that name. It returns the namespace the Service is in, or was looked for
// in when not found (nil).
func (m *Manifests) Find(ns, name string, pinned bool) (string, *corev1.Service) {
	if svc := m.Service(ns, name); svc != nil || pinned {
		return ns, svc
	}
	if found := m.Namespaces(name); len(found) == 1 {
		return found[0], m.Service(found[0], name)
	}
	return ns, nil
}

// Local is one Service's inputs read from manifests, as the API server
// would have stored them.
type Local struct {
	Input reconcile.Input
	// NamespacePods are every Pod of the Service's namespace (near misses).
	NamespacePods []*corev1.Pod
	// Defaulted names what was filled in as the API server would.
	Defaulted []string
}

// ServiceNotFoundError says the manifests hold no Service of that name in
// Namespace (the one it was looked for in last).
type ServiceNotFoundError struct{ Namespace, Name string }

func (e *ServiceNotFoundError) Error() string {
	return fmt.Sprintf("service %s/%s not found", e.Namespace, e.Name)
}

// Load defaults the manifests (objects without a namespace go to ns),
// refuses what the API server would (Validate's error), finds the Service
// (Find) and assembles its inputs.
func (m *Manifests) Load(ns, name string, pinned bool) (Local, error) {
	m.ApplyDefaults(ns)
	if err := m.Validate(); err != nil {
		return Local{}, err
	}
	ns, svc := m.Find(ns, name, pinned)
	if svc == nil {
		return Local{}, &ServiceNotFoundError{Namespace: ns, Name: name}
	}
	in := m.Input(svc)
	return Local{Input: in, NamespacePods: m.PodsIn(ns), Defaulted: m.Defaulted(svc, in.Pods, in.Slices)}, nil
}
