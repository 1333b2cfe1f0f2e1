package testutil

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EndpointsBuilder builds a v1 Endpoints object.
type EndpointsBuilder struct{ e *corev1.Endpoints }

// NewEndpoints starts an Endpoints object with no subsets.
func NewEndpoints(namespace, name string) *EndpointsBuilder {
	return &EndpointsBuilder{e: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
}

// Label adds a label.
func (b *EndpointsBuilder) Label(key, value string) *EndpointsBuilder {
	b.e.Labels = set(b.e.Labels, key, value)
	return b
}

// Labels adds every label of m.
func (b *EndpointsBuilder) Labels(m map[string]string) *EndpointsBuilder {
	for k, v := range m {
		b.Label(k, v)
	}
	return b
}

// Annotation adds an annotation.
func (b *EndpointsBuilder) Annotation(key, value string) *EndpointsBuilder {
	b.e.Annotations = set(b.e.Annotations, key, value)
	return b
}

// UID sets the UID.
func (b *EndpointsBuilder) UID(uid string) *EndpointsBuilder { b.e.UID = types.UID(uid); return b }

// ResourceVersion sets the resourceVersion, as if read from the API server.
func (b *EndpointsBuilder) ResourceVersion(rv string) *EndpointsBuilder {
	b.e.ResourceVersion = rv
	return b
}

// Subset adds a subset.
func (b *EndpointsBuilder) Subset(s corev1.EndpointSubset) *EndpointsBuilder {
	b.e.Subsets = append(b.e.Subsets, s)
	return b
}

// Addresses adds a subset of ready and not-ready IPs on one TCP port (name
// "" for an unnamed one).
func (b *EndpointsBuilder) Addresses(name string, port int32, ready []string, notReady ...string) *EndpointsBuilder {
	s := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: name, Port: port, Protocol: corev1.ProtocolTCP}}}
	for _, ip := range ready {
		s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: ip})
	}
	for _, ip := range notReady {
		s.NotReadyAddresses = append(s.NotReadyAddresses, corev1.EndpointAddress{IP: ip})
	}
	return b.Subset(s)
}

// Build returns a new Endpoints object.
func (b *EndpointsBuilder) Build() *corev1.Endpoints { return b.e.DeepCopy() }
