package proxyexpect

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// LabelServiceProxyName is the label that hands a Service to another
// service proxy: kube-proxy's Service informer selects only Services
// without it (cmd/kube-proxy/app/server.go).
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// Topology modes a service port's cluster endpoints are chosen by; the
// empty mode means every usable endpoint, hints ignored.
const (
	TopologyNone           = ""
	TopologyPreferSameZone = corev1.ServiceTrafficDistributionPreferSameZone
	TopologyPreferSameNode = corev1.ServiceTrafficDistributionPreferSameNode
)

// Node is what kube-proxy knows of the node it runs on: its name (the
// endpoints whose nodeName equals it are local, and it is matched against
// forNodes hints) and its topology.kubernetes.io/zone label, "" when the
// label is missing. kube-proxy reads no other label.
type Node struct {
	Name string
	Zone string
}

// NodeOf returns the Node kube-proxy derives from a Node object.
func NodeOf(n *corev1.Node) Node {
	return Node{Name: n.Name, Zone: n.Labels[corev1.LabelTopologyZone]}
}

// Expected is what kube-proxy on one node should program for one Service:
// one entry per IP family the Service has a cluster IP of, IPv4 first.
// Skipped says why there is none (a headless or ExternalName Service, or
// one another proxy serves); it is "" otherwise.
type Expected struct {
	Families []Family
	Skipped  string
}

// Family is the Service as one IP family's proxier sees it: each of its
// ports in the Service's order and, for a LoadBalancer Service with
// externalTrafficPolicy Local, the health check node port and the count
// that port reports (kube-proxy's own count of local ready endpoints).
type Family struct {
	Family    corev1.IPFamily
	ClusterIP string
	Ports     []Port
	// HealthCheckNodePort is 0 when kube-proxy serves no health check for
	// the Service.
	HealthCheckNodePort int32
	// LocalReady is the number of distinct IPs of ready endpoints on this
	// node, over every port of the Service's slices of this family.
	LocalReady int
}

// Port is one service port and the endpoints kube-proxy sends its traffic
// to from this node.
type Port struct {
	Name     string
	Protocol corev1.Protocol
	Port     int32
	NodePort int32
	// ExternallyAccessible: reachable by a node port, an external IP or a
	// load balancer VIP of this family, not only the cluster IP.
	ExternallyAccessible bool
	// UsesCluster and UsesLocal say which traffic policies the port ever
	// applies: Cluster for internalTrafficPolicy Cluster and for any
	// external traffic, Local for internalTrafficPolicy Local and for
	// external traffic under externalTrafficPolicy Local.
	UsesCluster bool
	UsesLocal   bool
	// Topology is the mode that chose Cluster (TopologyNone when hints are
	// ignored or the port does not use Cluster endpoints).
	Topology string
	// Cluster holds the endpoints of the Cluster policy, nil exactly when
	// the port does not use it; Local those of the Local policy, nil
	// exactly when it does not use it. Reachable is their union, never nil.
	// Each is sorted by String.
	Cluster   []Endpoint
	Local     []Endpoint
	Reachable []Endpoint
	// HasEndpoints is true when the port has a usable endpoint anywhere in
	// the cluster, even if none is reachable from this node: kube-proxy
	// then drops rather than rejects traffic it cannot route.
	HasEndpoints bool
}

// Endpoint is one endpoint as kube-proxy keys it: its first address,
// normalised as an IP, and the slice port's number.
type Endpoint struct {
	IP          string
	Port        int32
	Local       bool
	Ready       bool
	Serving     bool
	Terminating bool
	// ZoneHints and NodeHints are the endpoint's forZones and forNodes
	// names, sorted and without duplicates; nil when it has none.
	ZoneHints []string
	NodeHints []string
}

// String is "IP:port" ("[IP]:port" for IPv6), the key kube-proxy
// deduplicates and sorts endpoints by.
// It is net.JoinHostPort's form, written here because the package does no
// networking.
func (e Endpoint) String() string {
	host := e.IP
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(e.Port))
}
