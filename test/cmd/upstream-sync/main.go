// Command upstream-sync does, for benchmarks only, the job of
// `kubectl slices sync svc/NAME` with upstream k8s.io/endpointslice's
// Reconciler, the library kube-controller-manager runs: the comparison
// program of test/e2e's BenchmarkSync. It reads as a plain client would
// (consistent, paginated lists in protobuf) and writes one object at a time,
// as the Reconciler does.
//
//	upstream-sync -kubeconfig FILE -n NAMESPACE NAME
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/tools/record"
	upstream "k8s.io/endpointslice"
	"k8s.io/endpointslice/topologycache"
	upstreamutil "k8s.io/endpointslice/util"
)

// upstreamManagedBy keeps the comparison's slices apart from kubectl-slices'.
const upstreamManagedBy = "upstream-bench"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	ns := flag.String("n", "default", "namespace")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err == nil {
		err = upstreamSync(context.Background(), cfg, *ns, flag.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// upstreamSync reads the Service, its Pods, the Nodes and its slices, then
// runs the upstream Reconciler with the same rate limits as kubectl-slices.
func upstreamSync(ctx context.Context, cfg *rest.Config, ns, name string) error {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	c.QPS, c.Burst = 200, 400
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return err
	}
	svc, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var pods []*corev1.Pod
	err = pager.New(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.LabelSelector = labels.SelectorFromSet(svc.Spec.Selector).String()
		return client.CoreV1().Pods(ns).List(ctx, o)
	}).EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
		pods = append(pods, o.(*corev1.Pod))
		return nil
	})
	if err != nil {
		return err
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	var nodeList []*corev1.Node
	for i := range nodes.Items {
		_ = idx.Add(&nodes.Items[i])
		nodeList = append(nodeList, &nodes.Items[i])
	}
	list, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
		LabelSelector: discovery.LabelServiceName + "=" + name + "," + discovery.LabelManagedBy + "=" + upstreamManagedBy})
	if err != nil {
		return err
	}
	var slices []*discovery.EndpointSlice
	for i := range list.Items {
		slices = append(slices, &list.Items[i])
	}
	topo := topologycache.NewTopologyCache()
	topo.SetNodes(logr.Discard(), nodeList)
	r := upstream.NewReconciler(client, corelisters.NewNodeLister(idx), 100, upstreamutil.NewEndpointSliceTracker(),
		topo, &record.FakeRecorder{}, upstreamManagedBy, upstream.WithPreferSameTrafficDistributionEnabled(true))
	return r.Reconcile(logr.Discard(), svc, pods, slices, svc.CreationTimestamp.Time)
}
