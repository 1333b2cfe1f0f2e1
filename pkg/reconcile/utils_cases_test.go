package reconcile

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Cases of upstream k8s.io/endpointslice utils_test.go (and the topology
// and trafficDistribution cases of reconciler_test.go), in our words.

// upstream: TestNewEndpointSlice
func TestNewSliceSkeleton(t *testing.T) {
	cases := []struct {
		name       string
		svc        *corev1.Service
		wantLabels map[string]string
	}{
		{"plain", svc("foo"), map[string]string{}},
		{"service labels copied", svc("foo", svcLabels("foo", "bar")), map[string]string{"foo": "bar"}},
		{"headless", svc("foo", headless), map[string]string{corev1.IsHeadlessService: ""}},
		{"headless with labels", svc("foo", headless, svcLabels("foo", "bar")), map[string]string{"foo": "bar", corev1.IsHeadlessService: ""}},
		{"hijack attempt", svc("foo", svcLabels(discovery.LabelServiceName, "hijack", discovery.LabelManagedBy, "hijack")), map[string]string{}},
		{"annotations not copied", svc("foo", annotate("foo", "bar")), map[string]string{}},
	}
	for _, c := range cases {
		s := newSlice(c.svc, newLabeler(c.svc, DefaultManagedBy), []discovery.EndpointPort{{Port: ptrTo(int32(80))}}, discovery.AddressTypeIPv4)
		want := map[string]string{discovery.LabelServiceName: "foo", discovery.LabelManagedBy: DefaultManagedBy}
		for k, v := range c.wantLabels {
			want[k] = v
		}
		ref := s.OwnerReferences[0]
		if s.GenerateName != "foo-" || s.Namespace != testNS || !reflect.DeepEqual(s.Labels, want) || len(s.Annotations) != 0 ||
			ref.Kind != "Service" || ref.APIVersion != "v1" || ref.UID != c.svc.UID || !*ref.Controller || !*ref.BlockOwnerDeletion {
			t.Errorf("%s: %+v", c.name, s.ObjectMeta)
		}
	}
}

// upstream: TestPodToEndpoint (and KCM TestSyncService's condition cases)
func TestEndpointConditionsTruthTable(t *testing.T) {
	cases := []struct {
		name                        string
		pod                         []podOpt
		pnr                         bool
		ready, serving, terminating bool
	}{
		{"ready", nil, false, true, true, false},
		{"not ready", []podOpt{notReady}, false, false, false, false},
		{"ready, terminating", []podOpt{terminating}, false, false, true, true},
		{"not ready, terminating", []podOpt{notReady, terminating}, false, false, false, true},
		{"not ready, publishNotReady", []podOpt{notReady}, true, true, false, false},
		{"terminating, publishNotReady", []podOpt{terminating}, true, true, true, true},
		{"no Ready condition", []podOpt{func(p *corev1.Pod) { p.Status.Conditions = nil }}, false, false, false, false},
	}
	for _, c := range cases {
		s := svc("foo")
		s.Spec.PublishNotReadyAddresses = c.pnr
		p := mustPlan(t, Input{Service: s, Pods: []*corev1.Pod{pod(s, 0, c.pod...)}, Nodes: defaultNodes()}, DefaultOptions())
		ep := p.Create[0].Endpoints[0]
		if *ep.Conditions.Ready != c.ready || *ep.Conditions.Serving != c.serving || *ep.Conditions.Terminating != c.terminating {
			t.Errorf("%s: ready=%v serving=%v terminating=%v", c.name, *ep.Conditions.Ready, *ep.Conditions.Serving, *ep.Conditions.Terminating)
		}
	}
}

// upstream: TestPodToEndpoint (hostname, zone, multi-IP) and
// TestShouldPodBeInEndpoints
func TestEndpointFieldsAndPodFilter(t *testing.T) {
	s := svc("foo")
	nodes := nodesOf(node("node-1", "zone-a", "1"), node("node-2", "", "1"))
	pods := []*corev1.Pod{
		pod(s, 0, hostname("h0", "foo")),
		pod(s, 1, hostname("h1", "other")),
		pod(s, 2, hostname("h2", "")),
		pod(s, 3, onNode("node-2")),
		pod(s, 4, ips("fd00::4", "10.0.0.4")),
		pod(s, 5, phase(corev1.PodSucceeded)),
		pod(s, 6, phase(corev1.PodFailed)),
		pod(s, 7, ips()),
		pod(s, 8, phase(corev1.PodPending)),
		pod(s, 9, phase(corev1.PodUnknown)),
		pod(s, 10, func(p *corev1.Pod) { p.Status.PodIPs = nil }), // only status.podIP: included, but no address
	}
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: nodes}, DefaultOptions())
	byPod := map[string]PodDecision{}
	for _, d := range p.Pods {
		byPod[d.Name] = d
	}
	ep := func(name string) discovery.Endpoint { return byPod[name].Endpoints[0].Endpoint }
	if h := ep("pod0").Hostname; h == nil || *h != "h0" {
		t.Error("hostname with matching subdomain not set")
	}
	if ep("pod1").Hostname != nil || ep("pod2").Hostname != nil {
		t.Error("hostname set without matching subdomain")
	}
	if ep("pod0").Zone == nil || *ep("pod0").Zone != "zone-a" || ep("pod3").Zone != nil {
		t.Error("zone not taken from the node's label")
	}
	if a := ep("pod4").Addresses; !reflect.DeepEqual(a, []string{"10.0.0.4"}) {
		t.Errorf("multi-IP pod in an IPv4 slice: %v", a)
	}
	for name, want := range map[string]Reason{"pod5": PodTerminal, "pod6": PodTerminal, "pod7": NoPodIP, "pod10": AddressFamilyMismatch} {
		if d := byPod[name]; d.Included || d.Reason != want {
			t.Errorf("%s: included=%v reason=%s, want %s", name, d.Included, d.Reason, want)
		}
	}
	for _, name := range []string{"pod8", "pod9"} {
		if !byPod[name].Included {
			t.Errorf("%s (Pending/Unknown with an IP) excluded", name)
		}
	}
}

// upstream: TestGetEndpointPorts, TestFindPort
func TestPortResolution(t *testing.T) {
	app := "http"
	s := svc("foo", ports(
		corev1.ServicePort{Name: "num", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP, AppProtocol: &app},
		namedPort("named", "http", corev1.ProtocolTCP),
		namedPort("udp", "http", corev1.ProtocolUDP),
	))
	cases := []struct {
		name string
		pod  *corev1.Pod
		want map[string]int32 // port name -> resolved port; absent = skipped
	}{
		{"numeric passthrough, no container ports", pod(s, 0), map[string]int32{"num": 8080}},
		{"named in a container", pod(s, 1, containerPort("http", 9000, corev1.ProtocolTCP)), map[string]int32{"num": 8080, "named": 9000}},
		{"protocol must match", pod(s, 2, containerPort("http", 9000, corev1.ProtocolUDP)), map[string]int32{"num": 8080, "udp": 9000}},
		{"sidecar", pod(s, 3, sidecarPort("http", 9100)), map[string]int32{"num": 8080, "named": 9100}},
		{"app container wins over sidecar", pod(s, 4, sidecarPort("http", 9100), containerPort("http", 9000, corev1.ProtocolTCP)), map[string]int32{"num": 8080, "named": 9000}},
		{"plain init container ignored", pod(s, 5, func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9200, Protocol: corev1.ProtocolTCP}}}}
		}), map[string]int32{"num": 8080}},
	}
	for _, c := range cases {
		got, notes := endpointPorts(s, c.pod)
		m := map[string]int32{}
		for _, p := range got {
			m[*p.Name] = *p.Port
			if *p.Name == "num" && (p.AppProtocol == nil || *p.AppProtocol != "http") {
				t.Errorf("%s: appProtocol not passed through", c.name)
			}
		}
		if !reflect.DeepEqual(m, c.want) {
			t.Errorf("%s: ports %v, want %v", c.name, m, c.want)
		}
		if len(notes) != 3-len(c.want) {
			t.Errorf("%s: %d notes for %d unresolved ports", c.name, len(notes), 3-len(c.want))
		}
	}
	if got, _ := endpointPorts(svc("foo", headless, ports()), pod(s, 0)); got == nil || len(got) != 0 {
		t.Errorf("headless without ports: %v", got)
	}
}

// upstream: TestSetEndpointSliceLabels
func TestLabelDriftDetection(t *testing.T) {
	withLabels := func(kv ...string) *discovery.EndpointSlice {
		s := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Labels[kv[i]] = kv[i+1]
		}
		return s
	}
	cases := []struct {
		name    string
		svc     *corev1.Service
		slice   *discovery.EndpointSlice
		changed bool
	}{
		{"nothing", svc("foo"), withLabels(), false},
		{"reserved only on slice", svc("foo"), withLabels(discovery.LabelServiceName, "foo", discovery.LabelManagedBy, "x"), false},
		{"service label missing on slice", svc("foo", svcLabels("a", "1")), withLabels(), true},
		{"service label present", svc("foo", svcLabels("a", "1")), withLabels("a", "1"), false},
		{"service label value differs", svc("foo", svcLabels("a", "1")), withLabels("a", "2"), true},
		{"stale slice label", svc("foo"), withLabels("stale", "x"), true},
		{"headless flip alone", svc("foo", headless), withLabels(), false},
		{"headless label on a ClusterIP slice", svc("foo"), withLabels(corev1.IsHeadlessService, ""), false},
		{"reserved labels on the Service", svc("foo", svcLabels(discovery.LabelManagedBy, "hijack")), withLabels(), false},
	}
	for _, c := range cases {
		if got := newLabeler(c.svc, DefaultManagedBy).changed(c.slice); got != c.changed {
			t.Errorf("%s: changed=%v, want %v", c.name, got, c.changed)
		}
	}
}

// upstream: TestSupportedServiceAddressType
func TestAddressTypes(t *testing.T) {
	v4, v6 := discovery.AddressTypeIPv4, discovery.AddressTypeIPv6
	cases := []struct {
		name string
		svc  *corev1.Service
		want []discovery.AddressType
	}{
		{"v4", svc("foo"), []discovery.AddressType{v4}},
		{"v6", svc("foo", families(corev1.IPv6Protocol)), []discovery.AddressType{v6}},
		{"v4,v6", svc("foo", families(corev1.IPv4Protocol, corev1.IPv6Protocol)), []discovery.AddressType{v4, v6}},
		{"v6,v4", svc("foo", families(corev1.IPv6Protocol, corev1.IPv4Protocol)), []discovery.AddressType{v4, v6}},
		{"no families, v4 clusterIP", svc("foo", families()), []discovery.AddressType{v4}},
		{"no families, v6 clusterIP", svc("foo", families(), func(s *corev1.Service) { s.Spec.ClusterIP = "fd00::1" }), []discovery.AddressType{v6}},
		{"no families, headless", svc("foo", families(), headless), []discovery.AddressType{v4, v6}},
		{"no families, no clusterIP", svc("foo", families(), noClusterIP), []discovery.AddressType{v4, v6}},
		{"headless v6", svc("foo", headless, families(corev1.IPv6Protocol)), []discovery.AddressType{v6}},
		{"headless dual", svc("foo", headless, families(corev1.IPv4Protocol, corev1.IPv6Protocol)), []discovery.AddressType{v4, v6}},
	}
	for _, c := range cases {
		if got := addressTypes(c.svc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// upstream: Test_hintsEnabled
func TestHintsEnabled(t *testing.T) {
	dep, mode := corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode
	cases := []struct {
		ann  map[string]string
		want bool
	}{
		{nil, false}, {map[string]string{}, false}, {map[string]string{"x": "Auto"}, false},
		{map[string]string{dep: "Auto"}, true}, {map[string]string{dep: "auto"}, true}, {map[string]string{dep: "aUto"}, false},
		{map[string]string{dep: "enabled"}, false}, {map[string]string{dep: ""}, false}, {map[string]string{dep: "disabled"}, false},
		{map[string]string{mode: "Auto"}, true}, {map[string]string{mode: "auto"}, true}, {map[string]string{mode: "AUTO"}, false},
		{map[string]string{mode: "PreferZone"}, false}, {map[string]string{mode: ""}, false},
		{map[string]string{dep: "Auto", mode: "Disabled"}, true}, {map[string]string{dep: "disabled", mode: "Auto"}, false},
		{map[string]string{dep: "", mode: "Auto"}, false}, {map[string]string{dep: "auto", mode: "auto"}, true},
		{map[string]string{dep: "Auto", mode: "Auto"}, true},
	}
	for _, c := range cases {
		if got := hintsEnabled(c.ann); got != c.want {
			t.Errorf("%v: %v, want %v", c.ann, got, c.want)
		}
	}
}

func zonedPods(s *corev1.Service, n int, opts ...podOpt) []*corev1.Pod {
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		out = append(out, pod(s, i, append([]podOpt{onNode([]string{"node-a", "node-b", "node-c"}[i%3])}, opts...)...))
	}
	return out
}

func threeZones() Nodes {
	return nodesOf(node("node-a", "zone-a", "4"), node("node-b", "zone-b", "4"), node("node-c", "zone-c", "4"))
}

func hintZones(slices []*discovery.EndpointSlice) map[string]int {
	out := map[string]int{}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Hints != nil {
				for _, z := range e.Hints.ForZones {
					out[z.Name]++
				}
			}
		}
	}
	return out
}

// upstream: TestReconcileTopology
func TestTopologyAutoHints(t *testing.T) {
	auto := annotate(corev1.AnnotationTopologyMode, "Auto")
	s := svc("foo", auto)
	pods := zonedPods(s, 6)
	// Without the full Node list there is no allocation (upstream: no topology cache).
	partial := threeZones()
	partial.Complete = false
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: partial}, DefaultOptions())
	if len(hintZones(p.Create)) != 0 || len(p.Warnings) != 1 || p.Warnings[0].Reason != HintsDisabled {
		t.Errorf("partial nodes: hints %v warnings %v", hintZones(p.Create), p.Warnings)
	}
	// Balanced zones: every ready endpoint hinted to its own zone.
	p = mustPlan(t, Input{Service: s, Pods: pods, Nodes: threeZones()}, DefaultOptions())
	if got := hintZones(p.Create); !reflect.DeepEqual(got, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}) {
		t.Errorf("balanced: %v", got)
	}
	// Unbalanced CPU: endpoints are moved towards the bigger zone.
	big := nodesOf(node("node-a", "zone-a", "16"), node("node-b", "zone-b", "4"), node("node-c", "zone-c", "4"))
	p = mustPlan(t, Input{Service: s, Pods: zonedPods(s, 12), Nodes: big}, DefaultOptions())
	if got := hintZones(p.Create); got["zone-a"] <= 4 || got["zone-a"]+got["zone-b"]+got["zone-c"] != 12 {
		t.Errorf("unbalanced: %v", got)
	}
	// Too few endpoints for the zones: no hints.
	p = mustPlan(t, Input{Service: s, Pods: zonedPods(s, 2), Nodes: threeZones()}, DefaultOptions())
	if len(hintZones(p.Create)) != 0 {
		t.Errorf("2 endpoints, 3 zones: %v", hintZones(p.Create))
	}
	// Disabled: none, and stale ones are removed.
	p = mustPlan(t, Input{Service: svc("foo", annotate(corev1.AnnotationTopologyMode, "Disabled")), Pods: pods, Nodes: threeZones()}, DefaultOptions())
	if len(hintZones(p.Create)) != 0 {
		t.Errorf("disabled: %v", hintZones(p.Create))
	}
}

// upstream: TestReconcile_TrafficDistribution
func TestTrafficDistributionHints(t *testing.T) {
	cases := []struct {
		name      string
		svc       *corev1.Service
		wantZone  bool
		wantNodes bool
	}{
		{"PreferClose, annotation Disabled", svc("foo", trafficDist("PreferClose"), annotate(corev1.AnnotationTopologyMode, "Disabled")), true, false},
		{"PreferSameZone", svc("foo", trafficDist("PreferSameZone")), true, false},
		{"PreferSameNode", svc("foo", trafficDist("PreferSameNode")), true, true},
		{"nil", svc("foo"), false, false},
		{"unknown value", svc("foo", trafficDist("Bogus")), false, false},
	}
	for _, c := range cases {
		pods := zonedPods(c.svc, 3)
		pods = append(pods, pod(c.svc, 9, notReady, onNode("node-a")))
		p := mustPlan(t, Input{Service: c.svc, Pods: pods, Nodes: threeZones()}, DefaultOptions())
		for _, e := range p.Create[0].Endpoints {
			ready := *e.Conditions.Ready
			gotZone := e.Hints != nil && len(e.Hints.ForZones) == 1 && e.Hints.ForZones[0].Name == *e.Zone
			gotNode := e.Hints != nil && len(e.Hints.ForNodes) == 1 && e.Hints.ForNodes[0].Name == *e.NodeName
			if gotZone != (c.wantZone && ready) || gotNode != (c.wantNodes && ready) {
				t.Errorf("%s: endpoint %s ready=%v hints %+v", c.name, e.TargetRef.Name, ready, e.Hints)
			}
		}
	}
	// PreferClose with topology-mode Auto: the annotation wins.
	s := svc("foo", trafficDist("PreferClose"), annotate(corev1.AnnotationTopologyMode, "Auto"))
	big := nodesOf(node("node-a", "zone-a", "16"), node("node-b", "zone-b", "4"), node("node-c", "zone-c", "4"))
	p := mustPlan(t, Input{Service: s, Pods: zonedPods(s, 12), Nodes: big}, DefaultOptions())
	if got := hintZones(p.Create); got["zone-a"] <= 4 {
		t.Errorf("annotation should win over trafficDistribution: %v", got)
	}
}
