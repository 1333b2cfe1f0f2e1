package controller

import (
	"bytes"
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// testController has empty stores in place of the informers' and one
// Service selecting app=web.
func testController(t *testing.T) (*Controller, *corev1.Service) {
	t.Helper()
	client := fake.NewClientset()
	client.PrependReactor("create", "selfsubjectaccessreviews", allowAll)
	c := newController(t, client, Options{Plan: reconcile.Options{ManagedBy: "ours", MaxEndpointsPerSlice: 100},
		Report: NewReporter(&bytes.Buffer{}, &bytes.Buffer{}, false)})
	ns := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	c.cache.Services, c.cache.Pods = cache.NewIndexer(cache.MetaNamespaceKeyFunc, ns), cache.NewIndexer(cache.MetaNamespaceKeyFunc, ns)
	c.cache.Slices = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"service": func(any) ([]string, error) { return nil, nil }})
	c.cache.NodesUnreadable = true
	svc := testutil.NewService("shop", "web").Selector("app", "web").Build()
	if err := c.cache.Services.Add(svc); err != nil {
		t.Fatal(err)
	}
	return c, svc
}

// A cache that has not yet shown a slice we created must not be planned
// from: the plan would create a duplicate.
func TestGuardRefusesCacheBehindOurWrites(t *testing.T) {
	c, svc := testController(t)
	g := guarded{Cache: c.cache, slices: c.slices, key: "shop/web", managedBy: "ours"}
	if _, err := g.Load(context.Background(), svc); err != nil {
		t.Fatalf("nothing written yet: %v", err)
	}
	c.slices.Written(trackedSlice("a", 1))
	if _, err := g.Load(context.Background(), svc); !errors.Is(err, errStale) {
		t.Fatalf("the cache lacks the slice we created, got %v, want errStale", err)
	}
}

// A Pod relabelled away from a Service's selector must sync that Service
// (the Pod leaves its slices), not only the Services of its new labels.
func TestPodRelabelQueuesOldService(t *testing.T) {
	c, _ := testController(t)
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").Build()
	pod.ResourceVersion = "1"
	old := cached(pod)
	pod.ResourceVersion, pod.Labels = "2", map[string]string{"app": "other"}
	relabelled := cached(pod)
	c.onPodUpdate(old, relabelled)
	if c.queue.Len() != 1 {
		t.Fatalf("queued %d Services, want svc/web", c.queue.Len())
	}
	if key, _ := c.queue.Get(); key != "shop/web" {
		t.Fatalf("queued %q, want shop/web", key)
	}
	if old.Labels["app"] != "web" || relabelled.ResourceVersion != "2" {
		t.Fatal("the handler modified the informer's objects")
	}
}

// A slice of ours relabelled by hand (another managed-by value, or another
// Service) has left our keeping: the guard must not wait for it for ever.
func TestRelabelledSliceDoesNotStallTheGuard(t *testing.T) {
	for _, relabel := range []func(*discovery.EndpointSlice){
		func(s *discovery.EndpointSlice) { s.Labels[discovery.LabelManagedBy] = "someone-else" },
		func(s *discovery.EndpointSlice) { s.Labels[discovery.LabelServiceName] = "other" },
	} {
		c, svc := testController(t)
		a := trackedSlice("a", 1)
		a.Labels[discovery.LabelManagedBy] = "ours"
		c.slices.Written(a)
		b := a.DeepCopy()
		relabel(b)
		b.Generation = 2
		c.onSliceUpdate(a, b)
		g := guarded{Cache: c.cache, slices: c.slices, key: "shop/web", managedBy: "ours"}
		if _, err := g.Load(context.Background(), svc); err != nil {
			t.Errorf("relabelled to %v: %v", b.Labels, err)
		}
	}
}

// cached is what the cache stores of p (cluster.Transform of a copy).
func cached(p *corev1.Pod) *cluster.PodRecord {
	r, _ := cluster.Transform(p.DeepCopy())
	return r.(*cluster.PodRecord)
}
