package testutil

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SliceBuilder builds an EndpointSlice.
type SliceBuilder struct{ s *discovery.EndpointSlice }

// NewSlice starts an IPv4 EndpointSlice with no labels and no endpoints.
func NewSlice(namespace, name string) *SliceBuilder {
	return &SliceBuilder{s: &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		AddressType: discovery.AddressTypeIPv4}}
}

// Service sets the kubernetes.io/service-name label.
func (b *SliceBuilder) Service(name string) *SliceBuilder {
	return b.Label(discovery.LabelServiceName, name)
}

// ManagedBy sets the endpointslice.kubernetes.io/managed-by label.
func (b *SliceBuilder) ManagedBy(value string) *SliceBuilder {
	return b.Label(discovery.LabelManagedBy, value)
}

// Label adds a label.
func (b *SliceBuilder) Label(key, value string) *SliceBuilder {
	b.s.Labels = set(b.s.Labels, key, value)
	return b
}

// AddressType replaces IPv4.
func (b *SliceBuilder) AddressType(t discovery.AddressType) *SliceBuilder {
	b.s.AddressType = t
	return b
}

// ResourceVersion sets the resourceVersion, as if read from the API server.
func (b *SliceBuilder) ResourceVersion(rv string) *SliceBuilder {
	b.s.ResourceVersion = rv
	return b
}

// UID sets the UID.
func (b *SliceBuilder) UID(uid string) *SliceBuilder { b.s.UID = types.UID(uid); return b }

// Generation sets the generation.
func (b *SliceBuilder) Generation(g int64) *SliceBuilder { b.s.Generation = g; return b }

// OwnedBy adds the owner reference the EndpointSlice controller sets to its
// Service.
func (b *SliceBuilder) OwnedBy(svc *corev1.Service) *SliceBuilder {
	yes := true
	b.s.OwnerReferences = append(b.s.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "Service",
		Name: svc.Name, UID: svc.UID, Controller: &yes, BlockOwnerDeletion: &yes})
	return b
}

// Port adds a port.
func (b *SliceBuilder) Port(name string, port int32, proto corev1.Protocol) *SliceBuilder {
	b.s.Ports = append(b.s.Ports, discovery.EndpointPort{Name: &name, Port: &port, Protocol: &proto})
	return b
}

// Ready adds one ready endpoint per address.
func (b *SliceBuilder) Ready(addresses ...string) *SliceBuilder {
	for _, a := range addresses {
		b.Endpoint(a, true)
	}
	return b
}

// Endpoint adds an endpoint at address, ready and serving as ready says.
func (b *SliceBuilder) Endpoint(address string, ready bool) *SliceBuilder {
	r, s := ready, ready
	return b.Endpoints(discovery.Endpoint{Addresses: []string{address},
		Conditions: discovery.EndpointConditions{Ready: &r, Serving: &s}})
}

// Endpoints adds endpoints as given.
func (b *SliceBuilder) Endpoints(eps ...discovery.Endpoint) *SliceBuilder {
	b.s.Endpoints = append(b.s.Endpoints, eps...)
	return b
}

// Build returns a new EndpointSlice.
func (b *SliceBuilder) Build() *discovery.EndpointSlice { return b.s.DeepCopy() }
