package reconcile

import (
	"fmt"
	"math/rand"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// randomCase builds a random but valid planner input: a Service of any shape,
// Nodes (some not ready, without zone or in the control plane), Pods in any
// state, and live slices made by planning an earlier version of the cluster
// and then damaging the result the ways real clusters do.
type randomCase struct {
	in   Input
	opts Options
	desc string
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

func randomInput(r *rand.Rand) randomCase {
	o := DefaultOptions()
	o.MaxEndpointsPerSlice = pick(r, 1, 2, 3, 5, 8, 20, 100)
	if r.Intn(3) == 0 {
		o.TriggerTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	}
	s := randomService(r)
	nodes := randomNodes(r)
	n := pick(r, 0, 1, 3, 10, 25, 60, 150)
	pods := make([]*corev1.Pod, 0, n)
	for i := 0; i < n; i++ {
		pods = append(pods, randomPod(r, s, i, nodes))
	}
	// The live state: an earlier cluster (some Pods gone, some changed, maybe
	// another Service shape) planned, then damaged.
	var live []*discovery.EndpointSlice
	if r.Intn(5) > 0 {
		earlierSvc := s
		if r.Intn(4) == 0 {
			earlierSvc = randomService(r)
			earlierSvc.Name, earlierSvc.UID = s.Name, s.UID
			earlierSvc.DeletionTimestamp = nil
			earlierSvc.Spec.Type = corev1.ServiceTypeClusterIP
			earlierSvc.Spec.Selector = s.Spec.Selector
		}
		var earlier []*corev1.Pod
		for i, p := range pods {
			switch r.Intn(6) {
			case 0: // not there yet
			case 1:
				earlier = append(earlier, randomPod(r, s, i, nodes))
			default:
				earlier = append(earlier, p)
			}
		}
		for i := 0; i < r.Intn(10); i++ { // since deleted
			earlier = append(earlier, randomPod(r, s, 1000+i, nodes))
		}
		eo := o
		eo.MaxEndpointsPerSlice = pick(r, o.MaxEndpointsPerSlice, 1, 4, 100)
		if p, err := Compute(Input{Service: earlierSvc, Pods: earlier, Nodes: nodes, Slices: nil}, eo); err == nil {
			live = damage(r, applyPlan(p), s)
		}
	}
	return randomCase{in: Input{Service: s, Pods: pods, Nodes: nodes, Slices: live}, opts: o,
		desc: fmt.Sprintf("pods=%d slices=%d max=%d", len(pods), len(live), o.MaxEndpointsPerSlice)}
}

func randomService(r *rand.Rand) *corev1.Service {
	s := svc("web")
	s.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	switch r.Intn(7) {
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
	for i := 0; i < r.Intn(4); i++ {
		p := corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Port: int32(80 + i), Protocol: pick(r, corev1.ProtocolTCP, corev1.ProtocolTCP, corev1.ProtocolUDP)}
		if r.Intn(2) == 0 {
			p.TargetPort = intstr.FromString(pick(r, "http", "metrics", "dns"))
		} else {
			p.TargetPort = intstr.FromInt32(int32(8000 + r.Intn(3)))
		}
		if r.Intn(4) == 0 {
			p.AppProtocol = ptrTo(pick(r, "http", "kubernetes.io/h2c"))
		}
		s.Spec.Ports = append(s.Spec.Ports, p)
	}
	s.Spec.PublishNotReadyAddresses = r.Intn(4) == 0
	switch r.Intn(6) {
	case 0:
		s.Spec.TrafficDistribution = ptrTo(pick(r, corev1.ServiceTrafficDistributionPreferClose,
			corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode, "Bogus"))
	case 1:
		s.Annotations = map[string]string{pick(r, corev1.AnnotationTopologyMode, corev1.DeprecatedAnnotationTopologyAwareHints): pick(r, "Auto", "auto", "Disabled")}
		if r.Intn(2) == 0 {
			s.Spec.TrafficDistribution = ptrTo(corev1.ServiceTrafficDistributionPreferClose)
		}
	}
	switch r.Intn(5) {
	case 0:
		s.Labels = map[string]string{"team": pick(r, "a", "b")}
	case 1:
		s.Labels = map[string]string{discovery.LabelManagedBy: "hijack", "tier": "x"}
	}
	switch r.Intn(40) {
	case 0:
		s.Spec.Type = corev1.ServiceTypeExternalName
		s.Spec.ExternalName = "example.com"
	case 1:
		s.Spec.Selector = nil
	case 2:
		t := metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
		s.DeletionTimestamp = &t
	}
	return s
}

func ptrTo[T any](v T) *T { return &v }

func randomNodes(r *rand.Rand) Nodes {
	nodes := map[string]*corev1.Node{}
	for i := 0; i < 1+r.Intn(5); i++ {
		n := node(fmt.Sprintf("node-%d", i), pick(r, "zone-a", "zone-b", "zone-c", "zone-a", "zone-b"), fmt.Sprint(1+r.Intn(8)))
		switch r.Intn(12) {
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

func randomPod(r *rand.Rand, s *corev1.Service, i int, nodes Nodes) *corev1.Pod {
	p := pod(s, i)
	p.UID = types.UID(fmt.Sprintf("uid-%d-%d", i, r.Intn(2)))
	names := sortedKeys(nodes.ByName)
	p.Spec.NodeName = pick(r, append(names, "gone-node")...)
	if r.Intn(8) == 0 {
		p.Spec.NodeName = pick(r, names...)
	}
	p.Status.Phase = pick(r, corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown)
	v4 := fmt.Sprintf("10.1.%d.%d", r.Intn(2), r.Intn(40))
	v6 := fmt.Sprintf("fd00:0:0:0::%x", r.Intn(40))
	switch r.Intn(6) {
	case 0:
		ips()(p)
	case 1:
		ips(v6)(p)
	case 2:
		ips(v4, v6)(p)
	case 3:
		ips(v6, v4)(p)
	default:
		ips(v4)(p)
	}
	if r.Intn(3) == 0 {
		notReady(p)
	}
	if r.Intn(6) == 0 {
		terminating(p)
	}
	if r.Intn(5) == 0 {
		p.Spec.Hostname, p.Spec.Subdomain = fmt.Sprintf("h%d", i%7), pick(r, s.Name, "other")
	}
	for _, name := range []string{"http", "metrics", "dns"} {
		if r.Intn(2) == 0 {
			containerPort(name, int32(9000+r.Intn(2)), pick(r, corev1.ProtocolTCP, corev1.ProtocolTCP, corev1.ProtocolUDP))(p)
		}
	}
	if r.Intn(6) == 0 {
		sidecarPort("http", 9100)(p)
	}
	return p
}

// damage edits live slices the ways clusters drift: endpoints lost or
// duplicated, stale hints, foreign owners, labels, deleted address types,
// slices pending deletion and slices of other managers.
func damage(r *rand.Rand, live []*discovery.EndpointSlice, s *corev1.Service) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for i, sl := range live {
		sl = sl.DeepCopy()
		if sl.Name == "" {
			sl.Name = fmt.Sprintf("%slive%d", sl.GenerateName, i)
		}
		switch r.Intn(14) {
		case 0:
			if len(sl.Endpoints) > 0 {
				sl.Endpoints = sl.Endpoints[1:]
			}
		case 1:
			if len(out) > 0 && len(out[0].Endpoints) > 0 && out[0].AddressType == sl.AddressType {
				sl.Endpoints = append(sl.Endpoints, out[0].Endpoints[0])
			}
		case 2:
			for j := range sl.Endpoints {
				sl.Endpoints[j].Hints = &discovery.EndpointHints{ForZones: []discovery.ForZone{{Name: pick(r, "zone-a", "zone-b", "zone-x")}}}
			}
		case 3:
			sl.OwnerReferences[0].UID = "old-uid"
		case 4:
			sl.Labels["stale"] = "yes"
		case 5:
			sl.AddressType = discovery.AddressType(pick(r, "IP", "FQDN"))
		case 6:
			t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			sl.DeletionTimestamp = &t
		case 7:
			sl.Labels[discovery.LabelManagedBy] = ControllerManagedBy
		case 8:
			for j := range sl.Endpoints {
				sl.Endpoints[j].Conditions.Serving = nil
			}
		case 9:
			sl.Ports = nil
			sl.Endpoints = nil
		}
		out = append(out, sl)
	}
	return out
}
