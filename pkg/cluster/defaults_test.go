package cluster

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// What the API server stores for each Service spec it is given on create
// (a single-stack IPv4 cluster), as SetDefaults_Service and the Service
// REST strategy's initIPFamilyFields compute it.
func TestApplyDefaultsService(t *testing.T) {
	single, requireDual := corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyRequireDualStack
	v4, v6 := []corev1.IPFamily{corev1.IPv4Protocol}, []corev1.IPFamily{corev1.IPv6Protocol}
	sel := map[string]string{"app": "web"}
	cases := []struct {
		name      string
		in        corev1.ServiceSpec
		clusterIP string
		policy    *corev1.IPFamilyPolicy
		families  []corev1.IPFamily
	}{
		{"bare", corev1.ServiceSpec{Selector: sel}, "0.0.0.0", &single, v4},
		{"headless with selector", corev1.ServiceSpec{Selector: sel, ClusterIP: "None"}, "None", &single, v4},
		{"headless without selector", corev1.ServiceSpec{ClusterIP: "None"}, "None", &requireDual, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		{"families given", corev1.ServiceSpec{Selector: sel, IPFamilies: v6}, "::", &single, v6},
		{"IPv6 cluster IP", corev1.ServiceSpec{Selector: sel, ClusterIP: "fd00::10"}, "fd00::10", &single, v6},
		{"require dual stack", corev1.ServiceSpec{Selector: sel, IPFamilyPolicy: &requireDual}, "0.0.0.0", &requireDual, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "x.example"}, "", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: c.in}
			svc.Name = "web"
			m := &Manifests{Services: []*corev1.Service{svc}}
			m.ApplyDefaults("shop")
			got := svc.Spec
			if svc.Namespace != "shop" || got.ClusterIP != c.clusterIP || !reflect.DeepEqual(got.IPFamilyPolicy, c.policy) || !reflect.DeepEqual(got.IPFamilies, c.families) {
				t.Errorf("namespace %q clusterIP %q policy %v families %v; want shop %q %v %v",
					svc.Namespace, got.ClusterIP, ptrStr(got.IPFamilyPolicy), got.IPFamilies, c.clusterIP, ptrStr(c.policy), c.families)
			}
			if got.Type == "" {
				t.Error("type not defaulted")
			}
			if len(m.Defaulted(svc, nil, nil)) != 1 {
				t.Errorf("defaulted %v", m.Defaulted(svc, nil, nil))
			}
		})
	}
}

func ptrStr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// Ports: protocol TCP, targetPort = port; a given namespace, protocol or
// targetPort stays; container and slice ports get protocol TCP.
func TestApplyDefaultsPorts(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"a": "b"}, ClusterIP: "10.0.0.1", IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")}}}}
	svc.Namespace = "keep"
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}}},
		InitContainers: []corev1.Container{{Name: "side", Ports: []corev1.ContainerPort{{ContainerPort: 9000}}}}}}
	slice := &discovery.EndpointSlice{Ports: []discovery.EndpointPort{{}}}
	m := &Manifests{Services: []*corev1.Service{svc}, Pods: []*corev1.Pod{pod}, Slices: []*discovery.EndpointSlice{slice}}
	m.ApplyDefaults("shop")
	want := []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")}}
	if !reflect.DeepEqual(svc.Spec.Ports, want) || svc.Namespace != "keep" || svc.Spec.ClusterIP != "10.0.0.1" {
		t.Errorf("service %s %+v", svc.Namespace, svc.Spec)
	}
	if p := pod.Spec.Containers[0].Ports; p[0].Protocol != corev1.ProtocolTCP || p[1].Protocol != corev1.ProtocolUDP || pod.Namespace != "shop" {
		t.Errorf("pod %s %+v", pod.Namespace, p)
	}
	if pod.Spec.InitContainers[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Error("init container port not defaulted")
	}
	if p := slice.Ports[0]; p.Protocol == nil || *p.Protocol != corev1.ProtocolTCP || p.Name == nil || slice.Namespace != "shop" {
		t.Errorf("slice port %+v", p)
	}
	if got := m.Defaulted(svc, []*corev1.Pod{pod}, nil); len(got) != 2 {
		t.Errorf("defaulted %q", got)
	}
}

// A Pod's status as the API server stores it: podIPs filled from podIP when
// missing, and podIP authoritative when the two disagree (the v1 to internal
// conversion in pkg/apis/core/v1/conversion.go); a Pod without podIP keeps
// what it has.
func TestApplyDefaultsPodIPs(t *testing.T) {
	ips := func(s ...string) []corev1.PodIP {
		var out []corev1.PodIP
		for _, ip := range s {
			out = append(out, corev1.PodIP{IP: ip})
		}
		return out
	}
	cases := []struct {
		name  string
		in    corev1.PodStatus
		want  []corev1.PodIP
		noted bool
	}{
		{"podIP only", corev1.PodStatus{PodIP: "10.0.0.1"}, ips("10.0.0.1"), true},
		{"both, agreeing", corev1.PodStatus{PodIP: "10.0.0.1", PodIPs: ips("10.0.0.1", "fd00::1")}, ips("10.0.0.1", "fd00::1"), false},
		{"both, disagreeing", corev1.PodStatus{PodIP: "10.0.0.2", PodIPs: ips("10.0.0.1", "fd00::1")}, ips("10.0.0.2"), true},
		{"podIPs only", corev1.PodStatus{PodIPs: ips("10.0.0.1")}, ips("10.0.0.1"), false},
		{"no address", corev1.PodStatus{}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: c.in}
			pod.Name, pod.Namespace = "web-0", "shop"
			m := &Manifests{Pods: []*corev1.Pod{pod}}
			m.ApplyDefaults("shop")
			if !reflect.DeepEqual(pod.Status.PodIPs, c.want) {
				t.Errorf("podIPs %v, want %v", pod.Status.PodIPs, c.want)
			}
			if noted := len(m.Defaulted(&corev1.Service{}, []*corev1.Pod{pod}, nil)) > 0; noted != c.noted {
				t.Errorf("noted %v, want %v", noted, c.noted)
			}
		})
	}
}
