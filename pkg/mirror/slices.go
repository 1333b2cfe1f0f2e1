package mirror

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// reconcileSlices is upstream reconcileByPortMapping per key, then the
// deletes of unwanted keys, then recycleSlices.
func reconcileSlices(plan *reconcile.Plan, ep *corev1.Endpoints, d *desired, ours []*discovery.EndpointSlice, managedBy string) {
	labels, annotations := sliceMeta(ep, managedBy)
	live := map[string][]*discovery.EndpointSlice{}
	var liveKeys []string
	for _, s := range ours {
		k := groupKey(s.AddressType, s.Ports)
		if _, ok := live[k]; !ok {
			liveKeys = append(liveKeys, k)
		}
		live[k] = append(live[k], s)
	}
	var creates []*discovery.EndpointSlice
	types := map[discovery.AddressType]bool{}
	for _, k := range d.sortedKeys() {
		g, existing := d.groups[k], live[k]
		if len(g.endpoints) == 0 {
			plan.Delete = append(plan.Delete, existing...)
			continue
		}
		types[g.addressType] = true
		if len(existing) > 0 {
			plan.Delete = append(plan.Delete, existing[1:]...)
			if first := existing[0]; sameEndpoints(first, g.endpoints) && metaEqual(first, labels, annotations) && ownedBy(first, ep) {
				plan.Unchanged = append(plan.Unchanged, first)
				continue
			}
		}
		s := newSlice(ep, g, labels, annotations)
		if len(existing) > 0 {
			s.Name, s.GenerateName, s.ResourceVersion = existing[0].Name, "", existing[0].ResourceVersion
			plan.Update = append(plan.Update, s)
		} else {
			creates = append(creates, s)
		}
	}
	for _, k := range liveKeys {
		if _, ok := d.groups[k]; !ok {
			plan.Delete = append(plan.Delete, live[k]...)
		}
	}
	plan.Create = recycle(plan, creates)
	for _, at := range []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6} {
		if types[at] {
			plan.AddressTypes = append(plan.AddressTypes, at)
		}
	}
}

// recycle turns a create and a delete of the same address type into one
// update of the deleted slice, as upstream recycleSlices; it returns the
// creates left.
func recycle(plan *reconcile.Plan, creates []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	var left []*discovery.EndpointSlice
	for _, c := range creates {
		reused := -1
		for i, del := range plan.Delete {
			if del.AddressType == c.AddressType {
				reused = i
				break
			}
		}
		if reused < 0 {
			left = append(left, c)
			continue
		}
		del := plan.Delete[reused]
		plan.Delete = append(plan.Delete[:reused:reused], plan.Delete[reused+1:]...)
		c.Name, c.GenerateName, c.ResourceVersion = del.Name, "", del.ResourceVersion
		plan.Update = append(plan.Update, c)
	}
	return left
}

func newSlice(ep *corev1.Endpoints, g *group, labels, annotations map[string]string) *discovery.EndpointSlice {
	l := make(map[string]string, len(labels))
	for k, v := range labels {
		l[k] = v
	}
	a := make(map[string]string, len(annotations))
	for k, v := range annotations {
		a[k] = v
	}
	ports := make([]discovery.EndpointPort, len(g.ports))
	for i := range g.ports {
		ports[i] = *g.ports[i].DeepCopy()
	}
	eps := make([]discovery.Endpoint, len(g.endpoints))
	for i := range g.endpoints {
		eps[i] = *g.endpoints[i].DeepCopy()
	}
	return &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ep.Namespace,
			GenerateName:    ep.Name + "-",
			Labels:          l,
			Annotations:     a,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ep, endpointsKind)},
		},
		AddressType: g.addressType,
		Ports:       ports,
		Endpoints:   eps,
	}
}

// ownedBy: the slice's only owner is this Endpoints object as controller.
func ownedBy(s *discovery.EndpointSlice, ep *corev1.Endpoints) bool {
	if len(s.OwnerReferences) != 1 {
		return false
	}
	ref := s.OwnerReferences[0]
	return ref.Kind == "Endpoints" && ref.APIVersion == "v1" && ref.Name == ep.Name && ref.UID == ep.UID &&
		ref.Controller != nil && *ref.Controller
}

// sameEndpoints: the live slice holds exactly the desired endpoints, each
// unchanged beyond its key (upstream totalChanges finds nothing).
func sameEndpoints(s *discovery.EndpointSlice, want []discovery.Endpoint) bool {
	if len(s.Endpoints) != len(want) {
		return false
	}
	byKey := make(map[string]*discovery.Endpoint, len(want))
	for i := range want {
		byKey[reconcile.EndpointKey(&want[i])] = &want[i]
	}
	for i := range s.Endpoints {
		w := byKey[reconcile.EndpointKey(&s.Endpoints[i])]
		if w == nil || !reconcile.EndpointsEquivalent(w, &s.Endpoints[i]) {
			return false
		}
		delete(byKey, reconcile.EndpointKey(&s.Endpoints[i]))
	}
	return true
}
