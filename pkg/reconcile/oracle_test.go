package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	discoveryv1 "k8s.io/client-go/kubernetes/typed/discovery/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	upstream "k8s.io/endpointslice"
	"k8s.io/endpointslice/topologycache"
	upstreamutil "k8s.io/endpointslice/util"
)

// oracleResult is what upstream's Reconciler wrote, and the end state those
// writes leave.
type oracleResult struct {
	creates, updates []*discovery.EndpointSlice
	deletes          []string
	// end is the live slices given, minus the deletes, with the updates
	// replacing their originals, plus the creates (named as the API would).
	end []*discovery.EndpointSlice
	err error
}

// runUpstream feeds an input to upstream k8s.io/endpointslice the way
// kube-controller-manager's syncService would: eligibility checks first, only
// our managed-by value listed, slices pending deletion dropped. Unreadable
// Nodes have no upstream equivalent (its informer always has a list). The
// planner's documented rule for them is: no Pod is dropped for its Node, and
// each endpoint keeps the zone of the live endpoint of the same key. That is
// modelled as upstream with every Pod's Node present and zoneless, given the
// live slices without zones (so a zone never counts as a change), after
// which every endpoint of the end state takes the zone of its live endpoint.
func runUpstream(in Input, opts Options) oracleResult {
	svc := in.Service
	existing := filterOurs(in.Slices, svc, opts.ManagedBy)
	if svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
		return oracleResult{end: existing}
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	var nodes []*corev1.Node
	if in.Nodes.Unreadable {
		for _, p := range in.Pods {
			_ = idx.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: p.Spec.NodeName}})
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(in.Nodes.ByName)) {
			n := in.Nodes.ByName[name]
			_ = idx.Add(n)
			nodes = append(nodes, n)
		}
	}
	topo := topologycache.NewTopologyCache()
	if in.Nodes.Complete {
		// Too little Node information: upstream's allocator gives no hints.
		topo.SetNodes(logr.Discard(), nodes)
	}
	client := &recordingClient{}
	r := upstream.NewReconciler(client, corelisters.NewNodeLister(idx), int32(opts.MaxEndpointsPerSlice),
		upstreamutil.NewEndpointSliceTracker(), topo, &record.FakeRecorder{}, opts.ManagedBy,
		upstream.WithPreferSameTrafficDistributionEnabled(true))
	pods := make([]*corev1.Pod, len(in.Pods))
	for i, p := range in.Pods {
		pods[i] = p.DeepCopy()
	}
	given := make([]*discovery.EndpointSlice, len(existing))
	for i, s := range existing {
		given[i] = s.DeepCopy() // upstream sorts addresses in place
		for j := range given[i].Endpoints {
			if in.Nodes.Unreadable {
				given[i].Endpoints[j].Zone = nil
			}
		}
	}
	res := oracleResult{err: r.Reconcile(logr.Discard(), svc.DeepCopy(), pods, given, opts.TriggerTime)}
	res.creates, res.updates, res.deletes = client.s.creates, client.s.updates, client.s.deletes
	res.end = endState(existing, res.creates, res.updates, res.deletes)
	if in.Nodes.Unreadable {
		zone := liveZones(existing)
		for k, s := range res.end {
			s = s.DeepCopy()
			for i := range s.Endpoints {
				s.Endpoints[i].Zone = zone(keyOf(&s.Endpoints[i]))
			}
			res.end[k] = s
		}
	}
	return res
}

// endState applies writes to live slices: deletes and updates by name,
// creates appended. Creates without a name get one, as the API server would.
func endState(live, creates, updates []*discovery.EndpointSlice, deletes []string) []*discovery.EndpointSlice {
	gone := map[string]bool{}
	for _, d := range deletes {
		gone[d] = true
	}
	updated := map[string]*discovery.EndpointSlice{}
	for _, u := range updates {
		updated[u.Name] = u
	}
	var out []*discovery.EndpointSlice
	for _, s := range live {
		switch {
		case gone[s.Name]:
		case updated[s.Name] != nil:
			out = append(out, updated[s.Name])
		default:
			out = append(out, s)
		}
	}
	for i, c := range creates {
		c = c.DeepCopy()
		if c.Name == "" {
			c.Name = fmt.Sprintf("%sc%04d", c.GenerateName, i)
		}
		out = append(out, c)
	}
	return out
}

// ourEndState is the end state of one of our plans, computed from its writes
// the same way as upstream's.
func ourEndState(in Input, opts Options, p *Plan) []*discovery.EndpointSlice {
	var dels []string
	for _, d := range p.Delete {
		dels = append(dels, d.Name)
	}
	return endState(filterOurs(in.Slices, in.Service, opts.ManagedBy), p.Create, p.Update, dels)
}

// filterOurs is syncService's list: this Service's slices with our managed-by
// value, not being deleted, as deep copies sorted by name.
func filterOurs(slices []*discovery.EndpointSlice, svc *corev1.Service, managedBy string) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, s := range slices {
		if s.Namespace == svc.Namespace && s.Labels[discovery.LabelServiceName] == svc.Name &&
			s.Labels[discovery.LabelManagedBy] == managedBy && s.DeletionTimestamp == nil {
			out = append(out, s.DeepCopy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// recordingClient is a clientset that records the EndpointSlice writes
// upstream's Reconciler makes; only the calls it makes are implemented.
type recordingClient struct {
	kubernetes.Interface
	s recordingSlices
}

type recorded struct {
	creates, updates []*discovery.EndpointSlice
	deletes          []string
}

type recordingDiscovery struct {
	discoveryv1.DiscoveryV1Interface
	s *recordingSlices
}

type recordingSlices struct {
	discoveryv1.EndpointSliceInterface
	recorded
}

func (c *recordingClient) DiscoveryV1() discoveryv1.DiscoveryV1Interface {
	return recordingDiscovery{s: &c.s}
}

func (d recordingDiscovery) EndpointSlices(string) discoveryv1.EndpointSliceInterface { return d.s }

func (s *recordingSlices) Create(_ context.Context, es *discovery.EndpointSlice, _ metav1.CreateOptions) (*discovery.EndpointSlice, error) {
	c := es.DeepCopy()
	c.Name = fmt.Sprintf("%sup%04d", c.GenerateName, len(s.creates))
	s.creates = append(s.creates, c)
	return c, nil
}

func (s *recordingSlices) Update(_ context.Context, es *discovery.EndpointSlice, _ metav1.UpdateOptions) (*discovery.EndpointSlice, error) {
	s.updates = append(s.updates, es.DeepCopy())
	return es, nil
}

func (s *recordingSlices) Delete(_ context.Context, name string, _ metav1.DeleteOptions) error {
	s.deletes = append(s.deletes, name)
	return nil
}

// canonicalState describes slices as a comparable text: per address type and
// port group, the slice count, labels and the sorted endpoints. Placement of
// endpoints within a group is not part of it (upstream's is random). With
// hintCounts, hints are summarised per address type and zone, for the
// topology-mode: Auto allocator whose choice of endpoints upstream randomises.
func canonicalState(live []*discovery.EndpointSlice, hintCounts bool) (string, map[discovery.AddressType]map[string]int) {
	type group struct {
		slices int
		eps    []string
		labels []string
	}
	groups := map[string]*group{}
	hints := map[discovery.AddressType]map[string]int{}
	for _, s := range live {
		k := string(s.AddressType) + " ports=" + portKey(s.Ports)
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
		}
		g.slices++
		g.labels = append(g.labels, fmt.Sprint(s.Labels))
		for i := range s.Endpoints {
			ep := s.Endpoints[i]
			if hintCounts && ep.Hints != nil {
				if hints[s.AddressType] == nil {
					hints[s.AddressType] = map[string]int{}
				}
				for _, z := range ep.Hints.ForZones {
					hints[s.AddressType][z.Name]++
				}
				ep.Hints = &discovery.EndpointHints{}
			}
			g.eps = append(g.eps, canonicalEndpoint(&ep))
		}
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		sort.Strings(g.eps)
		sort.Strings(g.labels)
		fmt.Fprintf(&b, "%s slices=%d labels=%v\n", k, g.slices, g.labels)
		for _, e := range g.eps {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	return b.String(), hints
}

func canonicalEndpoint(ep *discovery.Endpoint) string {
	addrs := append([]string(nil), ep.Addresses...)
	sort.Strings(addrs)
	b := func(p *bool) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	s := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return *p
	}
	ref := "nil"
	if r := ep.TargetRef; r != nil {
		ref = fmt.Sprintf("%s/%s/%s/%s", r.Kind, r.Namespace, r.Name, r.UID)
	}
	hints := "nil"
	if h := ep.Hints; h != nil {
		hints = fmt.Sprintf("zones=%v nodes=%v", h.ForZones, h.ForNodes)
	}
	return fmt.Sprintf("%v ready=%s serving=%s term=%s host=%s node=%s zone=%s ref=%s hints=%s",
		addrs, b(ep.Conditions.Ready), b(ep.Conditions.Serving), b(ep.Conditions.Terminating),
		s(ep.Hostname), s(ep.NodeName), s(ep.Zone), ref, hints)
}
