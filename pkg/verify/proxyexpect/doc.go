// Package proxyexpect computes what kube-proxy on one node should program
// for a Service, from the Service, its EndpointSlices as published in the
// API and the node's name and zone: per IP family and service port, the
// endpoints of the Cluster traffic policy, those of the Local policy, the
// union reachable from the node, whether the port has endpoints anywhere,
// and, for a LoadBalancer Service with externalTrafficPolicy Local, the
// count its health check node port reports. It is the expected side of
// `kubectl slices verify`, which holds it against what each node's proxy
// programmed.
//
// The rules are kube-proxy's at Kubernetes 1.36 (pkg/proxy:
// endpointslicecache.go, serviceport.go, servicechangetracker.go,
// topology.go, and the informer filters of cmd/kube-proxy):
//
//   - Which Services: none labelled service.kubernetes.io/service-proxy-name,
//     headless (no cluster IP) or of type ExternalName; one family per
//     cluster IP.
//   - Which slices: the Service's namespace and kubernetes.io/service-name
//     label, the family's address type, not labelled
//     service.kubernetes.io/headless; the managed-by label is not read.
//   - The endpoint set: slice ports matched to service ports by name and
//     protocol; an endpoint is its first address and the slice port's
//     number, deduplicated by "IP:port" with a running copy preferred to a
//     terminating one.
//   - Categorisation: ready endpoints, falling back to serving terminating
//     ones when there is none, for Cluster and for Local independently;
//     Local used for internalTrafficPolicy Local and, on ports reachable
//     from outside, externalTrafficPolicy Local; Cluster for the rest.
//   - Topology: forNodes hints (PreferSameNode) before forZones hints
//     (PreferSameZone, the node's topology.kubernetes.io/zone label), each
//     only when every ready endpoint carries that kind of hint and one is
//     meant for this node; otherwise every ready endpoint. The hints are
//     read whatever the Service's trafficDistribution says.
//
// Where upstream's result depends on Go's map order (two running, or two
// terminating, copies of one IP:port in different slices), the slices are
// taken in name order: the result is one upstream can produce, always the
// same one. The AllowServiceExternalIPs feature gate is taken as its
// default, on.
//
// The package also derives the names kube-proxy gives the chains it
// programs for a port and an endpoint (iptables KUBE-SVC-, KUBE-SVL-,
// KUBE-EXT-, KUBE-FW-, KUBE-SEP-; nftables service-, local-, external-,
// firewall-, endpoint-) and names its nftables maps, so that a node's rules
// can be read by name rather than dumped.
//
// test/upstreamdiff holds the expected set to kube-proxy's own code on
// random inputs, and the expected set and iptables chain names together to
// the chains kube-proxy's iptables proxier writes; the nftables names are
// checked against the vectors of kube-proxy's own tests.
// The package is pure: no I/O, no clock, inputs never modified.
package proxyexpect
