package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// service is a Service of any shape the API server accepts.
func (g *gen) service() *corev1.Service {
	r := g.r
	s := svc("web")
	s.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	switch g.n(7) {
	case 0:
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		s.Spec.ClusterIP = "fd00::10"
	case 1:
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	case 2:
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
		s.Spec.ClusterIP = corev1.ClusterIPNone
	case 3:
		s.Spec.ClusterIP = corev1.ClusterIPNone
	case 4:
		s.Spec.IPFamilies, s.Spec.ClusterIP = nil, "" // old apiserver, headless: both types
	case 5:
		s.Spec.IPFamilies, s.Spec.ClusterIP = nil, pick(r, "10.0.0.1", "fd00::1")
	}
	s.Spec.Ports = nil
	nports := g.n(4)
	for i := 0; i < nports; i++ {
		p := corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Port: int32(80 + i),
			Protocol: pick(r, corev1.ProtocolTCP, corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)}
		if p.Protocol == corev1.ProtocolSCTP {
			g.tag("service: SCTP port")
		}
		if nports == 1 && g.one(2) {
			p.Name = "" // the API allows an unnamed port only when it is the only one
			g.tag("service: unnamed port")
		}
		if g.one(2) {
			p.TargetPort = intstr.FromString(pick(r, "http", "metrics", "dns"))
		} else {
			p.TargetPort = intstr.FromInt32(int32(8000 + g.n(3)))
		}
		if g.one(4) {
			p.AppProtocol = ptrTo(pick(r, "http", "kubernetes.io/h2c"))
		}
		s.Spec.Ports = append(s.Spec.Ports, p)
	}
	if s.Spec.PublishNotReadyAddresses = g.one(4); s.Spec.PublishNotReadyAddresses {
		g.tag("service: publishNotReadyAddresses")
	}
	switch g.n(6) {
	case 0:
		s.Spec.TrafficDistribution = ptrTo(pick(r, corev1.ServiceTrafficDistributionPreferClose,
			corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode, "Bogus"))
		g.tag("service: trafficDistribution")
	case 1:
		s.Annotations = map[string]string{pick(r, corev1.AnnotationTopologyMode, corev1.DeprecatedAnnotationTopologyAwareHints): pick(r, "Auto", "auto", "Disabled")}
		if g.one(2) {
			s.Spec.TrafficDistribution = ptrTo(corev1.ServiceTrafficDistributionPreferClose)
		}
		g.tag("service: topology annotation")
	}
	switch g.n(5) {
	case 0:
		s.Labels = map[string]string{"team": pick(r, "a", "b")}
	case 1:
		s.Labels = map[string]string{discovery.LabelManagedBy: "hijack", "tier": "x"}
		g.tag("service: labels with reserved keys")
	case 2:
		s.Labels = map[string]string{discovery.LabelServiceName: "other", corev1.IsHeadlessService: "", "team": "a"}
		g.tag("service: labels with reserved keys")
	}
	switch g.n(40) {
	case 0:
		s.Spec.Type = corev1.ServiceTypeExternalName
		s.Spec.ExternalName = "example.com"
		g.tag("service: ExternalName")
	case 1:
		s.Spec.Selector = nil
		g.tag("service: no selector")
	case 2:
		t := metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
		s.DeletionTimestamp = &t
		g.tag("service: being deleted")
	}
	return s
}

// nodes are 1-5 Nodes, some not ready, without zone or in the control plane.
func (g *gen) nodes() Nodes {
	nodes := map[string]*corev1.Node{}
	for i := 0; i < 1+g.n(5); i++ {
		n := node(fmt.Sprintf("node-%d", i), pick(g.r, "zone-a", "zone-b", "zone-c", "zone-a", "zone-b"), fmt.Sprint(1+g.n(8)))
		switch g.n(12) {
		case 0:
			delete(n.Labels, corev1.LabelTopologyZone)
		case 1:
			n.Status.Conditions[0].Status = corev1.ConditionFalse
		case 2:
			n.Labels["node-role.kubernetes.io/control-plane"] = ""
		}
		nodes[n.Name] = n
	}
	return Nodes{ByName: nodes, Complete: true}
}

// pod i of the Service, in any state a Pod can be in.
func (g *gen) pod(s *corev1.Service, i int, nodes Nodes) *corev1.Pod {
	r := g.r
	p := pod(s, i)
	p.UID = types.UID(fmt.Sprintf("uid-%d-%d", i, g.n(2)))
	names := slices.Sorted(maps.Keys(nodes.ByName))
	p.Spec.NodeName = pick(r, append(names, "gone-node")...)
	if g.one(8) {
		p.Spec.NodeName = pick(r, names...)
	}
	p.Status.Phase = pick(r, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown)
	v4 := fmt.Sprintf("10.1.%d.%d", g.n(2), g.n(40))
	v6 := fmt.Sprintf("fd00:0:0:0::%x", g.n(40))
	switch g.n(12) {
	case 0:
		ips()(p)
	case 1:
		ips(v6)(p)
	case 2:
		ips(v4, v6)(p)
	case 3:
		ips(v6, v4)(p)
	case 4:
		p.Status.PodIPs = nil // podIP without podIPs: eligible, yet no address
		g.tag("pod: podIP without podIPs")
	case 5:
		ips(fmt.Sprintf("010.001.%03d.%03d", g.n(2), g.n(40)))(p)
		g.tag("pod: IPv4 with leading zeros")
	case 6:
		ips("::ffff:"+v4, v6)(p)
		g.tag("pod: IPv4-mapped IPv6 address")
	default:
		ips(v4)(p)
	}
	switch g.n(8) {
	case 0, 1:
		notReady(p)
	case 2:
		p.Status.Conditions = nil
		g.tag("pod: no Ready condition")
	}
	if g.one(6) {
		terminating(p)
		g.tag("pod: terminating")
	}
	if g.one(5) {
		p.Spec.Hostname, p.Spec.Subdomain = fmt.Sprintf("h%d", i%7), pick(r, s.Name, "other")
		g.tag("pod: hostname")
	}
	for _, name := range []string{"http", "metrics", "dns"} {
		if g.one(2) {
			containerPort(name, int32(9000+g.n(2)), pick(r, corev1.ProtocolTCP, corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP))(p)
		}
	}
	switch g.n(8) {
	case 0:
		sidecarPort("http", 9100)(p)
		g.tag("pod: sidecar (restartable init container) port")
	case 1:
		// A plain init container's ports are never targets.
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "init",
			Ports: []corev1.ContainerPort{{Name: pick(r, "http", "metrics", "dns"), ContainerPort: 9200, Protocol: corev1.ProtocolTCP}}})
		g.tag("pod: non-restartable init container port")
	}
	return p
}
