package cluster

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"weak"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// internLimit bounds each intern table: when one holds this many values it
// starts over. Values differ per workload (labels, container ports, owner),
// not per Pod, so a cluster's worth fits; churn (a rollout's new
// pod-template-hash) only ever costs a refill, never unbounded growth.
const internLimit = 8192

// internTable hands out one shared value per key. The values it returns are
// shared by many cached objects and must never be modified; nothing that
// reads the cache does (the planner, explain and the webhook read their
// input only; a caller that changes an object DeepCopies it first).
type internTable[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (t *internTable[V]) get(key string, v V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if got, ok := t.m[key]; ok {
		return got
	}
	if t.m == nil || len(t.m) >= internLimit {
		t.m = make(map[string]V)
	}
	t.m[key] = v
	return v
}

// weakTable hands out one shared value per key, as internTable does, but
// holds its values weakly: once no cached object refers to a value the
// garbage collector reclaims it and its entry goes, and it holds at most
// internLimit. It is for values that come and go with Pods: a Ready
// condition keyed by its transition time (each readiness flip makes a new
// one), a workload's label set (each deleted Service's, each rollout's
// pod-template-hash), a ReplicaSet's reference. A bounded table kept each
// until it started over, thousands of flips or Services later: hours of a
// busy cluster, and most of a long-running loop's memory growth.
type weakTable[T any] struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[T]
}

// weakEntry names the entry a cleanup may drop: only the one it was made
// for, not a newer value under the same key.
type weakEntry[T any] struct {
	key string
	ptr weak.Pointer[T]
}

func (t *weakTable[T]) get(key string, v *T) *T {
	t.mu.Lock()
	defer t.mu.Unlock()
	if got := t.m[key].Value(); got != nil {
		return got
	}
	if len(t.m) >= internLimit {
		// Full of values cached Pods still hold: v goes uninterned. An
		// entry costs about 250 bytes beyond its value; a value no other
		// Pod shares (a StatefulSet Pod's own labels, a Ready condition of
		// its own second) gains nothing from one, and a cluster of 150,000
		// such Pods would pay it 150,000 times.
		return v
	}
	if t.m == nil {
		t.m = make(map[string]weak.Pointer[T])
	}
	ptr := weak.Make(v)
	t.m[key] = ptr
	runtime.AddCleanup(v, t.drop, weakEntry[T]{key, ptr})
	return v
}

func (t *weakTable[T]) drop(e weakEntry[T]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[e.key] == e.ptr {
		delete(t.m, e.key)
	}
}

func (t *weakTable[T]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// podInterner shares, between cached Pods, the parts that are the same for
// every Pod of a workload: the label set, the ports of the containers, the
// controller reference, the Ready condition (status and transition second),
// and the namespace and node names. Of 20,000 Pods of one Service this is
// most of what is not the Pod struct itself.
type podInterner struct {
	strs       internTable[string]
	labels     weakTable[labelBox]
	containers internTable[[]corev1.Container]
	owners     weakTable[[1]metav1.OwnerReference]
	conditions weakTable[[1]corev1.PodCondition]
}

var pods podInterner

func (in *podInterner) str(s string) string {
	if s == "" {
		return ""
	}
	return in.strs.get(s, s)
}

// keyer builds an unambiguous key: every part length-prefixed.
type keyer struct{ strings.Builder }

func (k *keyer) add(parts ...string) {
	for _, s := range parts {
		k.WriteString(strconv.Itoa(len(s)))
		k.WriteByte(':')
		k.WriteString(s)
	}
}

func (k *keyer) num(n int64) { k.add(strconv.FormatInt(n, 10)) }

func (k *keyer) flag(b *bool) {
	switch {
	case b == nil:
		k.add("-")
	case *b:
		k.add("t")
	default:
		k.add("f")
	}
}

// labelBox holds an interned label set: a map cannot be pointed to
// weakly, so the records that share a set keep its box alive
// (PodRecord.labelsRef), and the table holds the box weakly: a set no
// cached Pod carries any more (a deleted Service's app, a rollout's old
// pod-template-hash) goes with its last Pod.
type labelBox struct{ m map[string]string }

func (in *podInterner) labelSet(m map[string]string) *labelBox {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var k keyer
	for _, key := range keys {
		k.add(key, m[key])
	}
	return in.labels.get(k.String(), &labelBox{m})
}

// containerPorts interns the containers slimPod keeps (name, ports and
// restart policy; every field of a port).
func (in *podInterner) containerPorts(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	var k keyer
	for _, c := range cs {
		k.add(c.Name)
		if c.RestartPolicy == nil {
			k.add("-")
		} else {
			k.add("+" + string(*c.RestartPolicy))
		}
		k.num(int64(len(c.Ports)))
		for _, p := range c.Ports {
			k.add(p.Name, string(p.Protocol), p.HostIP)
			k.num(int64(p.ContainerPort))
			k.num(int64(p.HostPort))
		}
	}
	return in.containers.get(k.String(), cs)
}

// owner interns a controller reference, weakly: each rollout's new
// ReplicaSet is a new one, and the old one's goes with its last Pod.
func (in *podInterner) owner(ref metav1.OwnerReference) []metav1.OwnerReference {
	var k keyer
	k.add(ref.APIVersion, ref.Kind, ref.Name, string(ref.UID))
	k.flag(ref.Controller)
	k.flag(ref.BlockOwnerDeletion)
	return in.owners.get(k.String(), &[1]metav1.OwnerReference{ref})[:]
}

// condition interns the Ready condition slimPod keeps, weakly (weakTable):
// Pods that turned ready in the same second share it for as long as one
// of them is cached. The transition time is keyed to the nanosecond and by
// location, so a shared value is equal (reflect.DeepEqual) to the one it
// stands for.
func (in *podInterner) condition(cs []corev1.PodCondition) []corev1.PodCondition {
	if len(cs) != 1 {
		return cs
	}
	c := cs[0]
	var k keyer
	k.add(string(c.Type), string(c.Status), c.Reason, c.Message, c.LastTransitionTime.Location().String())
	k.num(c.LastTransitionTime.UnixNano())
	k.num(c.LastProbeTime.UnixNano())
	k.num(c.ObservedGeneration)
	if c.LastTransitionTime.IsZero() {
		k.add("zero")
	}
	if c.LastProbeTime.IsZero() {
		k.add("zero")
	}
	return in.conditions.get(k.String(), &[1]corev1.PodCondition{c})[:]
}

// sliceInterner shares, between the endpoints of cached EndpointSlices,
// the values every endpoint of a Node or zone repeats: the condition
// flags, the node and zone names (both pointers) and the target
// reference's kind and namespace. The slices of 20,000 Pods hold 20,000
// endpoints per manager.
type sliceInterner struct {
	strs internTable[string]
	ptrs internTable[*string]
}

var endpointSlices sliceInterner

var (
	sharedTrue, sharedFalse = true, false
)

func (in *sliceInterner) flag(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	default:
		return &sharedFalse
	}
}

func (in *sliceInterner) ptr(s *string) *string {
	if s == nil {
		return nil
	}
	return in.ptrs.get(*s, s)
}

func (in *sliceInterner) str(s string) string {
	if s == "" {
		return ""
	}
	return in.strs.get(s, s)
}

// endpoints interns the endpoints' repeated values in place and drops the
// spare capacity decoding left (append doubling: 100 endpoints in 128).
func (in *sliceInterner) endpoints(eps []discovery.Endpoint) []discovery.Endpoint {
	if cap(eps) > len(eps) {
		eps = slices.Clone(eps)
	}
	for i := range eps {
		e := &eps[i]
		e.Conditions.Ready = in.flag(e.Conditions.Ready)
		e.Conditions.Serving = in.flag(e.Conditions.Serving)
		e.Conditions.Terminating = in.flag(e.Conditions.Terminating)
		e.NodeName, e.Zone = in.ptr(e.NodeName), in.ptr(e.Zone)
		if r := e.TargetRef; r != nil {
			r.Kind, r.Namespace, r.APIVersion = in.str(r.Kind), in.str(r.Namespace), in.str(r.APIVersion)
		}
	}
	return eps
}
