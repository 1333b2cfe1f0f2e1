package dnsexpect

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const base = "web.ns.svc.cluster.local."

func service(clusterIPs ...string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIPs[0], ClusterIPs: clusterIPs,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
				{Protocol: corev1.ProtocolUDP, Port: 53},
			},
		},
	}
}

type ep struct {
	ip, host string
	ready    *bool
	serving  *bool
}

func slice(name, svc string, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{
			discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "someone-else"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
	for _, e := range eps {
		x := discoveryv1.Endpoint{Addresses: []string{e.ip}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready, Serving: e.serving}}
		if e.host != "" {
			x.Hostname = ptr.To(e.host)
		}
		s.Endpoints = append(s.Endpoints, x)
	}
	return s
}

// answers maps "TYPE name" to the wanted data, for compact comparisons.
func answers(qs []Question) map[string][]string {
	m := map[string][]string{}
	for _, q := range qs {
		k := q.Type + " " + q.Name
		m[k] = []string{}
		for _, r := range q.Want {
			if r.Name != q.Name || r.Type != q.Type {
				m[k] = append(m[k], "MISPLACED "+r.String())
				continue
			}
			m[k] = append(m[k], r.Data)
		}
	}
	return m
}

func check(t *testing.T, got []Question, want map[string][]string) {
	t.Helper()
	if g := answers(got); !reflect.DeepEqual(g, want) {
		t.Errorf("questions:\n got %v\nwant %v", g, want)
	}
}

// A ClusterIP Service answers its cluster IPs, one record per family, and
// its endpoints' names (findServices' endpoint branch) with their addresses.
func TestClusterIPAnswersItsClusterIPs(t *testing.T) {
	svc := service("10.0.0.10", "fd00::10")
	got := Expect(svc, []*discoveryv1.EndpointSlice{slice("a", "web", ep{ip: "10.1.0.1"})}, Options{})
	check(t, got, map[string][]string{
		"A " + base:              {"10.0.0.10"},
		"AAAA " + base:           {"fd00::10"},
		"A 10-1-0-1." + base:     {"10.1.0.1"},
		"SRV _http._tcp." + base: {"0 50 80 " + base},
	})
}

// A headless Service answers every ready address (ready true or unset) and
// none that is not ready, serving or not; slices of another Service or
// namespace are not read, whoever manages them.
func TestHeadlessAnswersReadyAddresses(t *testing.T) {
	svc := service("None")
	other := slice("o", "other", ep{ip: "10.9.9.9"})
	elsewhere := slice("e", "web", ep{ip: "10.8.8.8"})
	elsewhere.Namespace = "other"
	got := Expect(svc, []*discoveryv1.EndpointSlice{
		slice("a", "web", ep{ip: "10.1.0.1", ready: ptr.To(true)}, ep{ip: "10.1.0.2"},
			ep{ip: "10.1.0.3", ready: ptr.To(false), serving: ptr.To(true)}),
		other, elsewhere,
	}, Options{})
	check(t, got, map[string][]string{
		"A " + base:              {"10.1.0.1", "10.1.0.2"},
		"AAAA " + base:           {},
		"A 10-1-0-1." + base:     {"10.1.0.1"},
		"A 10-1-0-2." + base:     {"10.1.0.2"},
		"A 10-1-0-3." + base:     {},
		"SRV _http._tcp." + base: {"0 50 8080 10-1-0-1." + base, "0 50 8080 10-1-0-2." + base},
	})
}

// An endpoint's name is its hostname when it has one, else its address
// with dashes; IPv6 closing in "::" ends in "-0"; endpoint_pod_names takes
// the Pod's name instead of the address.
func TestEndpointNames(t *testing.T) {
	svc := service("None")
	s4 := slice("a", "web", ep{ip: "10.1.0.1", host: "db-0"}, ep{ip: "10.1.0.2"})
	s4.Endpoints[1].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: "pod-b"}
	s6 := slice("b", "web", ep{ip: "fd00::"}, ep{ip: "fd00::1", host: "db-0"})
	s6.AddressType = discoveryv1.AddressTypeIPv6
	s6.Ports = nil
	got := answers(Expect(svc, []*discoveryv1.EndpointSlice{s4, s6}, Options{}))
	for k, v := range map[string][]string{
		"A db-0." + base:       {"10.1.0.1"},
		"AAAA db-0." + base:    {"fd00::1"},
		"A 10-1-0-2." + base:   {"10.1.0.2"},
		"AAAA fd00--0." + base: {"fd00::"},
		"AAAA " + base:         {"fd00::", "fd00::1"},
	} {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
	pods := answers(Expect(svc, []*discoveryv1.EndpointSlice{s4}, Options{EndpointPodNames: true}))
	if !reflect.DeepEqual(pods["A pod-b."+base], []string{"10.1.0.2"}) || pods["A 10-1-0-2."+base] != nil {
		t.Errorf("endpoint_pod_names: %v", pods)
	}
}

// SRV of a headless Service: a target per ready endpoint at the slice's
// port, weight floor(100/n) over the entries before deduplication; a
// slice port without a number answers nothing; unnamed ports have no SRV.
func TestHeadlessSRV(t *testing.T) {
	svc := service("None")
	a := slice("a", "web", ep{ip: "10.1.0.1"}, ep{ip: "10.1.0.2"}, ep{ip: "10.1.0.3", ready: ptr.To(false)})
	dup := slice("b", "web", ep{ip: "10.1.0.1"})
	got := answers(Expect(svc, []*discoveryv1.EndpointSlice{a, dup}, Options{}))
	want := []string{"0 33 8080 10-1-0-1." + base, "0 33 8080 10-1-0-2." + base}
	if !reflect.DeepEqual(got["SRV _http._tcp."+base], want) {
		t.Errorf("SRV: got %v, want %v", got["SRV _http._tcp."+base], want)
	}
	for k := range got {
		if k == "SRV _._udp."+base || k == "SRV __udp."+base {
			t.Errorf("an unnamed port has an SRV name: %s", k)
		}
	}
	a.Ports[0].Port = nil
	got = answers(Expect(svc, []*discoveryv1.EndpointSlice{a}, Options{}))
	if len(got["SRV _http._tcp."+base]) != 0 {
		t.Errorf("SRV of a port without a number: %v", got["SRV _http._tcp."+base])
	}
}

// ExternalName: a CNAME to the external name, fully qualified; none when
// the external name is an IP.
func TestExternalName(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.Example.com"}}
	check(t, Expect(svc, nil, Options{}), map[string][]string{"CNAME " + base: {"db.example.com."}})
	svc.Spec.ExternalName = "192.0.2.1"
	check(t, Expect(svc, nil, Options{}), map[string][]string{"CNAME " + base: {}})
}

// The cluster domain is the caller's.
func TestDomain(t *testing.T) {
	got := answers(Expect(service("10.0.0.10"), nil, Options{Domain: "corp.example."}))
	if !reflect.DeepEqual(got["A web.ns.svc.corp.example."], []string{"10.0.0.10"}) {
		t.Errorf("questions: %v", got)
	}
}

// Inputs are not modified.
func TestExpectLeavesInputs(t *testing.T) {
	svc := service("None")
	s := slice("a", "web", ep{ip: "10.1.0.1"})
	svc0, s0 := svc.DeepCopy(), s.DeepCopy()
	Expect(svc, []*discoveryv1.EndpointSlice{s}, Options{})
	if !reflect.DeepEqual(svc, svc0) || !reflect.DeepEqual(s, s0) {
		t.Error("inputs modified")
	}
}
