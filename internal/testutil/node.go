package testutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeBuilder builds a Node.
type NodeBuilder struct{ n *corev1.Node }

// NewNode starts a Ready Node with no zone and no allocatable CPU.
func NewNode(name string) *NodeBuilder {
	return &NodeBuilder{n: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}}
}

// Zone sets the topology.kubernetes.io/zone label.
func (b *NodeBuilder) Zone(zone string) *NodeBuilder {
	b.n.Labels = set(b.n.Labels, corev1.LabelTopologyZone, zone)
	return b
}

// CPU sets the allocatable CPU ("4", "500m").
func (b *NodeBuilder) CPU(quantity string) *NodeBuilder {
	if b.n.Status.Allocatable == nil {
		b.n.Status.Allocatable = corev1.ResourceList{}
	}
	b.n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse(quantity)
	return b
}

// NotReady sets the Ready condition to False.
func (b *NodeBuilder) NotReady() *NodeBuilder {
	b.n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	return b
}

// Build returns a new Node.
func (b *NodeBuilder) Build() *corev1.Node { return b.n.DeepCopy() }
