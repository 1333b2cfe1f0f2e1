package main

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Managed-by values of the two writers of slices.
const (
	oursManager       = "kubectl-slices"
	controllerManager = "endpointslice-controller.k8s.io"
)

// snapshot is one sample of the API: every slice, then every Pod, then
// every Service, listed in that order (why: drops.go).
type snapshot struct {
	// SlicesAt is when the slices were listed (the list's start), PodsAt
	// when the Pods' list answered.
	SlicesAt, PodsAt time.Time
	Services         map[string]serviceView // by "ns/name"
	Pods             map[string]podView     // by address
}

// A namespace being deleted takes no new slice ("unable to create new
// content in namespace ... because it is being terminated") and loses its
// slices and Pods in whatever order the namespace controller deletes
// them: its Services are neither behind nor judged for drops.

// serviceView is one Service in a snapshot.
type serviceView struct {
	RV       string
	Selector map[string]string
	// Desired is the signature of what the Service should publish, from the
	// Pods; Controller and Ours what kube-controller-manager's and our
	// slices publish (noSlices when the manager has none).
	Desired, Controller, Ours string
	// OursNames are the names of our slices, sorted.
	OursNames []string
	// Ready is every address any slice of the Service, whoever manages it,
	// publishes ready: what kube-proxy routes to.
	Ready map[string]bool
	// Terminating: its namespace is being deleted.
	Terminating bool
}

// podView is one Pod in a snapshot, by its address.
type podView struct {
	NS, Name, RV string
	Ready        bool
	Labels       map[string]string
}

// buildSnapshot assembles a snapshot from the lists. Only Services with a
// selector count (the churn makes no other kind). A terminating Pod (only a
// namespace's deletion makes one here, for the second or two until the
// churn confirms it as a kubelet would) is left out of the desired
// endpoints, and terminating endpoints out of the managers': both sides
// alike.
func buildSnapshot(slicesAt, podsAt time.Time, slices []discovery.EndpointSlice, pods []corev1.Pod, svcs []corev1.Service, terminating map[string]bool) snapshot {
	s := snapshot{SlicesAt: slicesAt, PodsAt: podsAt, Services: map[string]serviceView{}, Pods: map[string]podView{}}
	byNS := map[string][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		s.Pods[p.Status.PodIP] = podView{NS: p.Namespace, Name: p.Name, RV: p.ResourceVersion, Ready: podReady(p), Labels: p.Labels}
		byNS[p.Namespace] = append(byNS[p.Namespace], p)
	}
	type managed struct {
		eps   map[string][]endpointKey
		names map[string][]string
	}
	slicesOf := map[string]*managed{} // by Service key
	ready := map[string]map[string]bool{}
	for i := range slices {
		sl := &slices[i]
		svc := sl.Labels[discovery.LabelServiceName]
		if svc == "" || sl.DeletionTimestamp != nil {
			continue
		}
		key := sl.Namespace + "/" + svc
		mg := slicesOf[key]
		if mg == nil {
			mg = &managed{eps: map[string][]endpointKey{}, names: map[string][]string{}}
			slicesOf[key] = mg
		}
		mgr := sl.Labels[discovery.LabelManagedBy]
		mg.names[mgr] = append(mg.names[mgr], sl.Name)
		if mg.eps[mgr] == nil {
			mg.eps[mgr] = []endpointKey{}
		}
		if ready[key] == nil {
			ready[key] = map[string]bool{}
		}
		for _, e := range sl.Endpoints {
			if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
				continue
			}
			r := e.Conditions.Ready != nil && *e.Conditions.Ready
			k := endpointKey{Ready: r}
			if len(e.Addresses) > 0 {
				k.IP = e.Addresses[0]
			}
			if e.NodeName != nil {
				k.Node = *e.NodeName
			}
			if e.Zone != nil {
				k.Zone = *e.Zone
			}
			mg.eps[mgr] = append(mg.eps[mgr], k)
			if r {
				for _, a := range e.Addresses {
					ready[key][a] = true
				}
			}
		}
	}
	for i := range svcs {
		sv := &svcs[i]
		if len(sv.Spec.Selector) == 0 {
			continue
		}
		key := sv.Namespace + "/" + sv.Name
		sel := labels.SelectorFromSet(sv.Spec.Selector)
		var desired []endpointKey
		for _, p := range byNS[sv.Namespace] {
			if sel.Matches(labels.Set(p.Labels)) {
				desired = append(desired, endpointKey{IP: p.Status.PodIP, Ready: podReady(p), Node: p.Spec.NodeName, Zone: zoneOf(p.Spec.NodeName)})
			}
		}
		v := serviceView{RV: sv.ResourceVersion, Selector: sv.Spec.Selector, Desired: signature(desired),
			Controller: noSlices, Ours: noSlices, Ready: ready[key], Terminating: terminating[sv.Namespace]}
		if mg := slicesOf[key]; mg != nil {
			if eps, ok := mg.eps[controllerManager]; ok {
				v.Controller = signature(eps)
			}
			if eps, ok := mg.eps[oursManager]; ok {
				v.Ours = signature(eps)
				v.OursNames = append([]string(nil), mg.names[oursManager]...)
				sort.Strings(v.OursNames)
			}
		}
		if v.Ready == nil {
			v.Ready = map[string]bool{}
		}
		s.Services[key] = v
	}
	return s
}

// podReady is the Pod's Ready condition, as the EndpointSlice controller
// reads it for a Pod that is not terminating.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// selects says whether a selector matches a Pod's labels.
func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}
