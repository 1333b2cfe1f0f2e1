package proxyexpect

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Headless, ExternalName and other-proxy Services get nothing, with a
// reason.
func TestSkippedServices(t *testing.T) {
	for name, opt := range map[string]func(*corev1.Service){
		"headless": func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		},
		"no cluster IP": func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "", nil, nil
		},
		"ExternalName": func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName },
		"another proxy": func(s *corev1.Service) {
			s.Labels = map[string]string{LabelServiceProxyName: ""}
		},
	} {
		exp := For(service(opt), []*discoveryv1.EndpointSlice{slice("s1", ep{addr: "10.0.0.1", state: "ready"})}, nodeA)
		if exp.Skipped == "" || exp.Families != nil {
			t.Errorf("%s: got %+v, want skipped", name, exp)
		}
	}
	if exp := For(service(), nil, nodeA); exp.Skipped != "" || len(exp.Families) != 1 {
		t.Errorf("ClusterIP Service: got %+v", exp)
	}
}

// One family per cluster IP, IPv4 first whatever the Service's order, each
// with its own address type's slices; a Service from before dual-stack
// (clusterIP alone) has the family of that IP.
func TestFamilies(t *testing.T) {
	v6 := slice("s6", ep{addr: "fd00::1", state: "ready"})
	v6.AddressType = discoveryv1.AddressTypeIPv6
	fqdn := slice("sf", ep{addr: "example.com", state: "ready"})
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	slices := []*discoveryv1.EndpointSlice{slice("s4", ep{addr: "10.0.0.1", state: "ready"}), v6, fqdn}
	for _, c := range []struct {
		name string
		opt  func(*corev1.Service)
		want string
	}{{
		"dual stack, IPv6 first",
		func(s *corev1.Service) {
			s.Spec.ClusterIPs = []string{"fd00:96::10", "10.96.0.10"}
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
		},
		"IPv4 10.96.0.10 [10.0.0.1:8080]; IPv6 fd00:96::10 [[fd00::1]:8080]; ",
	}, {
		"IPv6 only",
		func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "fd00:96::10", []string{"fd00:96::10"}
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		},
		"IPv6 fd00:96::10 [[fd00::1]:8080]; ",
	}, {
		"clusterIP without ipFamilies",
		func(s *corev1.Service) { s.Spec.ClusterIPs, s.Spec.IPFamilies = nil, nil },
		"IPv4 10.96.0.10 [10.0.0.1:8080]; ",
	}, {
		"an ipFamily without its cluster IP",
		func(s *corev1.Service) {
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
		},
		"IPv4 10.96.0.10 [10.0.0.1:8080]; ",
	}} {
		var got strings.Builder
		for _, f := range For(service(c.opt), slices, nodeA).Families {
			fmt.Fprintf(&got, "%s %s [%s]; ", f.Family, f.ClusterIP, ips(f.Ports[0].Cluster))
		}
		if got.String() != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, got.String(), c.want)
		}
	}
}

// kube-proxy files a slice under the Service by namespace and
// kubernetes.io/service-name label only: the managed-by label is not read,
// and a slice labelled headless is not even listed.
func TestWhichSlicesCount(t *testing.T) {
	mk := func(name, addr string, edit func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
		s := slice(name, ep{addr: addr, state: "ready"})
		edit(s)
		return s
	}
	slices := []*discoveryv1.EndpointSlice{
		mk("counts-any-manager", "10.0.0.1", func(s *discoveryv1.EndpointSlice) { s.Labels[discoveryv1.LabelManagedBy] = "someone-else" }),
		mk("counts-no-manager", "10.0.0.2", func(s *discoveryv1.EndpointSlice) { delete(s.Labels, discoveryv1.LabelManagedBy) }),
		mk("other-namespace", "10.0.0.3", func(s *discoveryv1.EndpointSlice) { s.Namespace = "other" }),
		mk("other-service", "10.0.0.4", func(s *discoveryv1.EndpointSlice) { s.Labels[discoveryv1.LabelServiceName] = "db" }),
		mk("no-service-label", "10.0.0.5", func(s *discoveryv1.EndpointSlice) { delete(s.Labels, discoveryv1.LabelServiceName) }),
		mk("headless-label", "10.0.0.6", func(s *discoveryv1.EndpointSlice) { s.Labels[corev1.IsHeadlessService] = "" }),
		nil,
	}
	if got := ips(onlyPort(t, For(service(), slices, nodeA)).Cluster); got != "10.0.0.1:8080 10.0.0.2:8080" {
		t.Errorf("got %s, want the first two slices' endpoints", got)
	}
}

// Slice ports meet service ports by name and protocol, never number; the
// endpoint's port is the slice port's. A slice port without a name or a
// number is skipped.
func TestPortMatching(t *testing.T) {
	svc := service(func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53})
	})
	s := slice("s1", ep{addr: "10.0.0.1", state: "ready"})
	s.Ports = []discoveryv1.EndpointPort{
		{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))},
		{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(0))},
		{Name: ptr("dns"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(5353))},
		{Name: nil, Protocol: ptr(corev1.ProtocolUDP), Port: ptr(int32(5354))},
		{Name: ptr("dns"), Protocol: ptr(corev1.ProtocolUDP), Port: nil},
	}
	t2 := slice("s2", ep{addr: "10.0.0.2", state: "ready"})
	t2.Ports = []discoveryv1.EndpointPort{{Name: ptr("dns"), Protocol: ptr(corev1.ProtocolUDP), Port: ptr(int32(1053))}}
	ports := For(svc, []*discoveryv1.EndpointSlice{s, t2}, nodeA).Families[0].Ports
	var got []string
	for _, p := range ports {
		got = append(got, fmt.Sprintf("%s/%s %d: %s", p.Name, p.Protocol, p.Port, ips(p.Cluster)))
	}
	want := []string{"http/TCP 80: 10.0.0.1:8080", "dns/UDP 53: 10.0.0.2:1053"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q (in the Service's order)", got, want)
	}
}

// An endpoint is its first address as an IP and the port: the same IP:port
// in two slices is one endpoint, the running copy winning over a
// terminating one whichever slice comes first.
func TestEndpointKeyAndDuplicates(t *testing.T) {
	s1 := slice("a", ep{addr: "10.0.0.1", state: "terminating", node: "node-a"}, ep{addr: "010.0.0.2", state: "ready"})
	s1.Endpoints[1].Addresses = append(s1.Endpoints[1].Addresses, "10.0.0.9")
	s1.Endpoints = append(s1.Endpoints, discoveryv1.Endpoint{}) // no address: skipped
	s2 := slice("b", ep{addr: "10.0.0.1", state: "ready", node: "node-b"}, ep{addr: "10.0.0.2", state: "terminating"})
	for _, order := range [][]*discoveryv1.EndpointSlice{{s1, s2}, {s2, s1}} {
		p := onlyPort(t, For(service(), order, nodeA))
		got := fmt.Sprintf("%s local=%t", ips(p.Cluster), p.Cluster[0].Local)
		if want := "10.0.0.1:8080 10.0.0.2:8080 local=false"; got != want {
			t.Errorf("slices %s,%s: got %s, want %s", order[0].Name, order[1].Name, got, want)
		}
	}
	if got := (Endpoint{IP: "fd00::1", Port: 80}).String(); got != "[fd00::1]:80" {
		t.Errorf("IPv6 endpoint prints %s", got)
	}
}

// A LoadBalancer Service with externalTrafficPolicy Local has a health
// check whose answer counts the distinct IPs of local ready endpoints,
// over every port of its slices; no other Service has one.
func TestHealthCheck(t *testing.T) {
	s := slice("s1",
		ep{addr: "10.0.0.1", state: "ready", node: "node-a"},
		ep{addr: "10.0.0.2", state: "terminating", node: "node-a"},
		ep{addr: "10.0.0.3", state: "ready", node: "node-b"})
	s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr("metrics"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(9090))})
	s2 := slice("s2", ep{addr: "10.0.0.4", state: "ready", node: "node-a"})
	s2.Ports[0].Name = ptr("unmatched")
	slices := []*discoveryv1.EndpointSlice{s, s2}
	for _, c := range []struct {
		name string
		svc  *corev1.Service
		want string
	}{
		{"LoadBalancer Local", service(loadBalancerLocal(30080, "", nil)), "port 30100: 2 local ready"},
		{"LoadBalancer Cluster", service(loadBalancerLocal(30080, "", nil), func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		}), "port 0: 2 local ready"},
		{"NodePort Local", service(nodePortLocal, func(s *corev1.Service) { s.Spec.HealthCheckNodePort = 30100 }), "port 0: 2 local ready"},
		{"no ports", service(loadBalancerLocal(30080, "", nil), func(s *corev1.Service) { s.Spec.Ports = nil }), "port 0: 2 local ready"},
	} {
		f := For(c.svc, slices, nodeA).Families[0]
		if got := fmt.Sprintf("port %d: %d local ready", f.HealthCheckNodePort, f.LocalReady); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// The result depends on the inputs' content, not their order, and the
// inputs are left as they were.
func TestDeterministicAndInputsUntouched(t *testing.T) {
	svc := service(nodePortLocal)
	a := slice("a", ep{addr: "10.0.0.3", state: "ready", node: "node-a", zones: []string{"zone-b", "zone-a", "zone-a"}},
		ep{addr: "10.0.0.1", state: "ready", node: "node-b", zones: []string{"zone-a"}})
	b := slice("b", ep{addr: "10.0.0.2", state: "terminating", node: "node-a", zones: []string{"zone-a"}})
	before := []any{svc.DeepCopy(), a.DeepCopy(), b.DeepCopy()}
	first := For(svc, []*discoveryv1.EndpointSlice{a, b}, nodeA)
	second := For(svc, []*discoveryv1.EndpointSlice{b, a}, nodeA)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("slice order changed the result:\n%+v\n%+v", first, second)
	}
	if after := []any{svc, a, b}; !reflect.DeepEqual(before, after) {
		t.Error("For modified its inputs")
	}
	if got := first.Families[0].Ports[0].Cluster[1].ZoneHints; !reflect.DeepEqual(got, []string{"zone-a", "zone-b"}) {
		t.Errorf("zone hints %q, want sorted without duplicates", got)
	}
}
