package controller

import (
	"context"
	"errors"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// The slices of a deleted Service go only if the loop's targets covered
// it: by name, or by -l matched against the Service's labels the slices
// carry. A loop kept to some Services leaves other loops' orphans alone.
func TestRemoveKeepsToTheTargets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		names    map[string]bool
		selector string
		gone     []string // Services whose slices go
	}{
		{name: "--all", gone: []string{"a", "b"}},
		{name: "-l app=a", selector: "app=a", gone: []string{"a"}},
		{name: "-l app!=a", selector: "app!=a", gone: []string{"b"}},
		{name: "-l on a reserved key", selector: discovery.LabelServiceName + "=a"},
		{name: "names", names: map[string]bool{"shop/b": true}, gone: []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := testController(t)
			c.opts.Write.ManagedBy = "ours"
			c.opts.Names = tc.names
			if tc.selector != "" {
				sel, err := labels.Parse(tc.selector)
				if err != nil {
					t.Fatal(err)
				}
				c.opts.Selector = sel
			}
			c.cache.Slices = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"service": func(o any) ([]string, error) {
				s := o.(*discovery.EndpointSlice)
				return []string{s.Namespace + "/" + s.Labels[discovery.LabelServiceName]}, nil
			}})
			client := c.client.(*fake.Clientset)
			for _, app := range []string{"a", "b"} {
				s := testutil.NewSlice("shop", app+"-1").Service(app).ManagedBy("ours").Label("app", app).UID(app).Build()
				if err := client.Tracker().Add(s); err != nil {
					t.Fatal(err)
				}
				if err := c.cache.Slices.Add(s); err != nil {
					t.Fatal(err)
				}
			}
			for _, app := range []string{"a", "b"} {
				if err := c.sync(context.Background(), "shop/"+app); err != nil {
					t.Fatal(err)
				}
			}
			list, err := client.DiscoveryV1().EndpointSlices("shop").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var gone []string
			for _, app := range []string{"a", "b"} {
				found := false
				for _, s := range list.Items {
					found = found || s.Name == app+"-1"
				}
				if !found {
					gone = append(gone, app)
				}
			}
			if diff := cmp.Diff(tc.gone, gone); diff != "" {
				t.Errorf("Services whose slices went (-want +got):\n%s", diff)
			}
		})
	}
}
