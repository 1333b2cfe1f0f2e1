package proxyexpect

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Zone hints narrow Cluster to the endpoints hinted for the node's zone,
// unless a ready endpoint lacks a zone hint, none is hinted for the zone,
// or the node has no zone label. Not-ready endpoints do not count, and the
// Service's trafficDistribution is not read.
func TestZoneHints(t *testing.T) {
	zoned := func(extra ...ep) []*discoveryv1.EndpointSlice {
		return []*discoveryv1.EndpointSlice{slice("s1", append([]ep{
			{addr: "10.0.0.1", state: "ready", node: "node-a", zones: []string{"zone-a"}},
			{addr: "10.0.0.2", state: "ready", node: "node-b", zones: []string{"zone-b"}},
		}, extra...)...)}
	}
	runPortCases(t, []portCase{{
		name:   "hints used",
		svc:    service(),
		slices: zoned(),
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="PreferSameZone" has=true`,
	}, {
		name: "hints used without trafficDistribution on the Service, with any value of it",
		svc: service(func(s *corev1.Service) {
			s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferSameNode)
		}),
		slices: zoned(),
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="PreferSameZone" has=true`,
	}, {
		name:   "a ready endpoint without a zone hint: ignored",
		svc:    service(),
		slices: zoned(ep{addr: "10.0.0.3", state: "ready", node: "node-c"}),
		want:   `cluster=[10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080] local=[-] reachable=[10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080] topology="" has=true`,
	}, {
		name:   "a not-ready endpoint without a zone hint does not count",
		svc:    service(),
		slices: zoned(ep{addr: "10.0.0.3", state: "terminating", node: "node-c"}),
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="PreferSameZone" has=true`,
	}, {
		name:   "no endpoint for this zone: ignored",
		svc:    service(),
		node:   Node{Name: "node-c", Zone: "zone-c"},
		slices: zoned(),
		want:   `cluster=[10.0.0.1:8080 10.0.0.2:8080] local=[-] reachable=[10.0.0.1:8080 10.0.0.2:8080] topology="" has=true`,
	}, {
		name:   "node without a zone label: ignored",
		svc:    service(),
		node:   Node{Name: "node-a"},
		slices: zoned(),
		want:   `cluster=[10.0.0.1:8080 10.0.0.2:8080] local=[-] reachable=[10.0.0.1:8080 10.0.0.2:8080] topology="" has=true`,
	}, {
		name: "only terminating endpoints: hints play no part",
		svc:  service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.1", state: "terminating", node: "node-a", zones: []string{"zone-b"}},
			ep{addr: "10.0.0.2", state: "terminating", node: "node-b", zones: []string{"zone-b"}})},
		want: `cluster=[10.0.0.1:8080 10.0.0.2:8080] local=[-] reachable=[10.0.0.1:8080 10.0.0.2:8080] topology="" has=true`,
	}, {
		name:   "Local policy: the local endpoint in another zone is reachable too",
		svc:    service(nodePortLocal),
		node:   Node{Name: "node-b", Zone: "zone-a"},
		slices: zoned(),
		want:   `cluster=[10.0.0.1:8080] local=[10.0.0.2:8080] reachable=[10.0.0.1:8080 10.0.0.2:8080] topology="PreferSameZone" has=true`,
	}})
}

// forNodes hints (PreferSameNode) come before zone hints, under the same
// conditions: every ready endpoint has one and one names this node.
func TestNodeHints(t *testing.T) {
	both := func(extra ...ep) []*discoveryv1.EndpointSlice {
		return []*discoveryv1.EndpointSlice{slice("s1", append([]ep{
			{addr: "10.0.0.1", state: "ready", node: "node-a", zones: []string{"zone-a"}, nodes: []string{"node-a"}},
			{addr: "10.0.0.2", state: "ready", node: "node-b", zones: []string{"zone-a"}, nodes: []string{"node-b"}},
			{addr: "10.0.0.3", state: "ready", node: "node-c", zones: []string{"zone-b"}, nodes: []string{"node-c"}},
		}, extra...)...)}
	}
	runPortCases(t, []portCase{{
		name:   "node hints before zone hints",
		svc:    service(),
		slices: both(),
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="PreferSameNode" has=true`,
	}, {
		name:   "a ready endpoint without a node hint: zone hints",
		svc:    service(),
		slices: both(ep{addr: "10.0.0.4", state: "ready", node: "node-d", zones: []string{"zone-b"}}),
		want:   `cluster=[10.0.0.1:8080 10.0.0.2:8080] local=[-] reachable=[10.0.0.1:8080 10.0.0.2:8080] topology="PreferSameZone" has=true`,
	}, {
		name:   "no endpoint for this node: zone hints",
		svc:    service(),
		node:   Node{Name: "node-d", Zone: "zone-b"},
		slices: both(),
		want:   `cluster=[10.0.0.3:8080] local=[-] reachable=[10.0.0.3:8080] topology="PreferSameZone" has=true`,
	}, {
		name: "node hints alone, none for this node: every endpoint",
		svc:  service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.2", state: "ready", node: "node-b", nodes: []string{"node-b"}},
			ep{addr: "10.0.0.3", state: "ready", node: "node-c", nodes: []string{"node-c"}})},
		want: `cluster=[10.0.0.2:8080 10.0.0.3:8080] local=[-] reachable=[10.0.0.2:8080 10.0.0.3:8080] topology="" has=true`,
	}, {
		name: "an endpoint hinted for several nodes",
		svc:  service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.2", state: "ready", node: "node-b", nodes: []string{"node-b", "node-a"}},
			ep{addr: "10.0.0.3", state: "ready", node: "node-c", nodes: []string{"node-c"}})},
		want: `cluster=[10.0.0.2:8080] local=[-] reachable=[10.0.0.2:8080] topology="PreferSameNode" has=true`,
	}})
}
