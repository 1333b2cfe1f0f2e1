package verdict

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

// Status is a node's (or the whole run's) verdict.
type Status string

const (
	// OK: the node programmed what the API says.
	OK Status = "OK"
	// Drift: the node disagrees and is not merely behind.
	Drift Status = "DRIFT"
	// Pending: the node disagrees but last synced before the slices
	// changed and is still within its health timeout.
	Pending Status = "PENDING"
	// Unknown: the node could not be verified; Reason says why.
	Unknown Status = "UNKNOWN"
)

// Proxy kinds a node's Pods are recognised as.
const (
	KubeProxy  = "kube-proxy"
	Cilium     = "cilium"
	Calico     = "calico"
	KubeRouter = "kube-router"
)

// Tier names, least privilege first.
const (
	TierHealthz = "healthz"
	TierMetrics = "metrics"
	TierRules   = "rules"
)

// Input is everything Judge judges: one reading of the cluster.
type Input struct {
	Services []Service
	Nodes    []NodeState
	// Now is when the nodes were read; HealthTimeout is kube-proxy's
	// (twice its sync period) for when no last sync time is known.
	Now           time.Time
	HealthTimeout time.Duration
	// DNS is what each DNS replica answered, when they were read; Domain
	// is the cluster domain they serve, DNSTiming how long a replica may
	// serve an older answer (from the Corefile; Judge sets its Changed and
	// Now per Service and replica).
	DNS       []DNSReading
	Domain    string
	DNSTiming dnsexpect.Timing
	// Target is how the command was given its Services ("svc/web -n
	// default", "-A"), for the next command it suggests.
	Target string
	// OnlyNodes are the nodes --node named, when it did: Nodes holds
	// them alone, and the verdict says the others were not read.
	OnlyNodes []string
}

// Service is one selected Service and its slices as listed, and the
// slices its plan, made from those same slices, leaves (what the
// controller should publish).
type Service struct {
	Service *corev1.Service
	Slices  []*discoveryv1.EndpointSlice
	// Planned are the planned slices; PlanUnknown, when set, says why
	// there is no plan to hold the slices against (a selectorless
	// Service, a read that failed), and Planned is then not read.
	Planned     []*discoveryv1.EndpointSlice
	PlanUnknown string
	// PlanFailed: the plan could not be made (a read failed, not a
	// Service the controller does not plan): the run could not verify it.
	PlanFailed bool
}

// NodeState is what the cluster layer found for one node.
type NodeState struct {
	Node *corev1.Node
	// Proxy is the kind of the proxy Pod found on the node ("" none); Pod
	// is "namespace/name" of kube-proxy's.
	Proxy string
	Pod   string
	// Unreadable, when set, is why no tier was tried (no kube-proxy Pod,
	// a proxy that is not kube-proxy, a NotReady node).
	Unreadable string
	// NotReady: the node's Ready condition is not True (set with
	// Unreadable).
	NotReady bool
	Healthz  Result[Healthz]
	Metrics  Result[Metrics]
	// HealthChecks are the health check node port answers, by
	// "namespace/name" of Service.
	HealthChecks map[string]Result[HealthCheck]
	Rules        Result[proxyread.Reading]
}

// Result is a tier's answer or why there is none: Err is set when Value
// is nil and the tier was tried; both empty when it was not.
type Result[T any] struct {
	Value *T     `json:"value,omitempty"`
	Err   string `json:"error,omitempty"`
	// Denied is the right the caller lacks for the tier ("create
	// pods/exec in kube-system"), when that is why it was not tried.
	Denied string `json:"denied,omitempty"`
}

// Denied is a Result for a tier the caller may not use.
func Denied[T any](right string) Result[T] {
	return Result[T]{Err: "forbidden: needs " + right, Denied: right}
}

// Failed is a Result for a tier that was tried and failed.
func Failed[T any](err error) Result[T] { return Result[T]{Err: err.Error()} }

// Answered is a Result holding v.
func Answered[T any](v T) Result[T] { return Result[T]{Value: &v} }

// Healthz is kube-proxy's /healthz answer (pkg/proxy/healthcheck).
type Healthz struct {
	Healthy      bool      `json:"healthy"`
	LastUpdated  time.Time `json:"lastUpdated"`
	CurrentTime  time.Time `json:"currentTime"`
	NodeEligible *bool     `json:"nodeEligible,omitempty"`
}

// HealthCheck is a health check node port's answer: kube-proxy's own
// count of the Service's local endpoints.
type HealthCheck struct {
	LocalEndpoints int  `json:"localEndpoints"`
	ProxyHealthy   bool `json:"serviceProxyHealthy"`
}

// Metrics is what verify reads from kube-proxy's metrics: per IP family
// the last successful sync and the last queued one, the sync failures,
// and /proxyMode.
type Metrics struct {
	Mode         string               `json:"mode,omitempty"`
	LastSync     map[string]time.Time `json:"lastSync,omitempty"`
	LastQueued   map[string]time.Time `json:"lastQueued,omitempty"`
	SyncFailures float64              `json:"syncFailures"`
}

// Report is verify's answer.
type Report struct {
	Status   Status       `json:"status"`
	Services []ServiceRow `json:"services"`
	Nodes    []NodeRow    `json:"nodes"`
	// DNS holds a row per DNS replica of Input.DNS, in replica order.
	DNS []DNSRow `json:"dns,omitempty"`
	// OnlyNodes are the nodes --node named: the other nodes were not
	// read, so Status says nothing of them.
	OnlyNodes []string `json:"onlyNodes,omitempty"`
	Diagnosis string   `json:"diagnosis"`
	Next      string   `json:"next,omitempty"`
}

// ServiceRow is one Service as the API holds it.
type ServiceRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Slices    int    `json:"slices"`
	// LastChange is the newest last-change-trigger-time of its slices, or
	// their newest creation when none carries one.
	LastChange *time.Time `json:"lastChange,omitempty"`
	// Skipped says why no proxy programs it (headless, ExternalName,
	// another proxy's).
	Skipped string `json:"skipped,omitempty"`
	// Plan is whether the slices in the API give each node what the plan
	// gives it: "agrees", "differs" (Detail names the first difference)
	// or "unknown" (Detail says why).
	Plan       string `json:"plan"`
	PlanDetail string `json:"planDetail,omitempty"`
	// PlanFailed: the plan could not be made (see Service.PlanFailed).
	PlanFailed bool `json:"planFailed,omitempty"`
}

// DNSRow is one DNS replica's verdict over the selected Services
// (pkg/verify/dnsexpect's Result, combined over the Services), with which replica
// it is. Its status counts in the run's as a node's does.
type DNSRow struct {
	// Replica is "namespace/name" of the DNS Pod, Address what was asked;
	// UID is the Pod's (an Event names it), not printed.
	Replica string `json:"replica"`
	UID     string `json:"-"`
	Address string `json:"address,omitempty"`
	dnsexpect.Result
}

// NodeRow is one node's verdict.
type NodeRow struct {
	Node     string     `json:"node"`
	Proxy    string     `json:"proxy"`
	Mode     string     `json:"mode,omitempty"`
	Pod      string     `json:"pod,omitempty"`
	LastSync *time.Time `json:"lastSync,omitempty"`
	// LastQueued and SyncFailures are the metrics' last queued sync and
	// failed syncs; Healthy is /healthz's verdict; each absent when the
	// tier did not answer.
	LastQueued   *time.Time `json:"lastQueued,omitempty"`
	SyncFailures *float64   `json:"syncFailures,omitempty"`
	Healthy      *bool      `json:"healthy,omitempty"`
	Expected     int        `json:"expected"`
	Programmed   int        `json:"programmed"`
	Missing      []Finding  `json:"missing,omitempty"`
	Extra        []Finding  `json:"extra,omitempty"`
	Status       Status     `json:"status"`
	Reason       string     `json:"reason,omitempty"`
	Tiers        []TierRow  `json:"tiers"`
	// Unchecked says which of the node's rules could not be read (a cut
	// or malformed answer): they are neither missing nor extra.
	Unchecked []string `json:"unchecked,omitempty"`
	// Evidence is what the rules tier read, per service port.
	Evidence []Evidence `json:"evidence,omitempty"`
	// Execs and BytesRead are what reading the rules cost: the execs
	// into the proxy's container and the bytes they answered.
	Execs     int   `json:"execs,omitempty"`
	BytesRead int64 `json:"bytesRead,omitempty"`
}

// Evidence is what a node programmed for one service port of one family,
// as read: the dispatch, the no-endpoints verdict, and each policy chain
// with the endpoints it sends to and the rule lines read.
type Evidence struct {
	Service          string `json:"service"`
	Port             string `json:"port,omitempty"`
	Family           string `json:"family"`
	ClusterIP        string `json:"clusterIP"`
	Dispatch         bool   `json:"dispatch"`
	DispatchEvidence string `json:"dispatchEvidence,omitempty"`
	DispatchTarget   string `json:"dispatchTarget,omitempty"`
	NoEndpoints      bool   `json:"noEndpoints"`
	NoEndpointsRule  string `json:"noEndpointsVerdict,omitempty"`
	Unreadable       string `json:"unreadable,omitempty"`
	Cluster          Chain  `json:"cluster"`
	Local            Chain  `json:"local"`
}

// Chain is one chain as read.
type Chain struct {
	Name      string   `json:"name"`
	Present   bool     `json:"present"`
	Endpoints []string `json:"endpoints,omitempty"`
	// NoDNAT are the endpoint chains it jumps to that hold no DNAT rule.
	NoDNAT []string `json:"noDNAT,omitempty"`
	Rules  []string `json:"rules,omitempty"`
	// Unreadable says why the chain could not be read.
	Unreadable string `json:"unreadable,omitempty"`
}

func evidenceOf(ports []proxyread.PortState) []Evidence {
	out := make([]Evidence, 0, len(ports))
	for _, p := range ports {
		out = append(out, Evidence{Service: p.Want.Ref.Namespace + "/" + p.Want.Ref.Service, Port: p.Want.Ref.Port, Family: p.Want.Family,
			ClusterIP: p.Want.ClusterIP, Dispatch: p.Dispatch, DispatchEvidence: p.DispatchEvidence, DispatchTarget: p.DispatchTarget,
			NoEndpoints: p.NoEndpoints, NoEndpointsRule: p.NoEndpointsVerdict, Unreadable: p.Unreadable,
			Cluster: Chain(p.Cluster), Local: Chain(p.Local)})
	}
	return out
}

// Finding is one thing missing or extra on a node.
type Finding struct {
	// Service is "namespace/name", Port the service port's name ("" when
	// unnamed), Family "IPv4"/"IPv6".
	Service string `json:"service"`
	Port    string `json:"port,omitempty"`
	Family  string `json:"family,omitempty"`
	// What: "endpoint" (Endpoint of Chain), "dispatch", "no-endpoints"
	// or "health-check".
	What     string `json:"what"`
	Chain    string `json:"chain,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Since is when the Service's slices took their current form; Pending
	// says the node had not synced since.
	Since   *time.Time `json:"since,omitempty"`
	Pending bool       `json:"pending,omitempty"`
}

// TierRow says whether a tier answered on a node.
type TierRow struct {
	Tier   string `json:"tier"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}
