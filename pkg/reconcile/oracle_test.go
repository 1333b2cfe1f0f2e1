package reconcile

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	upstream "k8s.io/endpointslice"
	"k8s.io/endpointslice/topologycache"
	upstreamutil "k8s.io/endpointslice/util"
)

// oracleResult is the state upstream's Reconciler leaves behind.
type oracleResult struct {
	slices                 []*discovery.EndpointSlice
	creates, updates, dels int
	err                    error
}

// runUpstream feeds an input to upstream k8s.io/endpointslice the way
// kube-controller-manager's syncService would: eligibility checks first, only
// our managed-by value listed, slices pending deletion dropped.
func runUpstream(in Input, opts Options) oracleResult {
	svc := in.Service
	if svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
		return oracleResult{slices: filterOurs(in.Slices, svc, opts.ManagedBy)}
	}
	existing := filterOurs(in.Slices, svc, opts.ManagedBy)
	objs := make([]runtime.Object, 0, len(existing))
	for _, s := range existing {
		objs = append(objs, s.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	var seq atomic.Int64
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice)
		if s.Name == "" {
			s.Name = fmt.Sprintf("%sup%05d", s.GenerateName, seq.Add(1))
		}
		s.Generation = 1
		return false, nil, nil
	})
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	var nodes []*corev1.Node
	for _, name := range sortedKeys(in.Nodes.ByName) {
		n := in.Nodes.ByName[name]
		_ = idx.Add(n)
		nodes = append(nodes, n)
	}
	topo := topologycache.NewTopologyCache()
	topo.SetNodes(logr.Discard(), nodes)
	r := upstream.NewReconciler(client, corelisters.NewNodeLister(idx), int32(opts.MaxEndpointsPerSlice),
		upstreamutil.NewEndpointSliceTracker(), topo, &record.FakeRecorder{}, opts.ManagedBy,
		upstream.WithPreferSameTrafficDistributionEnabled(true))
	pods := make([]*corev1.Pod, len(in.Pods))
	for i, p := range in.Pods {
		pods[i] = p.DeepCopy()
	}
	client.ClearActions()
	err := r.Reconcile(logr.Discard(), svc.DeepCopy(), pods, existing, opts.TriggerTime)
	res := oracleResult{err: err}
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "create":
			res.creates++
		case "update":
			res.updates++
		case "delete":
			res.dels++
		}
	}
	list, _ := client.DiscoveryV1().EndpointSlices(svc.Namespace).List(context.Background(), metav1.ListOptions{})
	for i := range list.Items {
		res.slices = append(res.slices, &list.Items[i])
	}
	res.slices = filterOurs(res.slices, svc, opts.ManagedBy)
	return res
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

// canonicalState describes slices as a comparable text: per address type and
// port group, the slice count and the sorted endpoints. Placement of
// endpoints within a group is not part of it (upstream's is random). With
// hintCounts, hints are summarised per address type and zone, for the
// topology-mode: Auto allocator whose choice of endpoints upstream randomises.
func canonicalState(slices []*discovery.EndpointSlice, hintCounts bool) (string, map[discovery.AddressType]map[string]int) {
	type group struct {
		slices int
		eps    []string
		labels []string
	}
	groups := map[string]*group{}
	hints := map[discovery.AddressType]map[string]int{}
	for _, s := range slices {
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
			if hintCounts {
				if ep.Hints != nil {
					if hints[s.AddressType] == nil {
						hints[s.AddressType] = map[string]int{}
					}
					for _, z := range ep.Hints.ForZones {
						hints[s.AddressType][z.Name]++
					}
					ep.Hints = &discovery.EndpointHints{}
				}
			}
			g.eps = append(g.eps, canonicalEndpoint(&ep))
		}
	}
	var b strings.Builder
	for _, k := range sortedKeys(groups) {
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
