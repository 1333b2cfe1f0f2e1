package cluster

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodRecord is what the cache holds of a Pod: the fields slimPod keeps, and
// nothing else. A corev1.Pod is 1,280 bytes before any of its values, almost
// all of it PodSpec and PodStatus fields the planner never reads; a record
// is about a third of that. With 20,000 Pods cached that is some 17 MiB
// less live heap (make bench-watch).
//
// The planner, explain and the webhook take *corev1.Pod: Pod builds one
// from the record when a reader asks (a full plan, the Pods a memo plan
// touches, a group's first Pod), so the large struct lives only as long as
// the plan that reads it. Records are shared by every reader of the cache
// and never modified. The embedded ObjectMeta makes a record a
// metav1.Object, which the informer's store, indexes and handlers read;
// GetObjectKind and DeepCopyObject make it a runtime.Object too, which
// client-go's debugging checks (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR,
// KUBE_CACHE_MUTATION_DETECTOR) assert every cached item is.
type PodRecord struct {
	metav1.ObjectMeta
	NodeName, Hostname, Subdomain string
	// Containers and InitContainers hold names, ports and (init) restart
	// policies only.
	Containers, InitContainers []corev1.Container
	Phase                      corev1.PodPhase
	PodIP                      string
	PodIPs                     []corev1.PodIP
	// Conditions holds the Ready condition only.
	Conditions []corev1.PodCondition
	// labelsRef keeps the interned label set (Labels) in its weak table
	// for as long as the record is cached (intern.go).
	labelsRef *labelBox
}

// Pod returns a new Pod with the record's fields, sharing its values: the
// caller must not modify it (DeepCopy first), as it must not modify
// anything the cache hands out.
func (r *PodRecord) Pod() *corev1.Pod {
	p := &corev1.Pod{}
	r.fill(p)
	return p
}

// fill sets the record's fields in p, sharing its values.
func (r *PodRecord) fill(p *corev1.Pod) {
	p.ObjectMeta = r.ObjectMeta
	p.Spec.NodeName, p.Spec.Hostname, p.Spec.Subdomain = r.NodeName, r.Hostname, r.Subdomain
	p.Spec.Containers, p.Spec.InitContainers = r.Containers, r.InitContainers
	p.Status.Phase, p.Status.PodIP, p.Status.PodIPs, p.Status.Conditions = r.Phase, r.PodIP, r.PodIPs, r.Conditions
}

// groupKey is PodGroupKey of the record's Pod, built on the stack: the
// index and the group memo key every Pod event of a webhook's cache, and
// a Pod on the heap for each was 1,280 bytes of garbage a key.
func (r *PodRecord) groupKey() string {
	var p corev1.Pod
	r.fill(&p)
	return PodGroupKey(&p)
}

// GetObjectKind implements runtime.Object: a record has no kind of its own.
func (r *PodRecord) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (r *PodRecord) DeepCopyObject() runtime.Object {
	out := *r
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Containers = deepCopyContainers(r.Containers)
	out.InitContainers = deepCopyContainers(r.InitContainers)
	out.PodIPs = slices.Clone(r.PodIPs)
	if r.Conditions != nil {
		out.Conditions = make([]corev1.PodCondition, len(r.Conditions))
		for i := range r.Conditions {
			r.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	return &out
}

func deepCopyContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		cs[i].DeepCopyInto(&out[i])
	}
	return out
}

// PodOf returns the Pod a Pod store's item stands for, nil when the item
// is not a record (a tombstone's unknown object, say).
func PodOf(obj any) *corev1.Pod {
	if r, ok := obj.(*PodRecord); ok {
		return r.Pod()
	}
	return nil
}

// podsOf returns the Pods of store items, by name.
func podsOf(objs []any) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p := PodOf(o); p != nil {
			out = append(out, p)
		}
	}
	// The store hands Pods out in map order; the planner sorts them stably
	// by name, which on 20,000 shuffled Pods cost about 50 ms a sync in the
	// watch benchmark's profile, and almost nothing on input sorted first
	// with pdqsort (names are unique within a namespace).
	slices.SortFunc(out, byName)
	return out
}
