package judge

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-slices/kubectl-slices/pkg/mirror"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// EndpointsLookup returns the Endpoints object of a Service, nil when there
// is none. One-shot commands GET it; the watch loop reads its informer cache
// (no API call per sync). A Forbidden error means it may not be read.
type EndpointsLookup func(ctx context.Context, namespace, name string) (*corev1.Endpoints, error)

// PlanService is the one planner choice every command makes (sync, the
// watch loop, check, explain, the webhook's findings): a Service without a
// selector is mirrored from its Endpoints object (pkg/mirror), any other is
// planned from its Pods (pkg/reconcile). Both give a reconcile.Plan for the
// same apply path and printers. Without an Endpoints object, a selectorless
// Service's slices we mirrored earlier are deleted, as upstream does. Under
// a controller's value, a Service with a selector also loses the mirrored
// slices left from before it had one (mirror.Leftovers), as upstream's
// mirroring controller deletes them.
//
// po.ManagedBy is the run's value; each kind of slice is planned under
// ManagedByOf (a controller's own value becomes the kind's controller's).
// A nil lookup means offline (explain --local, the webhook): no Endpoints
// object can be read, so pkg/reconcile's verdict (NoSelector) stands.
func PlanService(ctx context.Context, lookup EndpointsLookup, in reconcile.Input, po reconcile.Options) (*reconcile.Plan, error) {
	svc := in.Service
	value := po.ManagedBy
	if svc != nil {
		po.ManagedBy = ManagedByOf(svc, po.ManagedBy)
	}
	if !mirror.Applies(svc) {
		plan, err := reconcile.Compute(in, po)
		if err == nil {
			deleteLeftovers(plan, in, value)
		}
		return plan, err
	}
	if lookup == nil {
		return reconcile.Compute(in, po)
	}
	ep, err := lookup(ctx, svc.Namespace, svc.Name)
	if apierrors.IsForbidden(err) {
		// Not allowed to read Endpoints: plan as before mirroring existed,
		// and say why nothing is mirrored.
		plan, perr := reconcile.Compute(in, po)
		if perr == nil {
			plan.Warnings = append(plan.Warnings, reconcile.Warning{Reason: mirror.EndpointsUnreadable, Object: "endpoints/" + svc.Name,
				Message: "cannot read the Service's Endpoints object (forbidden): its slices are not mirrored"})
		}
		return plan, perr
	}
	if err != nil {
		return nil, err
	}
	plan, err := mirror.Compute(mirror.Input{Service: svc, Endpoints: ep, Slices: in.Slices},
		mirror.Options{ManagedBy: po.ManagedBy, MaxEndpointsPerSubset: mirror.DefaultMaxEndpointsPerSubset})
	if err == nil && ep == nil && plan.InSync() {
		// Nothing mirrored and nothing to clean up: the reconcile planner's
		// verdict (NoSelector, ExternalName) says more.
		return reconcile.Compute(in, po)
	}
	return plan, err
}

// deleteLeftovers adds to a Service's plan the deletion of its mirrored
// slices left from before it had a selector (mirror.Leftovers), when the
// run writes the mirroring controller's value: a run under a controller's
// value stands in for both controllers, and the mirroring one deletes
// them. Under any other value they are not ours, and stay.
func deleteLeftovers(plan *reconcile.Plan, in reconcile.Input, value string) {
	if !reconcile.IsOurs(reconcile.MirroringManagedBy, value) {
		return
	}
	if left := mirror.Leftovers(in.Service, in.Slices); len(left) > 0 {
		plan.Delete = append(append([]*discovery.EndpointSlice(nil), plan.Delete...), left...)
	}
}

// ManagedByOf is the managed-by value svc's slices carry in a run under
// value (reconcile.ManagedByFor, by the kind PlanService plans svc as).
func ManagedByOf(svc *corev1.Service, value string) string {
	return reconcile.ManagedByFor(value, mirror.Applies(svc))
}

// ControllerOf is the manager whose slices publish svc when
// kube-controller-manager runs: the mirroring controller for a Service
// without selector, else the EndpointSlice controller (ManagedByOf of the
// EndpointSlice controller's value). Standby, release and explain's
// "behind" all judge against it.
func ControllerOf(svc *corev1.Service) string {
	return ManagedByOf(svc, reconcile.ControllerManagedBy)
}
