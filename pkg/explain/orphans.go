package explain

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OrphanReason says why a slice of ours no longer belongs to a Service.
type OrphanReason string

const (
	// ServiceGone: no Service of the slice's kubernetes.io/service-name.
	ServiceGone OrphanReason = "ServiceGone"
	// NoSelector: the Service has no selector any more; whoever
	// manages its endpoints by hand owns its slices.
	NoSelector OrphanReason = "NoSelector"
	// ExternalName: ExternalName Services have no endpoints.
	ExternalName OrphanReason = "ExternalName"
	// OwnerMismatch: the slice's owner reference names a Service of the
	// same name but another UID: the Service was deleted and re-created,
	// and the garbage collector (down too?) did not remove the slice.
	OwnerMismatch OrphanReason = "OwnerMismatch"
)

// Orphan is one slice of ours to prune.
type Orphan struct {
	Slice   *discovery.EndpointSlice
	Service string
	Reason  OrphanReason
	Message string
}

// Orphans finds, among slices, those of managedBy that no longer belong to a
// Service: its Service is gone, has no selector, is ExternalName, or carries
// another UID than the slice's owner reference. service looks a Service up
// (nil when there is none). Slices mirrored from a selector-less Service's
// Endpoints object are live, not orphans. Slices of any other manager are never returned;
// neither are slices being deleted or slices not labelled for a Service.
// The result is sorted by namespace and name.
func Orphans(slices []*discovery.EndpointSlice, managedBy string, service func(namespace, name string) *corev1.Service) []Orphan {
	var out []Orphan
	for _, s := range slices {
		name, labelled := s.Labels[discovery.LabelServiceName]
		if s.Labels[discovery.LabelManagedBy] != managedBy || !labelled || s.DeletionTimestamp != nil {
			continue
		}
		o := Orphan{Slice: s, Service: name}
		svc := service(s.Namespace, name)
		switch {
		case svc != nil && len(svc.Spec.Selector) == 0 && MirrorOf(s, svc):
			// Mirrored from the Service's Endpoints object (sync
			// --with-endpoints, pkg/mirror): live, and sync deletes it
			// once the Endpoints goes or asks to skip mirroring.
			continue
		case svc == nil:
			o.Reason, o.Message = ServiceGone, fmt.Sprintf("service %s/%s no longer exists", s.Namespace, name)
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			o.Reason, o.Message = ExternalName, fmt.Sprintf("service %s/%s is ExternalName: it has no endpoints", s.Namespace, name)
		case len(svc.Spec.Selector) == 0:
			o.Reason, o.Message = NoSelector, fmt.Sprintf("service %s/%s has no selector: its endpoints are managed by hand", s.Namespace, name)
		default:
			uid, mismatch := ownerMismatch(s, svc)
			if !mismatch {
				continue
			}
			o.Reason, o.Message = OwnerMismatch, fmt.Sprintf("owned by an earlier service %s/%s (uid %s; the current one is %s)", s.Namespace, name, uid, svc.UID)
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Slice.Namespace != out[j].Slice.Namespace {
			return out[i].Slice.Namespace < out[j].Slice.Namespace
		}
		return out[i].Slice.Name < out[j].Slice.Name
	})
	return out
}

// ownerMismatch: the slice has a Service owner reference, and none of them
// carries the Service's UID.
func ownerMismatch(s *discovery.EndpointSlice, svc *corev1.Service) (string, bool) {
	other := ""
	for _, ref := range s.OwnerReferences {
		if ref.Kind != "Service" {
			continue
		}
		if ref.UID == svc.UID {
			return "", false
		}
		other = string(ref.UID)
	}
	return other, other != ""
}

// MirrorOf: the slice's controller is an Endpoints object of the Service's
// name, as pkg/mirror writes them.
func MirrorOf(s *discovery.EndpointSlice, svc *corev1.Service) bool {
	ref := metav1.GetControllerOf(s)
	return ref != nil && ref.Kind == "Endpoints" && ref.APIVersion == "v1" && ref.Name == svc.Name
}
