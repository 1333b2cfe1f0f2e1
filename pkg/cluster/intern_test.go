package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// randomPod draws a Pod from small pools, so that many Pods share what the
// transform interns and many differ from each other in one field only: a
// port's protocol or host IP, a label's value, the Ready condition's
// second, the owner's UID.
func randomPod(r *rand.Rand, i int) *corev1.Pod {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	port := func() corev1.ContainerPort {
		return corev1.ContainerPort{Name: pick("http", "grpc", ""), ContainerPort: int32(8080 + r.IntN(2)),
			Protocol: corev1.Protocol(pick("TCP", "UDP")), HostIP: pick("", "", "10.9.9.9"), HostPort: int32(r.IntN(2))}
	}
	ports := func() []corev1.ContainerPort {
		var out []corev1.ContainerPort
		for range r.IntN(3) {
			out = append(out, port())
		}
		return out
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: pick("a", "b"),
		UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: fmt.Sprint(i),
		Labels:      map[string]string{"app": pick("web", "db"), "tier": pick("x", "y")},
		Annotations: map[string]string{"note": "big"}}}
	if r.IntN(4) == 0 {
		delete(p.Labels, "tier")
	}
	if r.IntN(3) > 0 {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: pick("ReplicaSet", "StatefulSet"),
			Name: pick("rs1", "rs2"), UID: types.UID(pick("o1", "o2")), Controller: ptr.To(r.IntN(4) > 0)}}
	}
	if r.IntN(8) == 0 {
		p.DeletionTimestamp = &metav1.Time{Time: base}
	}
	p.Spec.NodeName, p.Spec.Subdomain = pick("n1", "n2", ""), pick("", "web")
	if p.Spec.Subdomain != "" {
		p.Spec.Hostname = p.Name
	}
	for c := range 1 + r.IntN(2) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", c), Image: "img", Ports: ports()})
	}
	if r.IntN(2) == 0 {
		var policy *corev1.ContainerRestartPolicy
		if r.IntN(2) == 0 {
			policy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: policy, Ports: ports()}}
	}
	p.Status.Phase = corev1.PodPhase(pick("Running", "Running", "Pending", "Succeeded"))
	if r.IntN(6) > 0 {
		ip := fmt.Sprintf("10.0.%d.%d", i/250, i%250)
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		if r.IntN(3) == 0 {
			p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: fmt.Sprintf("fd00::%x", i)})
		}
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	if r.IntN(6) > 0 {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady,
			Status:             corev1.ConditionStatus(pick("True", "False")),
			LastTransitionTime: metav1.NewTime(base.Add(time.Duration(r.IntN(3)) * time.Second).Local())})
	}
	return p
}

// wantSlim is what slimPod must keep of p, built without the intern tables.
func wantSlim(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, DeletionTimestamp: p.DeletionTimestamp, Labels: p.Labels}}
	if ref := metav1.GetControllerOf(p); ref != nil {
		out.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	out.Spec.NodeName, out.Spec.Hostname, out.Spec.Subdomain = p.Spec.NodeName, p.Spec.Hostname, p.Spec.Subdomain
	for _, c := range p.Spec.Containers {
		if len(c.Ports) > 0 {
			out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: c.Name, Ports: c.Ports})
		}
	}
	for _, c := range p.Spec.InitContainers {
		if len(c.Ports) > 0 {
			out.Spec.InitContainers = append(out.Spec.InitContainers, corev1.Container{Name: c.Name, Ports: c.Ports, RestartPolicy: c.RestartPolicy})
		}
	}
	out.Status.Phase, out.Status.PodIP, out.Status.PodIPs = p.Status.Phase, p.Status.PodIP, p.Status.PodIPs
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return out
}

// Interning changes no value: every transformed Pod equals what slimPod
// keeps of it computed without sharing, however many Pods that differ in
// one field came before; Pods with equal parts share them; and plans from
// the transformed Pods equal plans from the originals.
func TestTransformSharesWithoutChanging(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var full, slim []*corev1.Pod
	// The records stay cached while their Pods are compared: label sets are
	// shared for as long as a record holds them (weakTable).
	var recs []any
	defer runtime.KeepAlive(&recs)
	for i := range 3000 {
		p := randomPod(r, i)
		got, _ := Transform(p.DeepCopy())
		recs = append(recs, got)
		if want := wantSlim(p); !reflect.DeepEqual(PodOf(got), want) {
			t.Fatalf("pod %d: transformed\n%+v\nwant\n%+v", i, PodOf(got), want)
		}
		full, slim = append(full, p), append(slim, PodOf(got))
	}
	shared := func(what string, key func(*corev1.Pod) any, addr func(*corev1.Pod) uintptr) {
		t.Helper()
		first := map[string]uintptr{}
		n := 0
		for _, p := range slim {
			if addr(p) == 0 {
				continue
			}
			k := fmt.Sprintf("%#v", key(p))
			if a, ok := first[k]; !ok {
				first[k] = addr(p)
			} else if a != addr(p) {
				t.Errorf("%s of %s not shared with an equal one", what, p.Name)
			} else {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: nothing shared", what)
		}
	}
	shared("labels", func(p *corev1.Pod) any { return p.Labels }, func(p *corev1.Pod) uintptr { return reflect.ValueOf(p.Labels).Pointer() })
	shared("containers", func(p *corev1.Pod) any { return p.Spec.Containers }, func(p *corev1.Pod) uintptr { return reflect.ValueOf(p.Spec.Containers).Pointer() })
	shared("owner", func(p *corev1.Pod) any { return p.OwnerReferences }, func(p *corev1.Pod) uintptr { return reflect.ValueOf(p.OwnerReferences).Pointer() })
	shared("ready condition", func(p *corev1.Pod) any { return p.Status.Conditions }, func(p *corev1.Pod) uintptr { return reflect.ValueOf(p.Status.Conditions).Pointer() })

	for i := range 40 {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: []string{"a", "b"}[i%2], UID: "svc"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": []string{"web", "db"}[i/2%2]},
				PublishNotReadyAddresses: i%5 == 0,
				Ports: []corev1.ServicePort{
					{Name: "h", Port: 80, TargetPort: intstr.FromString([]string{"http", "grpc"}[i/4%2]), Protocol: corev1.Protocol([]string{"TCP", "UDP"}[i/8%2])},
					{Name: "n", Port: 81, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP}}}}
		if i%3 == 0 {
			svc.Spec.ClusterIP = corev1.ClusterIPNone
		}
		plan := func(pods []*corev1.Pod) []*discovery.EndpointSlice {
			var in []*corev1.Pod
			for _, p := range pods {
				if p.Namespace == svc.Namespace && p.Labels["app"] == svc.Spec.Selector["app"] {
					in = append(in, p)
				}
			}
			pl, err := reconcile.Compute(reconcile.Input{Service: svc, Pods: in, Nodes: reconcile.Nodes{Unreadable: true}}, reconcile.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			return pl.Final()
		}
		if got, want := plan(slim), plan(full); !reflect.DeepEqual(got, want) {
			t.Fatalf("service %d: plans differ after the transform", i)
		}
	}
}

// Slices keep every value, and endpoints on one Node share its name.
func TestTransformSliceSharesWithoutChanging(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	mk := func(n int) *discovery.EndpointSlice {
		s := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", n), Namespace: "a",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}, AddressType: discovery.AddressTypeIPv4}
		for i := range 1 + r.IntN(40) {
			e := discovery.Endpoint{Addresses: []string{fmt.Sprintf("10.0.%d.%d", n, i)},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "a", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprint(i))}}
			if r.IntN(5) > 0 {
				e.NodeName = ptr.To([]string{"n1", "n2"}[r.IntN(2)])
				e.Zone = ptr.To([]string{"z1", "z2"}[r.IntN(2)])
			}
			if r.IntN(5) > 0 {
				e.Conditions = discovery.EndpointConditions{Ready: ptr.To(r.IntN(2) == 0), Serving: ptr.To(r.IntN(2) == 0), Terminating: ptr.To(r.IntN(2) == 0)}
			}
			s.Endpoints = append(s.Endpoints, e)
		}
		return s
	}
	nodes := map[string]*string{}
	for n := range 50 {
		s := mk(n)
		want := s.DeepCopy()
		want.ManagedFields = nil
		got, _ := Transform(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("slice %d: transformed\n%+v\nwant\n%+v", n, got, want)
		}
		for _, e := range got.(*discovery.EndpointSlice).Endpoints {
			if e.NodeName == nil {
				continue
			}
			if p, ok := nodes[*e.NodeName]; ok && p != e.NodeName {
				t.Fatalf("slice %d: node %s not shared", n, *e.NodeName)
			}
			nodes[*e.NodeName] = e.NodeName
		}
	}
}

// A table never holds more than internLimit values: churned label sets
// (a rollout's pod-template-hash) cost a refill, not unbounded growth.
func TestInternTableBounded(t *testing.T) {
	var tab internTable[string]
	for i := range 3 * internLimit {
		k := fmt.Sprint(i)
		if got := tab.get(k, k); got != k {
			t.Fatalf("get(%s) = %s", k, got)
		}
		if len(tab.m) > internLimit {
			t.Fatalf("%d values held, limit %d", len(tab.m), internLimit)
		}
	}
}

// A Ready condition is held only while a cached Pod holds it: every
// readiness flip interns a new transition time, and a table that kept
// them would grow with the flips, not with the Pods (the long-running
// loop's memory, flip after flip).
func TestInternedConditionsGoWithTheirPods(t *testing.T) {
	var in podInterner
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cond := func(i int) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(at.Add(time.Duration(i) * time.Second))}}
	}
	const held, flips = 10, 5000
	kept := make([][]corev1.PodCondition, held)
	for i := range held {
		kept[i] = in.condition(cond(i))
	}
	for i := held; i < held+flips; i++ {
		in.condition(cond(i)) // a flip: the Pod's previous condition is dropped
	}
	deadline := time.Now().Add(10 * time.Second)
	for in.conditions.len() > held && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := in.conditions.len(); n > held {
		t.Fatalf("%d conditions held after %d flips, %d Pods still hold one", n, flips, held)
	}
	for i, c := range kept {
		got := in.condition(cond(i))
		if &got[0] != &c[0] {
			t.Fatalf("condition %d: not shared while a Pod holds it", i)
		}
		if !reflect.DeepEqual(got, cond(i)) {
			t.Fatalf("condition %d: %v, want %v", i, got, cond(i))
		}
	}
}

// Label sets and controller references go with the last cached Pod that
// holds them: each deleted Service's app, each rollout's new
// pod-template-hash and ReplicaSet would otherwise stay in their tables
// (the long-running loop's memory, Service after Service).
func TestInternedLabelsAndOwnersGoWithTheirPods(t *testing.T) {
	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i), Namespace: "shop",
			Labels:          map[string]string{"app": "web", "pod-template-hash": fmt.Sprint(i)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprint("web-", i), UID: types.UID(fmt.Sprint(i)), Controller: ptr.To(true)}}}}
	}
	const held, gone = 10, 5000
	before := func() (int, int) { return pods.labels.len(), pods.owners.len() }
	l0, o0 := before()
	var kept []*PodRecord
	for i := range held + gone {
		r := slimPod(pod(1_000_000 + i))
		if i < held {
			kept = append(kept, r)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, o := before()
		if l-l0 <= held && o-o0 <= held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d label sets and %d owners still interned after %d Pods left the cache, %d cached", l-l0, o-o0, gone, held)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	for i, r := range kept {
		again := slimPod(pod(1_000_000 + i))
		if reflect.ValueOf(again.Labels).UnsafePointer() != reflect.ValueOf(r.Labels).UnsafePointer() || &again.OwnerReferences[0] != &r.OwnerReferences[0] {
			t.Fatalf("pod %d: its labels or owner are not shared while a record holds them", i)
		}
	}
	runtime.KeepAlive(kept)
}

// A weak table holds at most internLimit values: past it, a value goes
// uninterned (and equal), so values no Pod shares cost no entry each.
func TestWeakTableBounded(t *testing.T) {
	var tab weakTable[string]
	kept := make([]*string, 0, internLimit+100)
	for i := range internLimit + 100 {
		v := fmt.Sprint(i)
		got := tab.get(v, &v)
		if *got != v {
			t.Fatalf("get(%s) = %s", v, *got)
		}
		kept = append(kept, got)
	}
	if n := tab.len(); n != internLimit {
		t.Fatalf("%d values held, limit %d", n, internLimit)
	}
	runtime.KeepAlive(kept)
}
