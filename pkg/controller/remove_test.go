package controller

import (
	"context"
	"errors"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

// A Service deleted while the cache has not yet shown a slice we created
// for it: deleting what the cache holds and forgetting the Service would
// leave the new slice behind. The sync waits (errStale) and writes nothing;
// once the cache shows the slice, every slice of ours goes.
func TestRemoveWaitsForTheCacheToShowOurCreate(t *testing.T) {
	c, _ := testController(t)
	c.opts.Write.ManagedBy = "ours"
	c.cache.Slices = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"service": func(o any) ([]string, error) {
		s := o.(*discovery.EndpointSlice)
		return []string{s.Namespace + "/" + s.Labels[discovery.LabelServiceName]}, nil
	}})
	client := c.client.(*fake.Clientset)
	old := testutil.NewSlice("shop", "gone-old").Service("gone").ManagedBy("ours").UID("old").Generation(1).ResourceVersion("1").Build()
	created := testutil.NewSlice("shop", "gone-new").Service("gone").ManagedBy("ours").UID("new").Generation(1).ResourceVersion("2").Build()
	theirs := testutil.NewSlice("shop", "gone-kcm").Service("gone").ManagedBy("someone").UID("kcm").ResourceVersion("3").Build()
	for _, s := range []*discovery.EndpointSlice{old, created, theirs} {
		if err := client.Tracker().Add(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.cache.Slices.Add(old); err != nil {
		t.Fatal(err)
	}
	if err := c.cache.Slices.Add(theirs); err != nil {
		t.Fatal(err)
	}
	c.slices.Written(created)

	live := func() []string {
		list, err := client.DiscoveryV1().EndpointSlices("shop").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		sort.Strings(names)
		return names
	}
	if err := c.sync(context.Background(), "shop/gone"); !errors.Is(err, errStale) {
		t.Fatalf("cache lacks our create: err %v, want errStale", err)
	}
	if diff := cmp.Diff([]string{"gone-kcm", "gone-new", "gone-old"}, live()); diff != "" {
		t.Fatalf("written while the cache lagged (-want +got):\n%s", diff)
	}
	if err := c.cache.Slices.Add(created); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(context.Background(), "shop/gone"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gone-kcm"}, live()); diff != "" {
		t.Errorf("after the cache caught up (-want +got):\n%s", diff)
	}
}
