package cluster

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The API server defaults every object it stores; manifests read offline
// (hand-written, Helm or kustomize output) lack those defaults, and the
// planner would misread them: a Service without clusterIP or ipFamilies as a
// dual-stack headless one, a port without protocol as matching nothing. The
// rules below are the few the planner depends on, written out by hand because
// upstream's defaulting functions live in k8s.io/kubernetes:
//
//   - pkg/apis/core/v1/defaults.go: SetDefaults_Service (type ClusterIP,
//     port protocol TCP, targetPort = port), SetDefaults_ContainerPort
//     (protocol TCP);
//   - pkg/apis/core/v1/conversion.go: Convert_v1_PodStatus_To_core_PodStatus
//     (podIPs from podIP);
//   - pkg/apis/discovery/v1/defaults.go: SetDefaults_EndpointPort (name "",
//     protocol TCP);
//   - pkg/registry/core/service/storage/alloc.go: initIPFamilyFields
//     (ipFamilyPolicy SingleStack, or RequireDualStack for a headless Service
//     without selector; ipFamilies from the cluster IPs, else the cluster's
//     default family, plus the other family when dual-stack is asked for)
//     and the clusterIPs = [clusterIP] normalisation.
//
// The cluster is taken to be single-stack IPv4, the common case; a manifest
// that names its families or cluster IPs keeps them.

// placeholderClusterIP stands for the cluster IP the API server would
// allocate: the planner only asks whether there is one (a Service without is
// headless) and of which family.
var placeholderClusterIP = map[corev1.IPFamily]string{corev1.IPv4Protocol: "0.0.0.0", corev1.IPv6Protocol: "::"}

// ApplyDefaults puts objects without a namespace into ns, as kubectl apply
// would, and fills in what the API server defaults. It records, per object,
// what it set; Defaulted reads that back.
func (m *Manifests) ApplyDefaults(ns string) {
	m.defaulted = map[any][]string{}
	note := func(obj any, format string, a ...any) {
		m.defaulted[obj] = append(m.defaulted[obj], fmt.Sprintf(format, a...))
	}
	for _, s := range m.Services {
		if s.Namespace == "" {
			s.Namespace = ns
			note(s, "namespace %s", ns)
		}
		defaultService(s, func(f string, a ...any) { note(s, f, a...) })
	}
	for _, p := range m.Pods {
		if p.Namespace == "" {
			p.Namespace = ns
			note(p, "namespace %s", ns)
		}
		defaultPod(p, func(f string, a ...any) { note(p, f, a...) })
	}
	for _, e := range m.Endpoints {
		if e.Namespace == "" {
			e.Namespace = ns
			note(e, "namespace %s", ns)
		}
	}
	for _, s := range m.Slices {
		if s.Namespace == "" {
			s.Namespace = ns
			note(s, "namespace %s", ns)
		}
		for i := range s.Ports {
			p := &s.Ports[i]
			if p.Name == nil {
				p.Name = new(string)
			}
			if p.Protocol == nil {
				tcp := corev1.ProtocolTCP
				p.Protocol = &tcp
				note(s, "ports[%d].protocol TCP", i)
			}
		}
	}
}

func defaultService(s *corev1.Service, note func(string, ...any)) {
	spec := &s.Spec
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
		note("type ClusterIP")
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
			note("ports[%s].protocol TCP", portName(p, i))
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
			note("ports[%s].targetPort %d", portName(p, i), p.Port)
		}
	}
	if spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if len(spec.ClusterIPs) == 0 && spec.ClusterIP != "" {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	headlessNoSelector := spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		if headlessNoSelector {
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		spec.IPFamilyPolicy = &policy
		note("ipFamilyPolicy %s", policy)
	}
	if len(spec.IPFamilies) == 0 {
		for _, ip := range spec.ClusterIPs {
			if addr, err := netip.ParseAddr(ip); err == nil {
				spec.IPFamilies = append(spec.IPFamilies, familyOf(addr))
			}
		}
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		// Dual-stack was asked for: the other family too. A single-stack
		// cluster only grants that to headless Services without selector;
		// offline we take the manifest at its word.
		if len(spec.IPFamilies) == 1 && *spec.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack {
			other := corev1.IPv6Protocol
			if spec.IPFamilies[0] == corev1.IPv6Protocol {
				other = corev1.IPv4Protocol
			}
			spec.IPFamilies = append(spec.IPFamilies, other)
		}
		note("ipFamilies %s", joinFamilies(spec.IPFamilies))
	}
	if spec.ClusterIP == "" {
		spec.ClusterIP = placeholderClusterIP[spec.IPFamilies[0]]
		spec.ClusterIPs = []string{spec.ClusterIP}
		note("clusterIP allocated by the API server (not headless)")
	}
}

func defaultPod(p *corev1.Pod, note func(string, ...any)) {
	// The API server converts every Pod it is sent so that podIPs[0] is
	// podIP: filled from podIP when missing, replaced by it when they
	// disagree (older kubelets write podIP only). The planner reads podIPs.
	if st := &p.Status; st.PodIP != "" && (len(st.PodIPs) == 0 || st.PodIPs[0].IP != st.PodIP) {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
		note("status.podIPs [%s]", st.PodIP)
	}
	for _, cs := range []struct {
		field      string
		containers []corev1.Container
	}{{"containers", p.Spec.Containers}, {"initContainers", p.Spec.InitContainers}} {
		for i := range cs.containers {
			c := &cs.containers[i]
			for j := range c.Ports {
				if c.Ports[j].Protocol == "" {
					c.Ports[j].Protocol = corev1.ProtocolTCP
					note("%s[%s].ports[%s].protocol TCP", cs.field, c.Name, containerPortName(&c.Ports[j], j))
				}
			}
		}
	}
}

// Defaulted lists, for the planner input of one Service, what ApplyDefaults
// set: one line per object, the Service first.
func (m *Manifests) Defaulted(svc *corev1.Service, pods []*corev1.Pod, slices []*discovery.EndpointSlice) []string {
	out := []string{}
	add := func(obj any, kind, ns, name string) {
		if fields := m.defaulted[obj]; len(fields) > 0 {
			out = append(out, fmt.Sprintf("%s %s/%s: %s", kind, ns, name, strings.Join(fields, ", ")))
		}
	}
	add(svc, "service", svc.Namespace, svc.Name)
	for _, p := range pods {
		add(p, "pod", p.Namespace, p.Name)
	}
	for _, s := range slices {
		add(s, "endpointslice", s.Namespace, s.Name)
	}
	return out
}

func familyOf(a netip.Addr) corev1.IPFamily {
	if a.Is4() || a.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

func joinFamilies(fs []corev1.IPFamily) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func portName(p *corev1.ServicePort, i int) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprint(i)
}

func containerPortName(p *corev1.ContainerPort, i int) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprint(i)
}
