package reconcile

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

// Fixtures in the spirit of upstream's newServiceAndEndpointMeta and newPod:
// internal/testutil builds the objects with the defaults of these tests,
// options change what a test cares about.

const testNS = "shop"

type svcOpt func(*corev1.Service)

func svc(name string, opts ...svcOpt) *corev1.Service {
	s := testutil.NewService(testNS, name).UID(testNS+"-"+name).ClusterIP("10.0.0.10").Selector("app", name).Port("http", 80, "8080").Build()
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
	p := testutil.NewPod(s.Namespace, fmt.Sprintf("pod%d", n)).UID(fmt.Sprintf("uid-%d", n)).Labels(s.Spec.Selector).
		Node("node-1").IP(fmt.Sprintf("10.1.%d.%d", n/250, n%250+1)).Build()
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
	b := testutil.NewNode(name).CPU(cpu)
	if zone != "" {
		b.Zone(zone)
	}
	return b.Build()
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
