package testutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ServiceBuilder builds a Service.
type ServiceBuilder struct{ s *corev1.Service }

// NewService starts a ClusterIP IPv4 Service with UID "uid-<name>", no
// selector and no ports.
func NewService(namespace, name string) *ServiceBuilder {
	return &ServiceBuilder{s: &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.10",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}},
	}}
}

// Selector adds key=value to the selector.
func (b *ServiceBuilder) Selector(key, value string) *ServiceBuilder {
	if b.s.Spec.Selector == nil {
		b.s.Spec.Selector = map[string]string{}
	}
	b.s.Spec.Selector[key] = value
	return b
}

// Port adds a TCP port; target is a number ("8080") or a container port's
// name ("http"), as intstr.Parse reads it.
func (b *ServiceBuilder) Port(name string, port int32, target string) *ServiceBuilder {
	return b.PortProto(name, port, target, corev1.ProtocolTCP)
}

// PortProto adds a port of another protocol.
func (b *ServiceBuilder) PortProto(name string, port int32, target string, proto corev1.Protocol) *ServiceBuilder {
	b.s.Spec.Ports = append(b.s.Spec.Ports, corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.Parse(target), Protocol: proto})
	return b
}

// UID replaces the default UID.
func (b *ServiceBuilder) UID(uid string) *ServiceBuilder { b.s.UID = types.UID(uid); return b }

// Label adds a label.
func (b *ServiceBuilder) Label(key, value string) *ServiceBuilder {
	b.s.Labels = set(b.s.Labels, key, value)
	return b
}

// Annotation adds an annotation.
func (b *ServiceBuilder) Annotation(key, value string) *ServiceBuilder {
	b.s.Annotations = set(b.s.Annotations, key, value)
	return b
}

// Created sets the creation time.
func (b *ServiceBuilder) Created(t time.Time) *ServiceBuilder {
	b.s.CreationTimestamp = metav1.NewTime(t)
	return b
}

// ClusterIP sets the cluster IP ("None" for a headless Service).
func (b *ServiceBuilder) ClusterIP(ip string) *ServiceBuilder { b.s.Spec.ClusterIP = ip; return b }

// Families sets the IP families.
func (b *ServiceBuilder) Families(f ...corev1.IPFamily) *ServiceBuilder {
	b.s.Spec.IPFamilies = f
	return b
}

// PublishNotReady sets publishNotReadyAddresses.
func (b *ServiceBuilder) PublishNotReady() *ServiceBuilder {
	b.s.Spec.PublishNotReadyAddresses = true
	return b
}

// ExternalName makes it an ExternalName Service pointing at host.
func (b *ServiceBuilder) ExternalName(host string) *ServiceBuilder {
	b.s.Spec.Type, b.s.Spec.ExternalName, b.s.Spec.ClusterIP = corev1.ServiceTypeExternalName, host, ""
	return b
}

// Build returns a new Service.
func (b *ServiceBuilder) Build() *corev1.Service { return b.s.DeepCopy() }

func set(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}
