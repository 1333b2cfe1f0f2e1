package proxyexpect

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

// service returns a single-stack IPv4 ClusterIP Service "ns/web" with one
// TCP port "http" 80; opts adjust it.
func service(opts ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  "10.96.0.10",
			ClusterIPs: []string{"10.96.0.10"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
	for _, o := range opts {
		o(svc)
	}
	return svc
}

func internalLocal(s *corev1.Service) {
	s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
}

// nodePortLocal makes the Service a NodePort one with
// externalTrafficPolicy Local.
func nodePortLocal(s *corev1.Service) {
	s.Spec.Type = corev1.ServiceTypeNodePort
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	s.Spec.Ports[0].NodePort = 30080
}

// ep is an endpoint: "ready", "notready", "terminating" (serving),
// "terminating-notserving"; on a node; with zone and node hints when given.
type ep struct {
	addr, state, node string
	zones, nodes      []string
}

func (e ep) api() discoveryv1.Endpoint {
	out := discoveryv1.Endpoint{Addresses: []string{e.addr}}
	if e.node != "" {
		out.NodeName = ptr(e.node)
	}
	switch e.state {
	case "ready":
		out.Conditions = discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)}
	case "notready":
		out.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(false)}
	case "terminating":
		out.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}
	case "terminating-notserving":
		out.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(true)}
	default:
		panic("unknown state " + e.state)
	}
	if e.zones != nil || e.nodes != nil {
		out.Hints = &discoveryv1.EndpointHints{}
		for _, z := range e.zones {
			out.Hints.ForZones = append(out.Hints.ForZones, discoveryv1.ForZone{Name: z})
		}
		for _, n := range e.nodes {
			out.Hints.ForNodes = append(out.Hints.ForNodes, discoveryv1.ForNode{Name: n})
		}
	}
	return out
}

// slice returns an IPv4 slice of "ns/web" with port "http"/TCP 8080.
func slice(name string, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, e.api())
	}
	return s
}

var nodeA = Node{Name: "node-a", Zone: "zone-a"}

// ips prints endpoints as "IP:port" joined by spaces, "-" for nil and
// "" for empty.
func ips(eps []Endpoint) string {
	if eps == nil {
		return "-"
	}
	var out []string
	for _, e := range eps {
		out = append(out, e.String())
	}
	return strings.Join(out, " ")
}

// onlyPort returns the single port of the single family, failing the test
// otherwise.
func onlyPort(t *testing.T, exp Expected) Port {
	t.Helper()
	if len(exp.Families) != 1 || len(exp.Families[0].Ports) != 1 {
		t.Fatalf("want one family with one port, got %+v", exp)
	}
	return exp.Families[0].Ports[0]
}

// summary prints a port's lists and flags for comparison.
func summary(p Port) string {
	return fmt.Sprintf("cluster=[%s] local=[%s] reachable=[%s] topology=%q has=%t",
		ips(p.Cluster), ips(p.Local), ips(p.Reachable), p.Topology, p.HasEndpoints)
}
