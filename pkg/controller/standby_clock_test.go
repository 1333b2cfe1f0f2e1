package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	utiltest "github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
)

var node1 = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}

// theirs is the EndpointSlice controller's slice for svc publishing pods,
// planned as it plans, at generation gen.
func theirs(t *testing.T, svc *corev1.Service, gen int64, pods ...*corev1.Pod) *discovery.EndpointSlice {
	t.Helper()
	nodes := reconcile.Nodes{ByName: map[string]*corev1.Node{"node-1": node1}}
	plan, err := reconcile.Compute(reconcile.Input{Service: svc, Pods: pods, Nodes: nodes},
		reconcile.Options{ManagedBy: reconcile.ControllerManagedBy, MaxEndpointsPerSlice: reconcile.DefaultMaxEndpointsPerSlice})
	if err != nil || len(plan.Final()) != 1 {
		t.Fatalf("planning the controller's slice: %v", err)
	}
	s := plan.Final()[0].DeepCopy()
	s.Name, s.GenerateName, s.UID, s.Generation = "theirs-"+svc.Name, "", types.UID("theirs-"+svc.Name), gen
	return s
}

// waitCached waits until the cache holds what ok looks for.
func waitCached(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return ok(), nil }); err != nil {
		t.Fatalf("the cache did not show %s", what)
	}
}

// A Pod ready for an hour relabelled into two Services, beside a healthy
// controller: the difference is dated from when the loop observed the
// relabel, not from the Pod's Ready transition (which would take both over
// at once); the controller catching up on one restarts the other's clock,
// as its queue works through the changes in order; a Service it does not
// catch up on is taken over a threshold after that progress.
func TestStandbyDatesFromTheObservedChange(t *testing.T) {
	hourAgo := time.Now().Add(-time.Hour)
	var svcs []*corev1.Service
	for _, name := range []string{"web", "web2"} {
		svcs = append(svcs, utiltest.NewService(testNS, name).Port("http", 80, "80").Selector("app", "web").Created(hourAgo).Build())
	}
	a := utiltest.NewPod(testNS, "a").Label("app", "web").Node("node-1").IP("10.0.0.1").ReadyAt(hourAgo).Build()
	b := utiltest.NewPod(testNS, "b").Label("app", "other").Node("node-1").IP("10.0.0.2").ReadyAt(hourAgo).Build()
	cfg := standby.Config{TakeoverAfter: 5 * time.Second, HandbackHold: 30 * time.Second, ManagedBy: "test-manager"}
	metrics := NewMetrics()
	c, client, _ := startedWith(t, everything, func(o *Options) { o.Standby, o.Metrics = &cfg, metrics },
		node1, svcs[0], svcs[1], a, b, theirs(t, svcs[0], 1, a), theirs(t, svcs[1], 1, a))
	t0 := time.Now()
	at := func(d time.Duration) { c.now = func() time.Time { return t0.Add(d) } }
	check := func(when string, key string, state standby.State) {
		t.Helper()
		syncUntil(t, c, key)
		if got := oursIn(t, client); len(got) != 0 || c.States()[key] != state {
			t.Fatalf("%s: %s wrote %v, state %s, want %s", when, key, got, c.States()[key], state)
		}
	}
	at(0)
	check("controller current", "ns/web", standby.Standby)
	check("controller current", "ns/web2", standby.Standby)

	at(10 * time.Second)
	b.Labels["app"] = "web"
	if _, err := client.CoreV1().Pods(testNS).Update(context.Background(), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCached(t, "the relabel", func() bool {
		o, ok, _ := c.cache.Pods.GetByKey(testNS + "/b")
		return ok && o.(*cluster.PodRecord).Labels["app"] == "web" && len(c.observed.at) == 2
	})
	at(10500 * time.Millisecond)
	check("just after the relabel", "ns/web", standby.Standby)
	check("just after the relabel", "ns/web2", standby.Standby)

	// The controller catches up on web at 14 s.
	at(14 * time.Second)
	if _, err := client.DiscoveryV1().EndpointSlices(testNS).Update(context.Background(), theirs(t, svcs[0], 2, a, b), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCached(t, "the controller's update", func() bool {
		for _, s := range c.cache.SlicesOf(testNS, "web") {
			if s.Generation == 2 {
				return true
			}
		}
		return false
	})
	check("controller caught up", "ns/web", standby.Standby)
	// Its lag counts from the relabel the informers delivered, not from
	// the sync that found the difference.
	if text := scrape(t, metrics); !strings.Contains(text, "kubectl_slices_controller_lag_seconds_sum 4\n") {
		t.Fatalf("lag, want 4 s:\n%s", text)
	}
	at(15 * time.Second)
	check("a threshold after the relabel, the controller at work on older changes", "ns/web2", standby.Standby)
	at(18900 * time.Millisecond)
	check("just before a threshold after that progress", "ns/web2", standby.Standby)
	at(19 * time.Second)
	syncUntil(t, c, "ns/web2")
	if got := oursIn(t, client); len(got) != 2 || c.States()["ns/web2"] != standby.Serving {
		t.Fatalf("a threshold after the controller's last progress: ours %v, state %s", got, c.States()["ns/web2"])
	}
}

// A Service with nothing to publish (ExternalName) that gains a selector is
// not new to the loop: the controller's first slices for it are a new
// change, dated from now, not from the Service's creation an hour ago.
func TestStandbyServiceThatGainsASelectorIsNotNew(t *testing.T) {
	hourAgo := time.Now().Add(-time.Hour)
	ext := utiltest.NewService(testNS, "web").Port("http", 80, "80").ExternalName("example.com").Created(hourAgo).Build()
	a := utiltest.NewPod(testNS, "a").Label("app", "web").Node("node-1").IP("10.0.0.1").ReadyAt(hourAgo).Build()
	cfg := standby.Config{TakeoverAfter: 5 * time.Second, HandbackHold: 30 * time.Second, ManagedBy: "test-manager"}
	c, client, _ := startedWith(t, everything, func(o *Options) { o.Standby = &cfg }, node1, ext, a)
	syncUntil(t, c, "ns/web")
	svc := utiltest.NewService(testNS, "web").Port("http", 80, "80").Selector("app", "web").Created(hourAgo).Build()
	svc.ResourceVersion = "2"
	if _, err := client.CoreV1().Services(testNS).Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCached(t, "the selector", func() bool {
		s, err := c.cache.Service(context.Background(), testNS, "web")
		return err == nil && len(s.Spec.Selector) > 0
	})
	syncUntil(t, c, "ns/web")
	if got := oursIn(t, client); len(got) != 0 || c.States()["ns/web"] != standby.Standby {
		t.Fatalf("a Service that gained a selector: ours %v, state %s", got, c.States()["ns/web"])
	}
}
