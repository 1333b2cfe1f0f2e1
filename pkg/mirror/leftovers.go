package mirror

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Leftovers are the mirrored slices a Service with a selector still has:
// those labelled with its name and the mirroring controller's value,
// whatever their owner, not being deleted. Upstream's mirroring controller
// deletes them once the Service has a selector (syncEndpoints: "Service now
// has selector, cleaning up any mirrored EndpointSlices"), choosing them
// by these two labels alone (deleteMirroredSlices,
// endpointSlicesMirroredForService), so they must not outlive the
// selector: the EndpointSlice controller's slices publish the Service from
// then on. A
// Service without a selector (Applies) has none. The result is sorted by
// name; the input is not modified.
func Leftovers(svc *corev1.Service, slices []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	if svc == nil || Applies(svc) {
		return nil
	}
	var out []*discovery.EndpointSlice
	for _, s := range slices {
		if s == nil || s.Namespace != svc.Namespace || s.Labels[discovery.LabelServiceName] != svc.Name ||
			s.Labels[discovery.LabelManagedBy] != reconcile.MirroringManagedBy || s.DeletionTimestamp != nil {
			continue
		}
		out = append(out, s)
	}
	sortByName(out)
	return out
}
