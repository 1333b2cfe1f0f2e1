package proxyexpect

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

type portCase struct {
	name   string
	svc    *corev1.Service
	node   Node
	slices []*discoveryv1.EndpointSlice
	want   string
}

func runPortCases(t *testing.T, cases []portCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node := c.node
			if node == (Node{}) {
				node = nodeA
			}
			if got := summary(onlyPort(t, For(c.svc, c.slices, node))); got != c.want {
				t.Errorf("\ngot  %s\nwant %s", got, c.want)
			}
		})
	}
}

// Cluster traffic uses the ready endpoints; with none ready anywhere, the
// serving terminating ones; never a not-ready or a non-serving one.
func TestClusterReadyThenServingTerminating(t *testing.T) {
	runPortCases(t, []portCase{{
		name: "ready only",
		svc:  service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.1", state: "ready", node: "node-b"},
			ep{addr: "10.0.0.2", state: "terminating", node: "node-a"},
			ep{addr: "10.0.0.3", state: "notready", node: "node-a"})},
		want: `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="" has=true`,
	}, {
		name: "no ready: serving terminating",
		svc:  service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.2", state: "terminating", node: "node-b"},
			ep{addr: "10.0.0.3", state: "notready", node: "node-a"},
			ep{addr: "10.0.0.4", state: "terminating-notserving", node: "node-a"})},
		want: `cluster=[10.0.0.2:8080] local=[-] reachable=[10.0.0.2:8080] topology="" has=true`,
	}, {
		name: "nothing usable",
		svc:  service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.3", state: "notready", node: "node-a"},
			ep{addr: "10.0.0.4", state: "terminating-notserving", node: "node-a"})},
		want: `cluster=[] local=[-] reachable=[] topology="" has=false`,
	}, {
		name:   "no endpoints at all",
		svc:    service(),
		slices: []*discoveryv1.EndpointSlice{slice("s1")},
		want:   `cluster=[] local=[-] reachable=[] topology="" has=false`,
	}})
}

// internalTrafficPolicy Local uses the endpoints on this node: ready ones,
// else serving terminating ones, decided for Local on its own. The port
// still has endpoints when all of them are on other nodes.
func TestInternalTrafficPolicyLocal(t *testing.T) {
	runPortCases(t, []portCase{{
		name: "local ready only",
		svc:  service(internalLocal),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.1", state: "ready", node: "node-b"},
			ep{addr: "10.0.0.2", state: "ready", node: "node-a"},
			ep{addr: "10.0.0.3", state: "terminating", node: "node-a"})},
		want: `cluster=[-] local=[10.0.0.2:8080] reachable=[10.0.0.2:8080] topology="" has=true`,
	}, {
		name: "local falls back to terminating though remote ones are ready",
		svc:  service(internalLocal),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.1", state: "ready", node: "node-b"},
			ep{addr: "10.0.0.3", state: "terminating", node: "node-a"})},
		want: `cluster=[-] local=[10.0.0.3:8080] reachable=[10.0.0.3:8080] topology="" has=true`,
	}, {
		name: "none here, some elsewhere",
		svc:  service(internalLocal),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.1", state: "terminating", node: "node-b"},
			ep{addr: "10.0.0.2", state: "notready", node: "node-a"})},
		want: `cluster=[-] local=[] reachable=[] topology="" has=true`,
	}, {
		name: "an endpoint without nodeName is not local",
		svc:  service(internalLocal),
		slices: []*discoveryv1.EndpointSlice{slice("s1",
			ep{addr: "10.0.0.1", state: "ready"})},
		want: `cluster=[-] local=[] reachable=[] topology="" has=true`,
	}})
}

// externalTrafficPolicy Local applies only to a port reachable from
// outside (node port, external IP or VIP of the family); such a port uses
// Cluster too (for traffic from inside), and what it reaches is the union.
func TestExternalTrafficPolicyLocal(t *testing.T) {
	both := []*discoveryv1.EndpointSlice{slice("s1",
		ep{addr: "10.0.0.1", state: "ready", node: "node-b"},
		ep{addr: "10.0.0.3", state: "terminating", node: "node-a"})}
	runPortCases(t, []portCase{{
		name:   "node port: cluster and local, reachable is the union",
		svc:    service(nodePortLocal),
		slices: both,
		want:   `cluster=[10.0.0.1:8080] local=[10.0.0.3:8080] reachable=[10.0.0.1:8080 10.0.0.3:8080] topology="" has=true`,
	}, {
		name: "ClusterIP Service: the policy does not apply",
		svc: service(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}),
		slices: both,
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="" has=true`,
	}, {
		name: "external IP of the family",
		svc: service(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.ExternalIPs = []string{"192.0.2.1"}
		}),
		slices: both,
		want:   `cluster=[10.0.0.1:8080] local=[10.0.0.3:8080] reachable=[10.0.0.1:8080 10.0.0.3:8080] topology="" has=true`,
	}, {
		name: "external IP of the other family only",
		svc: service(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.ExternalIPs = []string{"2001:db8::1"}
		}),
		slices: both,
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="" has=true`,
	}, {
		name:   "load balancer without node ports, in VIP mode",
		svc:    service(loadBalancerLocal(0, "198.51.100.1", nil)),
		slices: both,
		want:   `cluster=[10.0.0.1:8080] local=[10.0.0.3:8080] reachable=[10.0.0.1:8080 10.0.0.3:8080] topology="" has=true`,
	}, {
		name:   "load balancer without node ports, in Proxy mode",
		svc:    service(loadBalancerLocal(0, "198.51.100.1", ptr(corev1.LoadBalancerIPModeProxy))),
		slices: both,
		want:   `cluster=[10.0.0.1:8080] local=[-] reachable=[10.0.0.1:8080] topology="" has=true`,
	}, {
		name: "internal Local and external Local: no Cluster for a port only the cluster IP reaches",
		svc: service(internalLocal, func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}),
		slices: both,
		want:   `cluster=[-] local=[10.0.0.3:8080] reachable=[10.0.0.3:8080] topology="" has=true`,
	}})
}

func loadBalancerLocal(nodePort int32, ip string, mode *corev1.LoadBalancerIPMode) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 30100
		s.Spec.Ports[0].NodePort = nodePort
		if ip != "" {
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip, IPMode: mode}}
		}
	}
}
