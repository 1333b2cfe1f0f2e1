package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// Well-known values the planner writes or reads.
const (
	// DefaultManagedBy is the managed-by label value kubectl-slices writes under.
	DefaultManagedBy = "kubectl-slices"
	// ControllerManagedBy is kube-controller-manager's EndpointSlice controller.
	ControllerManagedBy = "endpointslice-controller.k8s.io"
	// MirroringManagedBy is kube-controller-manager's mirroring controller.
	MirroringManagedBy = "endpointslicemirroring-controller.k8s.io"

	// DefaultMaxEndpointsPerSlice matches kube-controller-manager's default.
	DefaultMaxEndpointsPerSlice = 100
	// MaxEndpointsPerSliceLimit is the upper bound the controller accepts.
	MaxEndpointsPerSliceLimit = 1000

	labelZone = corev1.LabelTopologyZone
)

// Options tune a Plan. The zero value is not valid: use DefaultOptions.
type Options struct {
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
	// slices this plan owns. Slices with any other value are never planned.
	ManagedBy string
	// MaxEndpointsPerSlice bounds every slice, 1..1000.
	MaxEndpointsPerSlice int
	// TriggerTime is stamped as endpoints.kubernetes.io/last-change-trigger-time
	// on every created or updated slice; the zero time removes the annotation.
	TriggerTime time.Time
}

// DefaultOptions returns the options kubectl-slices uses unless told otherwise.
func DefaultOptions() Options {
	return Options{ManagedBy: DefaultManagedBy, MaxEndpointsPerSlice: DefaultMaxEndpointsPerSlice}
}

// Nodes is what the caller knows of the cluster's Nodes.
type Nodes struct {
	// ByName holds the Nodes the caller read, keyed by name. A Pod whose
	// spec.nodeName is not here is on a Node that does not exist, unless
	// Unreadable is set.
	ByName map[string]*corev1.Node
	// Unreadable says the caller could not read Nodes at all (for example,
	// RBAC forbids it). Pods are then never dropped for their Node, and zones
	// are kept from the live endpoints.
	Unreadable bool
	// Complete says ByName holds every Node of the cluster. The CPU-weighted
	// allocator of the topology-mode: Auto annotation needs it; without it
	// that annotation yields no hints, as upstream does with too little
	// node information.
	Complete bool
}

// Input is everything a Plan is made from. Nothing in it is modified.
type Input struct {
	Service *corev1.Service
	// Pods are the Pods the Service's selector matched. Pods from another
	// namespace or that do not match the selector are reported and skipped.
	Pods  []*corev1.Pod
	Nodes Nodes
	// Slices are the live EndpointSlices of the Service. Only those carrying
	// Options.ManagedBy are planned; others are returned in Plan.Foreign.
	Slices []*discovery.EndpointSlice
}

// Plan is the outcome of planning one Service.
type Plan struct {
	Service ServiceDecision
	// AddressTypes served by the Service, IPv4 before IPv6.
	AddressTypes []discovery.AddressType

	// Create holds new slices (GenerateName set, Name empty).
	Create []*discovery.EndpointSlice
	// Update holds full objects to PUT, each with the resourceVersion read.
	Update []*discovery.EndpointSlice
	// Delete holds the live slices to delete.
	Delete []*discovery.EndpointSlice
	// Unchanged holds the live slices that stay as they are.
	Unchanged []*discovery.EndpointSlice
	// Foreign holds the Service's slices managed by someone else; they are
	// never written.
	Foreign []*discovery.EndpointSlice
	// SuppressedCreates counts creates dropped because the Service is being
	// deleted.
	SuppressedCreates int

	// Pods has one decision per input Pod, sorted by namespace and name.
	Pods []PodDecision
	// Warnings are what upstream logs, returns as an error or records as an
	// event, in a stable order.
	Warnings []Warning

	live map[string]*discovery.EndpointSlice
}

// Live returns our live slice of that name as it was given, or nil.
func (p *Plan) Live(name string) *discovery.EndpointSlice { return p.live[name] }

// Final returns the Service's slices as the plan leaves them: unchanged,
// then updated, then created.
func (p *Plan) Final() []*discovery.EndpointSlice {
	out := make([]*discovery.EndpointSlice, 0, len(p.Unchanged)+len(p.Update)+len(p.Create))
	out = append(out, p.Unchanged...)
	out = append(out, p.Update...)
	return append(out, p.Create...)
}

// InSync reports whether the plan writes nothing.
func (p *Plan) InSync() bool {
	return len(p.Create) == 0 && len(p.Update) == 0 && len(p.Delete) == 0
}

// ServiceDecision says whether and how the Service is planned.
type ServiceDecision struct {
	Namespace, Name string
	// Reason is ServicePlanned, or why no slices are planned for it.
	Reason  Reason
	Message string
}

// Planned reports whether slices are planned for the Service at all.
func (d ServiceDecision) Planned() bool {
	return d.Reason == ServicePlanned || d.Reason == ServiceTerminating || d.Reason == ServiceMirrored
}

// PodDecision says whether one Pod is an endpoint and why.
type PodDecision struct {
	Namespace, Name string
	// Included is true when the Pod is an endpoint for at least one
	// address type.
	Included bool
	// Reason is set when the Pod is excluded.
	Reason  Reason
	Message string
	// Endpoints are the Pod's endpoints, one per served address type for
	// which it has an address, in AddressTypes order.
	Endpoints []PlannedEndpoint
	// Notes explain partial inclusion or degraded data (a Service port not
	// found in the Pod, an address family not served, an unreadable Node).
	Notes []Note
}

// PlannedEndpoint is one endpoint of a Pod with the ports of its group.
type PlannedEndpoint struct {
	AddressType discovery.AddressType
	Endpoint    discovery.Endpoint
	Ports       []discovery.EndpointPort
}

// Note is a remark on an included Pod.
type Note struct {
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
}

// Warning is a problem worth telling the user about that does not stop the plan.
type Warning struct {
	Reason Reason `json:"reason"`
	// Object names what the warning is about, e.g. "pod/web-1".
	Object  string `json:"object"`
	Message string `json:"message"`
}

// Reason is a stable identifier for a decision, note or warning. The values
// are part of the JSON output and must not change.
type Reason string

// Service verdicts.
const (
	ServicePlanned      Reason = "Planned"
	ServiceExternalName Reason = "ExternalName"
	ServiceNoSelector   Reason = "NoSelector"
	// ServiceTerminating: slices are updated and deleted but none created.
	ServiceTerminating Reason = "ServiceTerminating"
)

// Pod exclusion reasons and notes.
const (
	PodTerminal           Reason = "PodTerminal"
	NoPodIP               Reason = "NoPodIP"
	NodeNotFound          Reason = "NodeNotFound"
	NodeUnreadable        Reason = "NodeUnreadable"
	PortNotFound          Reason = "PortNotFound"
	AddressFamilyMismatch Reason = "AddressFamilyMismatch"
	WrongNamespace        Reason = "WrongNamespace"
	SelectorMismatch      Reason = "SelectorMismatch"
)

// Warnings about slices and hints.
const (
	ForeignSliceIgnored Reason = "ForeignSlice"
	HintsDisabled       Reason = "TopologyAwareHintsDisabled"
)
