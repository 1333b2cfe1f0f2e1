package testutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodBuilder builds a Pod.
type PodBuilder struct{ p *corev1.Pod }

// NewPod starts a Running, Ready Pod with UID "uid-<name>", no IP, no node.
func NewPod(namespace, name string) *PodBuilder {
	return &PodBuilder{p: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}}
}

// Label adds a label.
func (b *PodBuilder) Label(key, value string) *PodBuilder {
	b.p.Labels = set(b.p.Labels, key, value)
	return b
}

// Labels adds every label of m (a Service's selector, say).
func (b *PodBuilder) Labels(m map[string]string) *PodBuilder {
	for k, v := range m {
		b.Label(k, v)
	}
	return b
}

// IP sets the Pod's IPs, the first as podIP.
func (b *PodBuilder) IP(ips ...string) *PodBuilder {
	b.p.Status.PodIP, b.p.Status.PodIPs = "", nil
	for i, ip := range ips {
		if i == 0 {
			b.p.Status.PodIP = ip
		}
		b.p.Status.PodIPs = append(b.p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	return b
}

// Node sets the node the Pod runs on.
func (b *PodBuilder) Node(name string) *PodBuilder { b.p.Spec.NodeName = name; return b }

// UID replaces the default UID.
func (b *PodBuilder) UID(uid string) *PodBuilder { b.p.UID = types.UID(uid); return b }

// Ready sets the Ready condition, with no transition time.
func (b *PodBuilder) Ready(ready bool) *PodBuilder { return b.readyAt(ready, time.Time{}) }

// ReadyAt makes the Pod Ready since t.
func (b *PodBuilder) ReadyAt(t time.Time) *PodBuilder { return b.readyAt(true, t) }

func (b *PodBuilder) readyAt(ready bool, t time.Time) *PodBuilder {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	c := corev1.PodCondition{Type: corev1.PodReady, Status: status}
	if !t.IsZero() {
		c.LastTransitionTime = metav1.NewTime(t)
	}
	b.p.Status.Conditions = []corev1.PodCondition{c}
	return b
}

// Phase sets the phase.
func (b *PodBuilder) Phase(p corev1.PodPhase) *PodBuilder { b.p.Status.Phase = p; return b }

// Terminating sets a deletion timestamp.
func (b *PodBuilder) Terminating(at time.Time) *PodBuilder {
	t := metav1.NewTime(at)
	b.p.DeletionTimestamp = &t
	return b
}

// ContainerPort adds a container with one named port.
func (b *PodBuilder) ContainerPort(name string, port int32, proto corev1.Protocol) *PodBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, corev1.Container{Name: "c-" + name,
		Ports: []corev1.ContainerPort{{Name: name, ContainerPort: port, Protocol: proto}}})
	return b
}

// OwnedBy adds a controller owner reference.
func (b *PodBuilder) OwnedBy(kind, name string) *PodBuilder {
	yes := true
	b.p.OwnerReferences = append(b.p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name,
		UID: types.UID("uid-" + name), Controller: &yes})
	return b
}

// Build returns a new Pod.
func (b *PodBuilder) Build() *corev1.Pod { return b.p.DeepCopy() }
