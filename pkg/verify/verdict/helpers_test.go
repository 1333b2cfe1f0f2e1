package verdict

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

var (
	t0      = time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	changed = t0.Add(-10 * time.Second) // when the slices last changed
)

func ptr[T any](v T) *T { return &v }

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// web is default/web, cluster IP 10.96.0.10, port http 80/TCP, with one
// ready endpoint per address given (on node-a).
func web(addrs ...string) Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-abc",
		Labels:      map[string]string{discoveryv1.LabelServiceName: "web"},
		Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: changed.Format(time.RFC3339Nano)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}}}
	for _, a := range addrs {
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, NodeName: ptr("node-a"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)}})
	}
	return Service{Service: svc, Slices: []*discoveryv1.EndpointSlice{sl}, Planned: []*discoveryv1.EndpointSlice{sl}}
}

// programmed is what a correct kube-proxy programs for the Services on n.
func programmed(svcs []Service, n *corev1.Node) proxyread.Reading {
	r := proxyread.Reading{Mode: proxyread.ModeNftables}
	for _, w := range Wants(svcs, n) {
		st := proxyread.PortState{Want: w, Dispatch: w.Port.HasEndpoints, NoEndpoints: !w.Port.HasEndpoints}
		st.Cluster.Name = "service-X-" + w.Ref.Service
		if w.Port.UsesCluster && len(w.Port.Cluster) > 0 {
			st.Cluster.Present = true
			for _, ep := range w.Port.Cluster {
				st.Cluster.Endpoints = append(st.Cluster.Endpoints, ep.String())
			}
		}
		r.Ports = append(r.Ports, st)
	}
	return r
}

// healthyNode is a kube-proxy node whose tiers all answered, synced at
// lastSync.
func healthyNode(n *corev1.Node, r proxyread.Reading, lastSync time.Time) NodeState {
	return NodeState{Node: n, Proxy: KubeProxy, Pod: "kube-system/kube-proxy-a",
		Healthz: Answered(Healthz{Healthy: true}),
		Metrics: Answered(Metrics{Mode: "nftables", LastSync: map[string]time.Time{"IPv4": lastSync}}),
		Rules:   Answered(r)}
}

func run(svcs []Service, nodes ...NodeState) Report {
	return Judge(Input{Services: svcs, Nodes: nodes, Now: t0, HealthTimeout: time.Minute, Target: "svc/web"})
}

const (
	corev1InternalLocal = corev1.ServiceInternalTrafficPolicyLocal
	corev1LastChange    = corev1.EndpointsLastChangeTriggerTime
)

const discoveryv1LabelServiceName = "kubernetes.io/service-name"
