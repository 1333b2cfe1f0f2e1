package reconcile

import (
	"context"
	"fmt"
	"testing"

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

// BenchmarkPlan times planning one Service, ours beside upstream's Reconcile
// on the same input, for a fresh Service and for 5% churn against existing
// slices. Upstream gets a client whose writes do nothing, so only planning is
// timed. Run with `make bench`.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, churn := range []bool{false, true} {
			in := benchInput(b, n, churn)
			name := fmt.Sprintf("pods=%d/%s", n, map[bool]string{false: "fresh", true: "churn5pct"}[churn])
			b.Run(name+"/impl=ours", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Compute(in, DefaultOptions()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/impl=upstream", func(b *testing.B) {
				b.ReportAllocs()
				r := newBenchUpstream(in)
				for b.Loop() {
					if err := r.Reconcile(logr.Discard(), in.Service, in.Pods, in.Slices, in.Service.CreationTimestamp.Time); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchInput: n ready Pods spread over 30 Nodes in 3 zones. With churn, the
// live slices hold the Service as it was before 5% of the Pods changed (half
// flipped readiness, half were replaced by new Pods).
func benchInput(b *testing.B, n int, churn bool) Input {
	s := svc("web")
	s.CreationTimestamp = metav1.Now()
	nodes := map[string]*corev1.Node{}
	for i := 0; i < 30; i++ {
		nd := node(fmt.Sprintf("node-%d", i), fmt.Sprintf("zone-%d", i%3), "8")
		nodes[nd.Name] = nd
	}
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = pod(s, i, onNode(fmt.Sprintf("node-%d", i%30)))
	}
	in := Input{Service: s, Pods: pods, Nodes: Nodes{ByName: nodes, Complete: true}}
	if !churn {
		return in
	}
	p, err := Compute(in, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	in.Slices = applyPlan(p)
	changed := make([]*corev1.Pod, n)
	copy(changed, pods)
	for i := 0; i < n/20; i++ {
		j := i * 20
		if i%2 == 0 {
			changed[j] = pod(s, j, onNode(fmt.Sprintf("node-%d", j%30)), notReady)
		} else {
			changed[j] = pod(s, n+j, onNode(fmt.Sprintf("node-%d", j%30)))
		}
	}
	in.Pods = changed
	return in
}

func newBenchUpstream(in Input) *upstream.Reconciler {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	var nodes []*corev1.Node
	for _, n := range in.Nodes.ByName {
		_ = idx.Add(n)
		nodes = append(nodes, n)
	}
	topo := topologycache.NewTopologyCache()
	topo.SetNodes(logr.Discard(), nodes)
	return upstream.NewReconciler(noopClient{}, corelisters.NewNodeLister(idx), DefaultMaxEndpointsPerSlice,
		upstreamutil.NewEndpointSliceTracker(), topo, &record.FakeRecorder{}, DefaultManagedBy,
		upstream.WithPreferSameTrafficDistributionEnabled(true))
}

// noopClient is a clientset whose EndpointSlice writes succeed instantly and
// store nothing; only the calls upstream's Reconciler makes are implemented.
type noopClient struct{ kubernetes.Interface }

func (noopClient) DiscoveryV1() discoveryv1.DiscoveryV1Interface { return noopDiscovery{} }

type noopDiscovery struct {
	discoveryv1.DiscoveryV1Interface
}

func (noopDiscovery) EndpointSlices(string) discoveryv1.EndpointSliceInterface { return noopSlices{} }

type noopSlices struct {
	discoveryv1.EndpointSliceInterface
}

func (noopSlices) Create(_ context.Context, s *discovery.EndpointSlice, _ metav1.CreateOptions) (*discovery.EndpointSlice, error) {
	return s, nil
}

func (noopSlices) Update(_ context.Context, s *discovery.EndpointSlice, _ metav1.UpdateOptions) (*discovery.EndpointSlice, error) {
	return s, nil
}

func (noopSlices) Delete(context.Context, string, metav1.DeleteOptions) error { return nil }
