package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var serviceKind = schema.GroupVersionKind{Version: "v1", Kind: "Service"}

// isReservedLabel reports the label keys the planner owns on a slice; a
// Service carrying them does not get to set them.
func isReservedLabel(key string) bool {
	return key == discovery.LabelServiceName || key == discovery.LabelManagedBy || key == corev1.IsHeadlessService
}

// ServiceLabels returns the labels a slice carries of its Service, as the
// planner copied them: all but the keys it owns. They tell what a deleted
// Service's labels were when its slices were last written.
func ServiceLabels(slice *discovery.EndpointSlice) map[string]string {
	out := make(map[string]string, len(slice.Labels))
	for k, v := range slice.Labels {
		if !isReservedLabel(k) {
			out[k] = v
		}
	}
	return out
}

// isServiceIPSet is upstream's test for a headless Service: an empty
// clusterIP counts as headless too.
func isServiceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != ""
}

// labeler computes slice labels from a Service, once per plan.
type labeler struct {
	svcLabels map[string]string // the Service's non-reserved labels
	want      map[string]string // svcLabels plus the reserved ones
}

func newLabeler(svc *corev1.Service, managedBy string) labeler {
	l := labeler{svcLabels: map[string]string{}, want: map[string]string{}}
	for k, v := range svc.Labels {
		if !isReservedLabel(k) {
			l.svcLabels[k] = v
			l.want[k] = v
		}
	}
	if !isServiceIPSet(svc) {
		l.want[corev1.IsHeadlessService] = ""
	}
	l.want[discovery.LabelServiceName] = svc.Name
	l.want[discovery.LabelManagedBy] = managedBy
	return l
}

// labels returns a fresh copy of the labels a slice should carry.
func (l labeler) labels() map[string]string {
	out := make(map[string]string, len(l.want))
	for k, v := range l.want {
		out[k] = v
	}
	return out
}

// changed is upstream setEndpointSliceLabels' "updated" flag: the slice's
// non-reserved labels differ from the Service's. A headless flip alone does
// not count, exactly as upstream, so it is written with the next real change.
func (l labeler) changed(slice *discovery.EndpointSlice) bool {
	n := 0
	for k, v := range slice.Labels {
		if isReservedLabel(k) {
			continue
		}
		n++
		if sv, ok := l.svcLabels[k]; !ok || sv != v {
			return true
		}
	}
	return n != len(l.svcLabels)
}

// ownedBy is true when the slice names this Service (by UID) as an owner.
func ownedBy(slice *discovery.EndpointSlice, svc *corev1.Service) bool {
	for _, o := range slice.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// newSlice is upstream newEndpointSlice: generateName "<service>-" (always a
// valid prefix for a valid Service name), a controller owner reference and
// the planner's labels. Ports are copied so no two slices share them.
func newSlice(svc *corev1.Service, l labeler, ports []discovery.EndpointPort, addressType discovery.AddressType) *discovery.EndpointSlice {
	p := make([]discovery.EndpointPort, len(ports))
	copy(p, ports)
	return &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Labels:          l.labels(),
			GenerateName:    svc.Name + "-",
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, serviceKind)},
			Namespace:       svc.Namespace,
		},
		Ports:       p,
		AddressType: addressType,
		Endpoints:   []discovery.Endpoint{},
	}
}

// isSamePlaceholder is upstream placeholderSliceCompare: only the namespace,
// labels, address type, ports and endpoints count (nil equals empty). Unlike
// upstream, TypeMeta is ignored, so manifests read from files compare like
// objects read from the API.
func isSamePlaceholder(live, placeholder *discovery.EndpointSlice) bool {
	if live.Namespace != placeholder.Namespace || live.AddressType != placeholder.AddressType {
		return false
	}
	if len(live.Ports) != 0 || len(live.Endpoints) != 0 {
		return false
	}
	// As upstream, a label whose value is "" equals an absent label, so a
	// placeholder keeps a stale headless label.
	for k, v := range live.Labels {
		if placeholder.Labels[k] != v {
			return false
		}
	}
	for k, v := range placeholder.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	return true
}

// stampTriggerTime is upstream addTriggerTimeAnnotation, applied to every
// slice about to be written.
func stampTriggerTime(slice *discovery.EndpointSlice, t time.Time) {
	if slice.Annotations == nil {
		slice.Annotations = map[string]string{}
	}
	if t.IsZero() {
		delete(slice.Annotations, corev1.EndpointsLastChangeTriggerTime)
		return
	}
	slice.Annotations[corev1.EndpointsLastChangeTriggerTime] = t.UTC().Format(time.RFC3339Nano)
}

// addressTypes is upstream getAddressTypesForService, ordered IPv4 first.
func addressTypes(svc *corev1.Service) []discovery.AddressType {
	var v4, v6 bool
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			v4 = true
		case corev1.IPv6Protocol:
			v6 = true
		}
	}
	if !v4 && !v6 {
		// No ipFamilies (an old apiserver): the clusterIP's family, or both
		// for a headless Service.
		if isServiceIPSet(svc) {
			ip, ok := parseIPSloppy(svc.Spec.ClusterIP)
			if ok && ip.Is6() {
				v6 = true
			} else {
				v4 = true
			}
		} else {
			v4, v6 = true, true
		}
	}
	var out []discovery.AddressType
	if v4 {
		out = append(out, discovery.AddressTypeIPv4)
	}
	if v6 {
		out = append(out, discovery.AddressTypeIPv6)
	}
	return out
}
