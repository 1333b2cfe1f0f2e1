package upstreamdiff

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/json"
	utilnet "k8s.io/utils/net"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// Small pools, so that addresses repeat across slices, hints name the
// node or its zone, and port names meet.
var (
	nodePool  = []string{"node-a", "node-b", "node-c"}
	zonePool  = []string{"zone-a", "zone-b"}
	v4Pool    = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "010.0.0.1", "not-an-ip"}
	v6Pool    = []string{"fd00::1", "fd00::2", "fd00::3", "fd00::4", "FD00:0::5", "::ffff:10.0.0.1"}
	namePool  = []string{"", "http", "dns"}
	protoPool = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}
)

func pick[T any](r *rand.Rand, from []T) T { return from[r.Intn(len(from))] }

// chance is true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

func randomProxyInput(s int64) proxyInput {
	r := rand.New(rand.NewSource(s))
	node := proxyexpect.Node{Name: pick(r, nodePool)}
	if !chance(r, 0.15) {
		node.Zone = pick(r, zonePool)
	}
	svc := randomProxyService(r)
	var slices []*discoveryv1.EndpointSlice
	for i, n := 0, r.Intn(5); i < n; i++ {
		slices = append(slices, randomProxySlice(r, svc, i))
	}
	return proxyInput{svc: svc, slices: slices, node: node}
}

func randomProxyService(r *rand.Rand) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"}}
	if chance(r, 0.04) {
		svc.Labels = map[string]string{"service.kubernetes.io/service-proxy-name": "other"}
	}
	svc.Spec.Type = pick(r, []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeClusterIP,
		corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeLoadBalancer})
	if chance(r, 0.03) {
		svc.Spec.Type = corev1.ServiceTypeExternalName
	}
	setClusterIPs(r, svc)
	if chance(r, 0.2) {
		for i, n := 0, 1+r.Intn(2); i < n; i++ {
			svc.Spec.ExternalIPs = append(svc.Spec.ExternalIPs, pick(r, []string{"192.0.2.1", "2001:db8::1", "bogus", ""}))
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && chance(r, 0.5) {
		for i, n := 0, 1+r.Intn(2); i < n; i++ {
			ing := corev1.LoadBalancerIngress{IP: pick(r, []string{"198.51.100.1", "2001:db8::2", ""}), Hostname: "lb.example"}
			ing.IPMode = pick(r, []*corev1.LoadBalancerIPMode{nil, ptr(corev1.LoadBalancerIPModeVIP), ptr(corev1.LoadBalancerIPModeProxy)})
			svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, ing)
		}
	}
	svc.Spec.InternalTrafficPolicy = pick(r, []*corev1.ServiceInternalTrafficPolicy{nil,
		ptr(corev1.ServiceInternalTrafficPolicyCluster), ptr(corev1.ServiceInternalTrafficPolicyLocal)})
	svc.Spec.ExternalTrafficPolicy = pick(r, []corev1.ServiceExternalTrafficPolicy{"",
		corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal, corev1.ServiceExternalTrafficPolicyLocal})
	if chance(r, 0.85) {
		svc.Spec.HealthCheckNodePort = 30100
	}
	if chance(r, 0.3) {
		svc.Spec.TrafficDistribution = ptr(pick(r, []string{corev1.ServiceTrafficDistributionPreferClose,
			corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}))
	}
	names := r.Perm(len(namePool))[:r.Intn(len(namePool)+1)]
	for i, n := range names {
		p := corev1.ServicePort{Name: namePool[n], Protocol: pick(r, protoPool), Port: int32(80 + i)}
		if svc.Spec.Type == corev1.ServiceTypeNodePort || (svc.Spec.Type == corev1.ServiceTypeLoadBalancer && chance(r, 0.8)) {
			p.NodePort = int32(30000 + i)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, p)
	}
	return svc
}

// setClusterIPs gives the Service one or two families in either order, a
// pre-dual-stack spec with clusterIP alone, or no cluster IP.
func setClusterIPs(r *rand.Rand, svc *corev1.Service) {
	v4, v6 := "10.96.0.10", "fd00:96::10"
	switch r.Intn(8) {
	case 0:
		svc.Spec.ClusterIP = pick(r, []string{corev1.ClusterIPNone, ""})
		return
	case 1:
		svc.Spec.ClusterIP = pick(r, []string{v4, v6}) // no ipFamilies
		return
	case 2, 3:
		svc.Spec.ClusterIPs, svc.Spec.IPFamilies = []string{v4}, []corev1.IPFamily{corev1.IPv4Protocol}
	case 4:
		svc.Spec.ClusterIPs, svc.Spec.IPFamilies = []string{v6}, []corev1.IPFamily{corev1.IPv6Protocol}
	case 5, 6:
		svc.Spec.ClusterIPs, svc.Spec.IPFamilies = []string{v4, v6}, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	default:
		svc.Spec.ClusterIPs, svc.Spec.IPFamilies = []string{v6, v4}, []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	}
	svc.Spec.ClusterIP = svc.Spec.ClusterIPs[0]
}

func randomProxySlice(r *rand.Rand, svc *corev1.Service, i int) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace,
		Name: fmt.Sprintf("svc-%c", 'a'+r.Intn(26)) + fmt.Sprint(i), Labels: map[string]string{}}}
	if chance(r, 0.05) {
		s.Namespace = "other"
	}
	switch r.Intn(12) {
	case 0:
		s.Labels[discoveryv1.LabelServiceName] = "other"
	case 1:
		s.Labels[discoveryv1.LabelServiceName] = ""
	case 2:
	default:
		s.Labels[discoveryv1.LabelServiceName] = svc.Name
	}
	if chance(r, 0.5) {
		s.Labels[discoveryv1.LabelManagedBy] = pick(r, []string{"endpointslice-controller.k8s.io", "kubectl-slices", "someone"})
	}
	if chance(r, 0.04) {
		s.Labels[corev1.IsHeadlessService] = ""
	}
	s.AddressType = pick(r, []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6,
		discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN})
	for j, n := 0, r.Intn(4); j < n; j++ {
		p := discoveryv1.EndpointPort{Protocol: ptr(pick(r, protoPool)), Port: ptr(pick(r, []int32{8080, 8080, 53, 0}))}
		if !chance(r, 0.05) {
			p.Name = ptr(pick(r, namePool))
		}
		if len(svc.Spec.Ports) > 0 && chance(r, 0.7) { // mostly the Service's own ports
			sp := pick(r, svc.Spec.Ports)
			p.Name, p.Protocol = ptr(sp.Name), ptr(sp.Protocol)
		}
		if chance(r, 0.05) {
			p.Port = nil
		}
		s.Ports = append(s.Ports, p)
	}
	// Hints come per slice, as the controller writes them: all or none.
	zoneHints, nodeHints := chance(r, 0.5), chance(r, 0.4)
	for j, n := 0, r.Intn(6); j < n; j++ {
		s.Endpoints = append(s.Endpoints, randomProxyEndpoint(r, s.AddressType, zoneHints, nodeHints))
	}
	return s
}

func randomProxyEndpoint(r *rand.Rand, at discoveryv1.AddressType, zoneHints, nodeHints bool) discoveryv1.Endpoint {
	pool := v4Pool
	if at == discoveryv1.AddressTypeIPv6 {
		pool = v6Pool
	}
	var ep discoveryv1.Endpoint
	for i, n := 0, pick(r, []int{1, 1, 1, 1, 1, 1, 2, 0}); i < n; i++ {
		ep.Addresses = append(ep.Addresses, pick(r, pool))
	}
	maybe := func() *bool { return pick(r, []*bool{nil, ptr(true), ptr(true), ptr(false)}) }
	ep.Conditions = discoveryv1.EndpointConditions{Ready: maybe(), Serving: maybe(), Terminating: maybe()}
	if chance(r, 0.85) {
		ep.NodeName = ptr(pick(r, nodePool))
	}
	if chance(r, 0.1) { // a slice's hints with one endpoint left out
		zoneHints, nodeHints = !zoneHints, !nodeHints
	}
	if zoneHints || nodeHints {
		ep.Hints = &discoveryv1.EndpointHints{}
	}
	if zoneHints {
		for i, n := 0, 1+r.Intn(2); i < n; i++ {
			ep.Hints.ForZones = append(ep.Hints.ForZones, discoveryv1.ForZone{Name: pick(r, zonePool)})
		}
	}
	if nodeHints {
		for i, n := 0, 1+r.Intn(2); i < n; i++ {
			ep.Hints.ForNodes = append(ep.Hints.ForNodes, discoveryv1.ForNode{Name: pick(r, nodePool)})
		}
	}
	return ep
}

// determinate says whether upstream's endpoint set is the same in every
// order its cache may visit the slices. For each endpoint key a running
// copy replaces what is there and a terminating one only fills a gap, so
// the winner is the last running copy of the last slice that has one, or
// failing that the first copy of the first slice: the input is determinate
// when those candidates agree across slices.
func determinate(in proxyInput) bool {
	for _, at := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		copies := map[string][]copyOf{}
		running := map[string]bool{}
		for _, s := range in.slices {
			if s.AddressType != at || s.Namespace != in.svc.Namespace || s.Labels[discoveryv1.LabelServiceName] == "" {
				continue
			}
			for _, p := range s.Ports {
				if p.Name == nil || p.Port == nil || *p.Port == 0 {
					continue
				}
				for _, e := range s.Endpoints {
					if len(e.Addresses) == 0 {
						continue
					}
					key := fmt.Sprintf("%s/%s/%s/%s/%d", s.Labels[discoveryv1.LabelServiceName], *p.Name, *p.Protocol,
						utilnet.ParseIPSloppy(e.Addresses[0]), *p.Port)
					term := e.Conditions.Terminating != nil && *e.Conditions.Terminating
					running[key] = running[key] || !term
					copies[key] = append(copies[key], copyOf{s.Name, endpointText(e, in.node.Name, term)})
				}
			}
		}
		for key, cs := range copies {
			if !agree(cs, running[key]) {
				return false
			}
		}
	}
	return true
}

// copyOf is one copy of an endpoint key: its slice and its attributes.
type copyOf struct{ slice, text string }

// agree says whether the per-slice candidates for one key are equal.
// copies hold "R"/"T" (running, terminating) as their text's first letter.
func agree(cs []copyOf, running bool) bool {
	candidate := map[string]string{}
	for _, c := range cs {
		term := c.text[0] == 'T'
		switch {
		case running && !term:
			candidate[c.slice] = c.text // the last running copy of a slice
		case !running:
			if _, ok := candidate[c.slice]; !ok {
				candidate[c.slice] = c.text // the first copy of a slice
			}
		}
	}
	first := ""
	for _, t := range candidate {
		if first == "" {
			first = t
		} else if t != first {
			return false
		}
	}
	return true
}

func endpointText(e discoveryv1.Endpoint, node string, term bool) string {
	state := "R"
	if term {
		state = "T"
	}
	b, _ := json.Marshal(struct {
		Local bool
		C     discoveryv1.EndpointConditions
		H     *discoveryv1.EndpointHints
	}{e.NodeName != nil && *e.NodeName == node, e.Conditions, e.Hints})
	return state + string(b)
}

// describe prints a case for a failure message.
func describe(in proxyInput) string {
	var b strings.Builder
	j, _ := json.Marshal(in.svc)
	fmt.Fprintf(&b, "node %+v\nservice %s\n", in.node, j)
	names := make([]string, 0, len(in.slices))
	for _, s := range in.slices {
		j, _ := json.Marshal(s)
		names = append(names, string(j))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "slice %s\n", n)
	}
	return b.String()
}
