package cluster

import (
	"context"

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
