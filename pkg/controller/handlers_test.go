package controller

import (
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

// queued drains the queue's keys.
func queued(c *Controller) map[string]bool {
	out := map[string]bool{}
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		out[key] = true
		c.queue.Done(key)
	}
	return out
}

// A Node's change (its zone) syncs the Services of the Pods on that Node,
// found through the cached records' node index, and no other.
func TestNodeChangeQueuesItsPodsServices(t *testing.T) {
	c, _ := testController(t)
	if err := c.cache.Pods.AddIndexers(cache.Indexers{podNodeIndex: podNode}); err != nil {
		t.Fatal(err)
	}
	_ = c.cache.Services.Add(testutil.NewService("shop", "db").Selector("app", "db").Build())
	_ = c.cache.Pods.Add(cached(testutil.NewPod("shop", "web-1").Label("app", "web").Node("n1").IP("10.0.0.1").Build()))
	_ = c.cache.Pods.Add(cached(testutil.NewPod("shop", "db-1").Label("app", "db").Node("n2").IP("10.0.0.2").Build()))
	old, cur := testutil.NewNode("n1").Zone("a").Build(), testutil.NewNode("n1").Zone("b").Build()
	c.onNodeUpdate(old, cur)
	if got := queued(c); len(got) != 1 || !got["shop/web"] {
		t.Fatalf("queued %v, want shop/web only", got)
	}
	c.onNodeUpdate(cur, cur.DeepCopy())
	if got := queued(c); len(got) != 0 {
		t.Fatalf("an unchanged Node queued %v", got)
	}
}

// A Pod update the planner cannot see (the resourceVersion alone) queues
// nothing; a readiness change queues the Service and notes the Pod for
// the memo's plan.
func TestPodUpdateQueuesWhatThePlannerSees(t *testing.T) {
	c, _ := testController(t)
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").IP("10.0.0.1").Ready(true).Build()
	pod.ResourceVersion = "1"
	before := cached(pod)
	pod.ResourceVersion = "2"
	c.onPodUpdate(before, cached(pod))
	if got := queued(c); len(got) != 0 {
		t.Fatalf("a resourceVersion change queued %v", got)
	}
	pod.ResourceVersion = "3"
	pod.Status.Conditions[0].Status = "False"
	c.onPodUpdate(before, cached(pod))
	if got := queued(c); len(got) != 1 || !got["shop/web"] {
		t.Fatalf("a readiness change queued %v, want shop/web", got)
	}
	if got, all := c.notes.take("shop/web"); all || len(got) != 1 || got[0] != "web-1" {
		t.Fatalf("noted %v (all: %v), want web-1", got, all)
	}
}
