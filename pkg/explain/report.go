package explain

import (
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// SchemaVersion is bumped on any incompatible change to Report.
const SchemaVersion = "kubectl-slices.explain/v1"

// Report is the whole explanation of one Service.
type Report struct {
	Schema   string      `json:"schema"`
	Service  ServiceInfo `json:"service"`
	Selector Selection   `json:"selector"`
	Pods     []Pod       `json:"pods"`
	Managers []Manager   `json:"managers"`
	Drift    []Drift     `json:"drift"`
	// Warnings are the planner's, also printed on stderr.
	Warnings []string `json:"warnings"`
	// Defaulted lists, per object, what explain --local filled in as the
	// API server would have; empty for objects read from the cluster.
	Defaulted []string  `json:"defaulted"`
	InSync    bool      `json:"inSync"`
	Diagnosis Diagnosis `json:"diagnosis"`
	// ControllerBehind, when kube-controller-manager's slices do not
	// publish the desired endpoints, says since when and why.
	ControllerBehind *judge.Behind `json:"controllerBehind,omitempty"`
	// EndpointsDrift, when the Endpoints controller's v1 Endpoints object
	// disagrees with the Pods, says how (reported only: not ours).
	EndpointsDrift string `json:"endpointsDrift,omitempty"`
	// ClusterRelease is the API server's release (v1.32) when known.
	ClusterRelease string `json:"clusterRelease,omitempty"`
	// VersionNotes say where that release's kube-controller-manager
	// publishes other endpoints than the plan on the same inputs.
	VersionNotes []VersionNote `json:"versionNotes"`
}

// ServiceInfo describes the Service and whether slices are expected for it.
type ServiceInfo struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	// Headless: clusterIP None.
	Headless                 bool              `json:"headless"`
	Selector                 map[string]string `json:"selector,omitempty"`
	Ports                    []Port            `json:"ports"`
	AddressTypes             []string          `json:"addressTypes"`
	PublishNotReadyAddresses bool              `json:"publishNotReadyAddresses"`
	TrafficDistribution      string            `json:"trafficDistribution,omitempty"`
	TopologyMode             string            `json:"topologyMode,omitempty"`
	// Verdict is the planner's: Planned, ExternalName, NoSelector or
	// ServiceTerminating.
	Verdict reconcile.Reason `json:"verdict"`
	Message string           `json:"message"`
}

// Port is a Service port and the container port it targets.
type Port struct {
	Name       string `json:"name,omitempty"`
	Port       int32  `json:"port"`
	TargetPort string `json:"targetPort"`
	Protocol   string `json:"protocol"`
}

// Selection is how many Pods the selector matched, and, when none, the Pods
// that match all but one selector label.
type Selection struct {
	Matched    int        `json:"matched"`
	NearMisses []NearMiss `json:"nearMisses"`
}

// NearMiss is a Pod one label away from the selector.
type NearMiss struct {
	Pod   string `json:"pod"`
	Label string `json:"label"`
	Want  string `json:"want"`
	// Have is the Pod's value; Missing is set when it has no such label.
	Have    string `json:"have,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// Pod is one Pod's decision.
type Pod struct {
	Name     string            `json:"name"`
	Included bool              `json:"included"`
	Reason   reconcile.Reason  `json:"reason,omitempty"`
	Message  string            `json:"message,omitempty"`
	Node     string            `json:"node,omitempty"`
	Zone     string            `json:"zone,omitempty"`
	Ready    *bool             `json:"ready,omitempty"`
	Serving  *bool             `json:"serving,omitempty"`
	Term     *bool             `json:"terminating,omitempty"`
	Endpoint []EndpointSummary `json:"endpoints"`
	Notes    []reconcile.Note  `json:"notes"`
	// MissingPorts are the Service ports (name, or number when unnamed) an
	// included Pod has no target port for: it receives no traffic on them.
	MissingPorts []string `json:"missingPorts"`
}

// EndpointSummary is one endpoint of a Pod: its address and resolved ports.
type EndpointSummary struct {
	AddressType string   `json:"addressType"`
	Addresses   []string `json:"addresses"`
	Ports       []string `json:"ports"`
	Hostname    string   `json:"hostname,omitempty"`
	Hints       []string `json:"hints"`
}

// Manager is what one managed-by value publishes for the Service.
type Manager struct {
	ManagedBy string `json:"managedBy"`
	// Role is ours, controller, mirroring or other.
	Role      string `json:"role"`
	Slices    int    `json:"slices"`
	Endpoints int    `json:"endpoints"`
	Ready     int    `json:"ready"`
	// OverLimit names slices above --max-endpoints-per-slice.
	OverLimit []string `json:"overLimit"`
}

// Drift is one difference between what is published and what is desired.
type Drift struct {
	// Kind is Missing, Stale, Changed, Duplicate or Conflict.
	Kind        DriftKind `json:"kind"`
	AddressType string    `json:"addressType"`
	Address     string    `json:"address"`
	Pod         string    `json:"pod,omitempty"`
	ManagedBy   []string  `json:"managedBy"`
	Message     string    `json:"message"`
}

// DriftKind names a kind of drift.
type DriftKind string

const (
	// Missing: desired, but no manager publishes it.
	Missing DriftKind = "Missing"
	// Stale: published, but not desired (Pod gone, excluded or unselected).
	Stale DriftKind = "Stale"
	// Changed: published with other conditions, node, zone or ports.
	Changed DriftKind = "Changed"
	// Duplicate: one manager publishes it in more than one slice.
	Duplicate DriftKind = "Duplicate"
	// Conflict: managers publish it with different conditions.
	Conflict DriftKind = "Conflict"
)

// Diagnosis is the verdict in one line, and the command that acts on it.
type Diagnosis struct {
	Summary string `json:"summary"`
	Command string `json:"command,omitempty"`
}
