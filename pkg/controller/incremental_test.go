package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	utiltest "github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// TestMemoPathLeavesWhatComputeWants drives the loop through its handlers
// and queue with random Pod events (readiness flips mostly, adds, deletes,
// relabels) and, after each, requires that the slices on the API server
// are ones reconcile.Compute, given the API server's Pods, Node and slices,
// would write nothing more to; and that most syncs took the memo's path.
func TestMemoPathLeavesWhatComputeWants(t *testing.T) {
	pods := []runtime.Object{utiltest.NewNode("node-1").Zone("zone-a").Build()}
	for i := range 12 {
		pods = append(pods, memoPod(i, i%3 != 0))
	}
	svc := service("web", map[string]string{"app": "web"})
	svc.Spec.Ports[0].TargetPort.IntVal = 8080
	c, client, _ := startedWith(t, everything, func(o *Options) {
		o.Plan.MaxEndpointsPerSlice = 3
		o.Metrics = NewMetrics()
	}, append(pods, svc)...)
	versionSlices(client)
	ctx := context.Background()
	settle := func(what string) {
		t.Helper()
		runUntilComputeAgrees(t, ctx, c, client, what)
	}
	c.queue.Add(testNS + "/web")
	settle("first sync")
	r := rand.New(rand.NewSource(7))
	next := 12
	for ev := range 60 {
		podsNow, _ := client.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{})
		p := podsNow.Items[r.Intn(len(podsNow.Items))].DeepCopy()
		var what string
		switch n := r.Intn(10); {
		case n == 0:
			what = "added"
			_, err := client.CoreV1().Pods(testNS).Create(ctx, memoPod(next, true), metav1.CreateOptions{})
			next++
			must(t, err)
		case n == 1 && len(podsNow.Items) > 4:
			what = "deleted"
			must(t, client.CoreV1().Pods(testNS).Delete(ctx, p.Name, metav1.DeleteOptions{}))
		case n == 2:
			what = "relabelled"
			if p.Labels["app"] == "web" {
				p.Labels["app"] = "other"
			} else {
				p.Labels["app"] = "web"
			}
			_, err := client.CoreV1().Pods(testNS).Update(ctx, p, metav1.UpdateOptions{})
			must(t, err)
		default:
			what = "flipped"
			st := corev1.ConditionTrue
			if p.Status.Conditions[0].Status == st {
				st = corev1.ConditionFalse
			}
			p.Status.Conditions[0].Status = st
			p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Date(2026, 5, 1, 0, 0, ev, 0, time.UTC))
			_, err := client.CoreV1().Pods(testNS).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			must(t, err)
		}
		settle(fmt.Sprintf("event %d: %s %s", ev, p.Name, what))
	}
	memo := testutil.ToFloat64(c.opts.Metrics.plans.WithLabelValues("memo"))
	full := testutil.ToFloat64(c.opts.Metrics.plans.WithLabelValues("full"))
	if memo < 30 {
		t.Fatalf("%v syncs planned from the memo, %v in full: the memo's path was hardly taken", memo, full)
	}
	t.Logf("%v syncs planned from the memo, %v in full", memo, full)
}

func memoPod(i int, ready bool) *corev1.Pod {
	return utiltest.NewPod(testNS, fmt.Sprintf("web-%02d", i)).Label("app", "web").Node("node-1").
		IP(fmt.Sprintf("10.0.0.%d", i+1)).Ready(ready).Build()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// versionSlices gives every slice written a new resourceVersion, as the
// API server does (the fake clientset keeps whatever it is sent).
func versionSlices(client *fake.Clientset) {
	rv := 100
	for _, verb := range []string{"create", "update"} {
		client.PrependReactor(verb, "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
			rv++
			a.(interface{ GetObject() runtime.Object }).GetObject().(*discovery.EndpointSlice).ResourceVersion = strconv.Itoa(rv)
			return false, nil, nil
		})
	}
}

// runUntilComputeAgrees syncs what the handlers queue until the slices on
// the API server are ones the full planner leaves alone (events reach the
// handlers asynchronously), or fails after 10 s.
func runUntilComputeAgrees(t *testing.T, ctx context.Context, c *Controller, client *fake.Clientset, what string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for c.queue.Len() > 0 {
			c.processNext(ctx)
		}
		last = computeDisagrees(t, ctx, client, c.opts.Plan)
		return last == "", nil
	})
	if err != nil {
		t.Fatalf("after %s: %s", what, last)
	}
}

// computeDisagrees plans the Service in full from the API server's objects
// and says what it would still write, or "".
func computeDisagrees(t *testing.T, ctx context.Context, client *fake.Clientset, o reconcile.Options) string {
	t.Helper()
	svc, err := client.CoreV1().Services(testNS).Get(ctx, "web", metav1.GetOptions{})
	must(t, err)
	in := reconcile.Input{Service: svc, Nodes: reconcile.Nodes{ByName: map[string]*corev1.Node{}}}
	pods, err := client.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	must(t, err)
	for i := range pods.Items {
		in.Pods = append(in.Pods, &pods.Items[i])
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range nodes.Items {
		in.Nodes.ByName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	slices, err := client.DiscoveryV1().EndpointSlices(testNS).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range slices.Items {
		in.Slices = append(in.Slices, &slices.Items[i])
	}
	plan, err := reconcile.Compute(in, o)
	must(t, err)
	if !plan.InSync() {
		return fmt.Sprintf("Compute still plans %d creates, %d updates, %d deletes", len(plan.Create), len(plan.Update), len(plan.Delete))
	}
	return ""
}

// Noted Pods are handed out once; past maxNoted the Service is planned in
// full rather than from an ever larger set.
func TestNotes(t *testing.T) {
	n := newNotes()
	n.add("ns/a", "p1")
	n.add("ns/a", "p1")
	n.add("ns/a", "p2")
	if pods, all := n.take("ns/a"); all || len(pods) != 2 {
		t.Fatalf("take = %v, %v; want 2 Pods", pods, all)
	}
	if pods, all := n.take("ns/a"); all || len(pods) != 0 {
		t.Fatalf("second take = %v, %v; want none", pods, all)
	}
	for i := range maxNoted + 1 {
		n.add("ns/b", fmt.Sprint(i))
	}
	n.add("ns/b", "one more")
	if pods, all := n.take("ns/b"); !all || pods != nil {
		t.Fatalf("after %d Pods: take = %d Pods, all %v; want all", maxNoted+2, len(pods), all)
	}
}

// While the cache has not shown our last write, a sync with a memo waits
// (errStale) and keeps both the memo and the noted Pods, instead of
// planning the whole Service for the guard to refuse.
func TestMemoWaitsForTheCache(t *testing.T) {
	objs := []runtime.Object{utiltest.NewNode("node-1").Zone("zone-a").Build(), service("web", map[string]string{"app": "web"})}
	for i := range 4 {
		objs = append(objs, memoPod(i, true))
	}
	c, client, _ := startedWith(t, everything, func(o *Options) { o.Metrics = NewMetrics() }, objs...)
	versionSlices(client)
	ctx := context.Background()
	key := testNS + "/web"
	c.queue.Add(key)
	runUntilComputeAgrees(t, ctx, c, client, "first sync")
	if c.memos.get(key) == nil {
		t.Fatal("no memo after the first sync")
	}
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return len(c.cache.SlicesOf(testNS, "web")) == 1, nil
	}); err != nil {
		t.Fatal("the cache never showed our slice")
	}
	cached := c.cache.SlicesOf(testNS, "web")[0]
	ahead := cached.DeepCopy()
	ahead.Generation++
	c.slices.Written(ahead) // as if we had written a newer version the cache lacks
	c.notes.add(key, "web-01")
	if err := c.sync(ctx, key); !errors.Is(err, errStale) {
		t.Fatalf("sync = %v, want errStale", err)
	}
	if c.memos.get(key) == nil {
		t.Error("the memo was dropped while waiting for the cache")
	}
	if pods, all := c.notes.take(key); all || len(pods) != 1 || pods[0] != "web-01" {
		t.Errorf("noted Pods after the wait: %v (all %v), want web-01 kept", pods, all)
	}
	if full := testutil.ToFloat64(c.opts.Metrics.plans.WithLabelValues("full")); full != 1 {
		t.Errorf("%v full plans, want only the first sync's", full)
	}
}

// A memo plan goes through syncer.Sync's one writer: when its write meets
// a conflict, the same sync re-reads and plans in full, and the write it
// then makes stamps the flip's trigger time, which the memo's attempt
// already recorded as synced.
func TestMemoPlanRetriesAfterConflict(t *testing.T) {
	objs := []runtime.Object{utiltest.NewNode("node-1").Zone("zone-a").Build(), service("web", map[string]string{"app": "web"})}
	for i := range 4 {
		objs = append(objs, memoPod(i, true))
	}
	c, client, _ := startedWith(t, everything, func(o *Options) { o.Metrics = NewMetrics() }, objs...)
	versionSlices(client)
	ctx := context.Background()
	key := testNS + "/web"
	c.queue.Add(key)
	runUntilComputeAgrees(t, ctx, c, client, "first sync")
	if c.memos.get(key) == nil {
		t.Fatal("no memo after the first sync")
	}
	flipped := time.Date(2026, 5, 1, 0, 0, 7, 0, time.UTC)
	p, err := client.CoreV1().Pods(testNS).Get(ctx, "web-01", metav1.GetOptions{})
	must(t, err)
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(flipped)
	_, err = client.CoreV1().Pods(testNS).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must(t, err)
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		pods, _ := c.cache.PodsAndNodes(testNS, []string{"web-01"}, labels.Everything())
		return pods[0].Pod != nil && pods[0].Pod.Status.Conditions[0].Status == corev1.ConditionFalse &&
			len(c.cache.SlicesOf(testNS, "web")) == 1, nil
	}); err != nil {
		t.Fatal("the cache never showed the flip and our slice")
	}
	conflicts := 0
	client.PrependReactor("update", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts++; conflicts == 1 {
			return true, nil, apierrors.NewConflict(discovery.Resource("endpointslices"), "web", errors.New("changed meanwhile"))
		}
		return false, nil, nil
	})
	for c.queue.Len() > 0 { // the flip's own event, not yet synced
		key, _ := c.queue.Get()
		c.queue.Done(key)
	}
	c.notes.take(key)
	c.notes.add(key, "web-01")
	if err := c.sync(ctx, key); err != nil {
		t.Fatalf("sync = %v, want the conflict retried", err)
	}
	if conflicts != 2 {
		t.Errorf("%d slice updates, want the refused one and its retry", conflicts)
	}
	if d := computeDisagrees(t, ctx, client, c.opts.Plan); d != "" {
		t.Error(d)
	}
	live, err := client.DiscoveryV1().EndpointSlices(testNS).List(ctx, metav1.ListOptions{})
	must(t, err)
	if got := live.Items[0].Annotations[corev1.EndpointsLastChangeTriggerTime]; got != flipped.Format(time.RFC3339Nano) {
		t.Errorf("trigger time %q, want the flip's %s", got, flipped.Format(time.RFC3339Nano))
	}
}
