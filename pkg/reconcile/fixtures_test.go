package reconcile

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Fixture builders, in the spirit of upstream's newServiceAndEndpointMeta and
// newPod: small defaults, options for what a test cares about.

const testNS = "shop"

type svcOpt func(*corev1.Service)

func svc(name string, opts ...svcOpt) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID(testNS + "-" + name)},
		Spec: corev1.ServiceSpec{
			Selector:   map[string]string{"app": name},
			ClusterIP:  "10.0.0.10",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080),
				Protocol: corev1.ProtocolTCP}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func headless(s *corev1.Service)        { s.Spec.ClusterIP = corev1.ClusterIPNone }
func noClusterIP(s *corev1.Service)     { s.Spec.ClusterIP = "" }
func publishNotReady(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }
func families(f ...corev1.IPFamily) svcOpt {
	return func(s *corev1.Service) { s.Spec.IPFamilies = f }
}
func ports(p ...corev1.ServicePort) svcOpt {
	return func(s *corev1.Service) { s.Spec.Ports = p }
}
func svcLabels(kv ...string) svcOpt {
	return func(s *corev1.Service) {
		s.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Labels[kv[i]] = kv[i+1]
		}
	}
}
func trafficDist(v string) svcOpt { return func(s *corev1.Service) { s.Spec.TrafficDistribution = &v } }
func annotate(k, v string) svcOpt {
	return func(s *corev1.Service) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[k] = v
	}
}

func namedPort(name, target string, proto corev1.Protocol) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: 80, TargetPort: intstr.FromString(target), Protocol: proto}
}
func numPort(name string, port, target int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(target), Protocol: corev1.ProtocolTCP}
}

type podOpt func(*corev1.Pod)

// pod n is on node-1 with IP 10.1.<n/250>.<n%250+1>, Running and Ready.
func pod(s *corev1.Service, n int, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod%d", n), Namespace: s.Namespace,
			UID: types.UID(fmt.Sprintf("uid-%d", n)), Labels: map[string]string{}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	for k, v := range s.Spec.Selector {
		p.Labels[k] = v
	}
	ip := fmt.Sprintf("10.1.%d.%d", n/250, n%250+1)
	p.Status.PodIP = ip
	p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func notReady(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
}
func terminating(p *corev1.Pod) {
	t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p.DeletionTimestamp = &t
}
func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }
func onNode(n string) podOpt          { return func(p *corev1.Pod) { p.Spec.NodeName = n } }
func ips(addrs ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.PodIP, p.Status.PodIPs = "", nil
		for i, a := range addrs {
			if i == 0 {
				p.Status.PodIP = a
			}
			p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: a})
		}
	}
}
func hostname(h, sub string) podOpt {
	return func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = h, sub }
}
func containerPort(name string, port int32, proto corev1.Protocol) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + name,
			Ports: []corev1.ContainerPort{{Name: name, ContainerPort: port, Protocol: proto}}})
	}
}
func sidecarPort(name string, port int32) podOpt {
	return func(p *corev1.Pod) {
		always := corev1.ContainerRestartPolicyAlways
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "s" + name, RestartPolicy: &always,
			Ports: []corev1.ContainerPort{{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}}})
	}
}

func node(name, zone string, cpu string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
	if zone != "" {
		n.Labels[corev1.LabelTopologyZone] = zone
	}
	return n
}

func nodesOf(ns ...*corev1.Node) Nodes {
	m := map[string]*corev1.Node{}
	for _, n := range ns {
		m[n.Name] = n
	}
	return Nodes{ByName: m, Complete: true}
}

func defaultNodes() Nodes { return nodesOf(node("node-1", "zone-a", "4")) }

// pods builds n pods with the same options.
func podsN(s *corev1.Service, n int, opts ...podOpt) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod(s, i, opts...)
	}
	return out
}

// named gives every created slice a name, as the API server would, so a
// plan's output can be fed back as live state.
func applyPlan(p *Plan) []*discovery.EndpointSlice {
	var live []*discovery.EndpointSlice
	live = append(live, p.Unchanged...)
	for _, s := range p.Update {
		c := s.DeepCopy()
		c.ResourceVersion = bump(c.ResourceVersion)
		live = append(live, c)
	}
	for i, s := range p.Create {
		c := s.DeepCopy()
		c.Name = fmt.Sprintf("%sgen%03d-%d", c.GenerateName, i, len(live))
		c.ResourceVersion = "1"
		live = append(live, c)
	}
	return live
}

func bump(rv string) string {
	var n int
	fmt.Sscanf(rv, "%d", &n)
	return fmt.Sprint(n + 1)
}

func mustPlan(t interface{ Fatalf(string, ...any) }, in Input, opts Options) *Plan {
	p, err := Compute(in, opts)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return p
}

func opts(max int) Options {
	o := DefaultOptions()
	o.MaxEndpointsPerSlice = max
	return o
}

func sliceLens(slices []*discovery.EndpointSlice) []int {
	out := make([]int, len(slices))
	for i, s := range slices {
		out[i] = len(s.Endpoints)
	}
	return out
}

// snapshot serialises an input so a test can prove Compute left it alone,
// as upstream's cacheMutationCheck does for the informer cache.
func snapshot(in Input) string {
	b, err := json.Marshal(struct {
		S *corev1.Service
		P []*corev1.Pod
		N Nodes
		E []*discovery.EndpointSlice
	}{in.Service, in.Pods, in.Nodes, in.Slices})
	if err != nil {
		panic(err)
	}
	return string(b)
}
