package reconcile

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Cases of upstream k8s.io/endpointslice reconciler_test.go, in our words.
// Each test names the upstream test it stands for.

func writes(p *Plan) (c, u, d int) { return len(p.Create), len(p.Update), len(p.Delete) }

func expectWrites(t *testing.T, p *Plan, c, u, d int) {
	t.Helper()
	if gc, gu, gd := writes(p); gc != c || gu != u || gd != d {
		t.Fatalf("writes: %d creates, %d updates, %d deletes; want %d, %d, %d", gc, gu, gd, c, u, d)
	}
}

func sortedLens(slices []*discovery.EndpointSlice) []int {
	l := sliceLens(slices)
	sort.Sort(sort.Reverse(sort.IntSlice(l)))
	return l
}

// upstream: TestReconcileEmpty
func TestEmptyServiceGetsPlaceholder(t *testing.T) {
	s := svc("foo")
	p := mustPlan(t, Input{Service: s, Nodes: defaultNodes()}, DefaultOptions())
	expectWrites(t, p, 1, 0, 0)
	ph := p.Create[0]
	if ph.GenerateName != "foo-" || ph.Labels[discovery.LabelServiceName] != "foo" || ph.Ports == nil || len(ph.Ports) != 0 ||
		ph.Endpoints == nil || len(ph.Endpoints) != 0 {
		t.Errorf("placeholder: %+v", ph)
	}
}

// upstream: TestReconcile1Pod (all eight subtests)
func TestOnePodPerServiceShape(t *testing.T) {
	dual := func(p *corev1.Pod) { ips("1.2.3.4", "1234::5678:0000:0000:9abc:def0")(p) }
	trigger := time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)
	cases := []struct {
		name        string
		svc         *corev1.Service
		wantTypes   []discovery.AddressType
		wantLabels  map[string]string
		wantAddress map[discovery.AddressType]string
	}{
		{"no-family-service", svc("foo", families(), noClusterIP), []discovery.AddressType{"IPv4", "IPv6"},
			map[string]string{corev1.IsHeadlessService: ""}, map[discovery.AddressType]string{"IPv4": "1.2.3.4", "IPv6": "1234::5678:0:0:9abc:def0"}},
		{"ipv4", svc("foo", noClusterIP), []discovery.AddressType{"IPv4"}, map[string]string{corev1.IsHeadlessService: ""}, map[discovery.AddressType]string{"IPv4": "1.2.3.4"}},
		{"ipv4-clusterip", svc("foo"), []discovery.AddressType{"IPv4"}, map[string]string{}, map[discovery.AddressType]string{"IPv4": "1.2.3.4"}},
		{"ipv4-labels", svc("foo", svcLabels("foo", "bar")), []discovery.AddressType{"IPv4"}, map[string]string{"foo": "bar"}, nil},
		{"ipv4-bad-labels", svc("foo", svcLabels(discovery.LabelServiceName, "bad", discovery.LabelManagedBy, "bad", corev1.IsHeadlessService, "bad")),
			[]discovery.AddressType{"IPv4"}, map[string]string{}, nil},
		{"ipv6", svc("foo", families(corev1.IPv6Protocol), noClusterIP), []discovery.AddressType{"IPv6"},
			map[string]string{corev1.IsHeadlessService: ""}, map[discovery.AddressType]string{"IPv6": "1234::5678:0:0:9abc:def0"}},
		{"ipv6-clusterip", svc("foo", families(corev1.IPv6Protocol), func(s *corev1.Service) { s.Spec.ClusterIP = "1234::5678:0000:0000:9abc:def0" }),
			[]discovery.AddressType{"IPv6"}, map[string]string{}, nil},
		{"dualstack-service", svc("foo", families(corev1.IPv6Protocol, corev1.IPv4Protocol)), []discovery.AddressType{"IPv4", "IPv6"}, map[string]string{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := node("node-1", "us-west-2a", "4")
			p := pod(c.svc, 1, dual, hostname("foo", ""))
			o := DefaultOptions()
			o.TriggerTime = trigger
			plan := mustPlan(t, Input{Service: c.svc, Pods: []*corev1.Pod{p}, Nodes: nodesOf(n)}, o)
			if len(plan.Create) != len(c.wantTypes) {
				t.Fatalf("%d slices, want %d", len(plan.Create), len(c.wantTypes))
			}
			for i, s := range plan.Create {
				if s.AddressType != c.wantTypes[i] {
					t.Errorf("slice %d type %s, want %s", i, s.AddressType, c.wantTypes[i])
				}
				want := map[string]string{discovery.LabelServiceName: "foo", discovery.LabelManagedBy: DefaultManagedBy}
				for k, v := range c.wantLabels {
					want[k] = v
				}
				if !reflect.DeepEqual(s.Labels, want) {
					t.Errorf("labels %v, want %v", s.Labels, want)
				}
				if s.Annotations[corev1.EndpointsLastChangeTriggerTime] != "2026-05-06T07:08:09.00000001Z" {
					t.Errorf("trigger time annotation %q", s.Annotations[corev1.EndpointsLastChangeTriggerTime])
				}
				ep := s.Endpoints[0]
				if want, ok := c.wantAddress[s.AddressType]; ok && (len(ep.Addresses) != 1 || ep.Addresses[0] != want) {
					t.Errorf("addresses %v, want %s", ep.Addresses, want)
				}
				if *ep.Conditions.Ready != true || *ep.Conditions.Serving != true || *ep.Conditions.Terminating != false ||
					*ep.Zone != "us-west-2a" || *ep.NodeName != "node-1" || ep.Hostname != nil ||
					*ep.TargetRef != (corev1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: "pod1", UID: "uid-1"}) {
					t.Errorf("endpoint %+v", ep)
				}
			}
		})
	}
}

// upstream: TestReconcile1EndpointSlice
func TestExistingPlaceholder(t *testing.T) {
	s := svc("foo")
	first := mustPlan(t, Input{Service: s}, DefaultOptions())
	same := applyPlan(first)
	p := mustPlan(t, Input{Service: s, Slices: same}, DefaultOptions())
	expectWrites(t, p, 0, 0, 0)

	different := applyPlan(first)
	different[0].Labels["foo"] = "bar"
	different[0].Ports = []discovery.EndpointPort{{Port: ptrTo(int32(80))}}
	p = mustPlan(t, Input{Service: s, Slices: different}, DefaultOptions())
	expectWrites(t, p, 0, 1, 0)
	if p.Update[0].Name != different[0].Name || len(p.Update[0].Ports) != 0 || p.Update[0].Labels["foo"] != "" {
		t.Errorf("recycled placeholder %+v", p.Update[0])
	}
}

// upstream: TestPlaceHolderSliceCompare
func TestPlaceholderCompare(t *testing.T) {
	s := svc("foo")
	base := newSlice(s, newLabeler(s, DefaultManagedBy), nil, discovery.AddressTypeIPv4)
	mod := func(f func(*discovery.EndpointSlice)) *discovery.EndpointSlice {
		c := base.DeepCopy()
		f(c)
		return c
	}
	cases := []struct {
		name string
		live *discovery.EndpointSlice
		same bool
	}{
		{"identical", base.DeepCopy(), true},
		{"name differs", mod(func(c *discovery.EndpointSlice) { c.Name = "other" }), true},
		{"creation time differs", mod(func(c *discovery.EndpointSlice) { c.CreationTimestamp = metav1.Now() }), true},
		{"owner differs", mod(func(c *discovery.EndpointSlice) { c.OwnerReferences = nil }), true},
		{"nil ports and endpoints", mod(func(c *discovery.EndpointSlice) { c.Ports, c.Endpoints = nil, nil }), true},
		{"empty-valued label", mod(func(c *discovery.EndpointSlice) { c.Labels[corev1.IsHeadlessService] = "" }), true},
		{"label differs", mod(func(c *discovery.EndpointSlice) { c.Labels["x"] = "y" }), false},
		{"address type differs", mod(func(c *discovery.EndpointSlice) { c.AddressType = discovery.AddressTypeIPv6 }), false},
		{"has a port", mod(func(c *discovery.EndpointSlice) { c.Ports = []discovery.EndpointPort{{}} }), false},
		{"namespace differs", mod(func(c *discovery.EndpointSlice) { c.Namespace = "other" }), false},
	}
	for _, c := range cases {
		if got := isSamePlaceholder(c.live, base); got != c.same {
			t.Errorf("%s: same=%v, want %v", c.name, got, c.same)
		}
	}
}

// upstream: TestReconcile1EndpointSlicePublishNotReadyAddresses
func TestPublishNotReadyMarksAllReady(t *testing.T) {
	s := svc("foo", publishNotReady)
	var pods []*corev1.Pod
	for i := 0; i < 50; i++ {
		if i%3 == 0 {
			pods = append(pods, pod(s, i, notReady))
		} else {
			pods = append(pods, pod(s, i))
		}
	}
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions())
	expectWrites(t, p, 1, 0, 0)
	for _, ep := range p.Create[0].Endpoints {
		if !*ep.Conditions.Ready {
			t.Fatalf("endpoint not ready: %+v", ep)
		}
	}
}

// upstream: TestReconcileManyPods, TestReconcileMaxEndpointsPerSlice
func TestPackingFreshService(t *testing.T) {
	cases := []struct {
		max  int
		want []int
	}{
		{100, []int{100, 100, 50}}, {50, []int{50, 50, 50, 50, 50}}, {80, []int{80, 80, 80, 10}},
		{150, []int{150, 100}}, {250, []int{250}}, {500, []int{250}},
	}
	s := svc("foo")
	pods := podsN(s, 250)
	for _, c := range cases {
		p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, opts(c.max))
		if got := sliceLens(p.Create); !reflect.DeepEqual(got, c.want) {
			t.Errorf("max %d: %v, want %v", c.max, got, c.want)
		}
	}
}

// liveSlices packs the given pods into named live slices of the given sizes.
func liveSlices(t *testing.T, s *corev1.Service, pods []*corev1.Pod, sizes ...int) []*discovery.EndpointSlice {
	t.Helper()
	var live []*discovery.EndpointSlice
	start := 0
	for i, n := range sizes {
		p := mustPlan(t, Input{Service: s, Pods: pods[start : start+n], Nodes: defaultNodes()}, opts(1000))
		sl := applyPlan(p)[0]
		sl.Name = "live-" + string(rune('a'+i))
		live = append(live, sl)
		start += n
	}
	return live
}

// upstream: TestReconcileEndpointSlicesSomePreexisting
func TestPackingSomePreexisting(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 250)
	live := liveSlices(t, s, pods, 62, 61)
	before := snapshot(Input{Slices: live})
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 1, 1, 0)
	if got := sortedLens(p.Final()); !reflect.DeepEqual(got, []int{100, 89, 61}) {
		t.Errorf("final %v", got)
	}
	if snapshot(Input{Slices: live}) != before {
		t.Error("live slices were modified")
	}
}

// upstream: TestReconcileEndpointSlicesSomePreexistingWorseAllocation
func TestPackingWorseAllocation(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 300)
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: liveSlices(t, s, pods, 74, 74)}, DefaultOptions())
	expectWrites(t, p, 2, 0, 0)
	if got := sortedLens(p.Final()); !reflect.DeepEqual(got, []int{100, 74, 74, 52}) {
		t.Errorf("final %v", got)
	}
}

// upstream: TestReconcileEndpointSlicesUpdating
func TestPortChangeUpdatesInPlace(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 250)
	live := applyPlan(mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions()))
	s2 := s.DeepCopy()
	s2.Spec.Ports[0].TargetPort = intstr.FromInt32(81)
	p := mustPlan(t, Input{Service: s2, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 3, 0)
	if got := sortedLens(p.Update); !reflect.DeepEqual(got, []int{100, 100, 50}) {
		t.Errorf("updates %v", got)
	}
}

// upstream: TestReconcileEndpointSlicesServicesLabelsUpdating,
// TestReconcileEndpointSlicesServicesReservedLabels
func TestServiceLabelChanges(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 250)
	live := applyPlan(mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions()))
	labelled := svc("foo", svcLabels("new-label", "x"))
	p := mustPlan(t, Input{Service: labelled, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 3, 0)
	for _, u := range p.Update {
		if u.Labels["new-label"] != "x" {
			t.Errorf("update lacks the new label: %v", u.Labels)
		}
	}
	reserved := svc("foo", svcLabels(discovery.LabelServiceName, "bad", discovery.LabelManagedBy, "bad", corev1.IsHeadlessService, "bad"))
	p = mustPlan(t, Input{Service: reserved, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 0, 0)
}

// upstream: TestReconcileEndpointSlicesRecycling
func TestRecyclingRepacks(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 300)
	live := liveSlices(t, s, pods, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30)
	expectWrites(t, mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions()), 0, 0, 0)
	s2 := s.DeepCopy()
	s2.Spec.Ports[0].TargetPort = intstr.FromInt32(81)
	p := mustPlan(t, Input{Service: s2, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 3, 7)
	if got := sliceLens(p.Update); !reflect.DeepEqual(got, []int{100, 100, 100}) {
		t.Errorf("updates %v", got)
	}
	for _, u := range p.Update {
		if u.ResourceVersion == "" {
			t.Errorf("recycled update %s is unconditional", u.Name)
		}
	}
}

// upstream: TestReconcileEndpointSlicesUpdatePacking
func TestUpdatePackingFillsFullestFirst(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 115)
	live := liveSlices(t, s, pods, 80, 20)
	changed := make([]*corev1.Pod, len(pods))
	copy(changed, pods)
	changed[0] = pod(s, 0, notReady)   // in the 80-slice
	changed[85] = pod(s, 85, notReady) // in the 20-slice
	p := mustPlan(t, Input{Service: s, Pods: changed, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 2, 0)
	if got := sortedLens(p.Update); !reflect.DeepEqual(got, []int{95, 20}) {
		t.Errorf("updates %v", got)
	}
}

// upstream: TestReconcileEndpointSlicesReplaceDeprecated
func TestDeprecatedAddressTypeReplaced(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 130)
	live := liveSlices(t, s, pods, 80, 50)
	for _, l := range live {
		l.AddressType = "IP" // the deprecated type
	}
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 2, 0, 2)
	if got := sliceLens(p.Create); !reflect.DeepEqual(got, []int{100, 30}) {
		t.Errorf("creates %v", got)
	}
}

// upstream: TestReconcileEndpointSlicesRecreation
func TestSliceOwnedByOldServiceIsReplaced(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 5)
	live := liveSlices(t, s, pods, 5)
	expectWrites(t, mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions()), 0, 0, 0)
	live[0].OwnerReferences[0].UID = "an-older-service"
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 1, 0, 1)
}

// upstream: TestReconcileEndpointSlicesNamedPorts
func TestNamedPortsMakeGroups(t *testing.T) {
	s := svc("foo", ports(corev1.ServicePort{TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}))
	var pods []*corev1.Pod
	for i := 0; i < 300; i++ {
		pods = append(pods, pod(s, i, containerPort("http", int32(8080+i%5), corev1.ProtocolTCP)))
	}
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions())
	expectWrites(t, p, 5, 0, 0)
	for i, c := range p.Create {
		if len(c.Endpoints) != 60 || len(c.Ports) != 1 || *c.Ports[0].Name != "" || *c.Ports[0].Protocol != corev1.ProtocolTCP {
			t.Errorf("slice %d: %d endpoints, ports %+v", i, len(c.Endpoints), c.Ports)
		}
	}
}

// upstream: TestReconcileEndpointSlicesMetrics (the write counts; we keep no
// metrics), TestReconcileEndpointSlicesMetrics_GaugeUpdates (desired shape)
func TestShrinkingIsOneUpdate(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 20)
	first := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions())
	expectWrites(t, first, 1, 0, 0)
	p := mustPlan(t, Input{Service: s, Pods: pods[:10], Nodes: defaultNodes(), Slices: applyPlan(first)}, DefaultOptions())
	expectWrites(t, p, 0, 1, 0)
	if len(p.Update[0].Endpoints) != 10 {
		t.Errorf("%d endpoints", len(p.Update[0].Endpoints))
	}
}

// upstream: TestReconcilerFinalizeSvcDeletionTimestamp
func TestServiceBeingDeleted(t *testing.T) {
	now := metav1.Now()
	s := svc("foo")
	s.DeletionTimestamp = &now
	pods := podsN(s, 150)
	// No live slices: every create is suppressed.
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions())
	expectWrites(t, p, 0, 0, 0)
	if p.SuppressedCreates != 2 || p.Service.Reason != ServiceTerminating {
		t.Errorf("suppressed %d, reason %s", p.SuppressedCreates, p.Service.Reason)
	}
	// Updates and deletes proceed; a create paired with a delete is recycled.
	live := liveSlices(t, svc("foo"), pods, 10, 10)
	live[1].OwnerReferences[0].UID = "old"
	p = mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	if c, u, _ := writes(p); c != 0 || u != 1 {
		t.Errorf("writes %d/%d/%d", c, u, len(p.Delete))
	}
}

// upstream: TestReconcilerPodMissingNode
func TestPodOnMissingNode(t *testing.T) {
	for _, pnr := range []bool{false, true} {
		s := svc("foo")
		if pnr {
			publishNotReady(s)
		}
		pods := []*corev1.Pod{pod(s, 0), pod(s, 1, onNode("node-gone"))}
		p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions())
		n := len(p.Create[0].Endpoints)
		switch {
		case !pnr && (n != 1 || len(p.Warnings) != 1 || p.Pods[1].Reason != NodeNotFound):
			t.Errorf("publishNotReady=false: %d endpoints, warnings %v, decision %+v", n, p.Warnings, p.Pods[1])
		case pnr && (n != 2 || len(p.Warnings) != 0 || !p.Pods[1].Included):
			t.Errorf("publishNotReady=true: %d endpoints, warnings %v", n, p.Warnings)
		}
	}
	// Every Node gone: the slice is emptied and recycled as the placeholder.
	s := svc("foo")
	pods := podsN(s, 3)
	live := liveSlices(t, s, pods, 3)
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: nodesOf(), Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 1, 0)
	if len(p.Update[0].Endpoints) != 0 || len(p.Update[0].Ports) != 0 {
		t.Errorf("placeholder %+v", p.Update[0])
	}
}

// upstream: TestReconcileHeadlessServiceNoPorts
func TestHeadlessWithoutPortsIsStable(t *testing.T) {
	s := svc("foo", headless, ports())
	pods := podsN(s, 3)
	first := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes()}, DefaultOptions())
	expectWrites(t, first, 1, 0, 0)
	live := applyPlan(first)
	live[0].Ports = nil // what a protobuf round trip returns
	expectWrites(t, mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions()), 0, 0, 0)
}

// Our own: slices of other managers are never planned, whatever is passed.
func TestForeignSlicesNeverPlanned(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 3)
	live := liveSlices(t, s, pods, 3)
	live[0].Labels[discovery.LabelManagedBy] = ControllerManagedBy
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: defaultNodes(), Slices: live}, DefaultOptions())
	for _, list := range [][]*discovery.EndpointSlice{p.Update, p.Delete, p.Unchanged} {
		for _, sl := range list {
			if sl.Labels[discovery.LabelManagedBy] != DefaultManagedBy {
				t.Errorf("foreign slice in plan: %s", sl.Name)
			}
		}
	}
	if len(p.Foreign) != 1 || len(p.Create) != 1 {
		t.Errorf("foreign %d, creates %d", len(p.Foreign), len(p.Create))
	}
}

// Our own: a Node that cannot be read keeps the Pod and its live zone.
func TestUnreadableNodesKeepLiveZones(t *testing.T) {
	s := svc("foo")
	pods := podsN(s, 3)
	live := liveSlices(t, s, pods, 3)
	p := mustPlan(t, Input{Service: s, Pods: pods, Nodes: Nodes{Unreadable: true}, Slices: live}, DefaultOptions())
	expectWrites(t, p, 0, 0, 0)
	if !p.Pods[0].Included || p.Pods[0].Notes[0].Reason != NodeUnreadable || !strings.Contains(p.Pods[0].Notes[0].Message, "zone kept") {
		t.Errorf("decision %+v", p.Pods[0])
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Reason != NodeUnreadable {
		t.Errorf("want one warning that the Nodes are unreadable, got %v", p.Warnings)
	}
}

// Upstream tests with no counterpart here, and why: the metrics histogram and
// gauge tests (TestReconcileEndpointSlicesMetrics_*CollectAndCompare,
// _GaugeUpdates: the planner keeps no metrics; the write counts behind them
// are TestShrinkingIsOneUpdate) and TestServiceControllerKey (the planner
// reads the service-name label directly: TestForeignSlicesNeverPlanned).
