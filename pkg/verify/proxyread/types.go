package proxyread

import (
	"context"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// Mode is the proxy mode a kube-proxy runs in.
type Mode string

const (
	ModeNftables Mode = "nftables"
	ModeIptables Mode = "iptables"
)

// Want is one service port of one IP family whose rules are to be read: its
// ref (which names its chains), its cluster IP, port and protocol (which key
// its dispatch). Both policy chains are read whatever the port expects, so
// that a chain present where none is expected is found too; the endpoints a
// chain sends to are read from what the node holds (the service chain's
// map, or the endpoint chains it jumps to and their DNAT rules), never
// derived from the expected endpoints or from hashed names.
type Want struct {
	Ref       proxyexpect.PortRef
	Family    string // "IPv4" or "IPv6"
	ClusterIP string
	Port      proxyexpect.Port
}

// Chain is what the node holds in one chain kube-proxy derives for a port.
type Chain struct {
	Name    string
	Present bool
	// Endpoints are the "IP:port" the chain sends traffic to (through its
	// endpoint chains' DNAT rules), sorted, without duplicates.
	Endpoints []string
	// NoDNAT are the endpoint chains it jumps to that were read completely
	// and hold no DNAT rule, sorted: kube-proxy never leaves one so (a
	// rule deleted by hand), and traffic sent to one is not delivered.
	NoDNAT []string
	// Rules are the lines read, the evidence, bounded.
	Rules []string
	// Unreadable says why the chain could not be read ("" when it was):
	// the node's answer was cut, malformed or an error other than "no such
	// chain". An unreadable chain is never Present and has no Endpoints
	// nor NoDNAT.
	Unreadable string
}

// PortState is one Want as the node programmed it.
type PortState struct {
	Want Want
	// Dispatch: the cluster IP's dispatch exists (nftables: the service-ips
	// element; iptables: the KUBE-SERVICES rule jumping to the port's chain).
	Dispatch         bool
	DispatchEvidence string
	// DispatchTarget is the chain the dispatch sends to: the Cluster
	// chain, or the Local chain under internalTrafficPolicy Local.
	DispatchTarget string
	// NoEndpoints: the port is programmed as having no endpoints (nftables:
	// the no-endpoint-services element; iptables: the REJECT in
	// KUBE-SERVICES / KUBE-EXTERNAL-SERVICES).
	NoEndpoints bool
	// NoEndpointsVerdict is "reject" (no endpoints anywhere) or "drop"
	// (internalTrafficPolicy Local without a local endpoint), as read.
	NoEndpointsVerdict  string
	NoEndpointsEvidence string
	// Unreadable says why the dispatch or the no-endpoint entry could not
	// be read ("" when both were); Dispatch and NoEndpoints are then false.
	Unreadable string
	// Cluster is the Cluster policy's chain (service- / KUBE-SVC-), Local
	// the Local policy's (local- / KUBE-SVL-).
	Cluster, Local Chain
}

// Reading is everything read from one node.
type Reading struct {
	Mode  Mode
	Ports []PortState
	// Execs and Bytes count the execs made and the bytes they returned.
	Execs int
	Bytes int64
}

// Exec runs argv in the node's kube-proxy container with stdin and returns
// at most limit bytes of its standard output; the caller bounds its time by
// ctx. An error that is the command's own failure carries its exit code.
type Exec func(ctx context.Context, argv []string, stdin []byte, limit int64) (stdout []byte, err error)

// Reader reads one node's programmed rules for the wanted ports. It is an
// interface so that another proxy (one that is not kube-proxy) can be
// added with its own tests.
type Reader interface {
	Read(ctx context.Context, exec Exec, want []Want) (Reading, error)
}
