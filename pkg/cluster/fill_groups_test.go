package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// A filled cache's grouped matching returns what matching every Pod of the
// namespace returns, in the same order, for random Pods and selectors.
func TestFilledGroupsMatchAsEveryPod(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	for round := range 50 {
		c := &Cache{Pods: cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())}
		for i := range 1 + rng.IntN(60) {
			var l map[string]string
			if rng.IntN(8) > 0 {
				l = map[string]string{}
				for range rng.IntN(4) {
					l[pick("app", "tier", "env")] = pick("a", "b", "c", "")
				}
			}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pick("ns1", "ns2"), Name: fmt.Sprintf("p-%d", rng.IntN(1000)) + fmt.Sprint(i), Labels: l}}
			if err := c.Pods.Add(record(p)); err != nil {
				t.Fatal(err)
			}
		}
		grouped := groupFilled(c.Pods.List())
		for range 20 {
			sel := map[string]string{}
			for range rng.IntN(3) {
				sel[pick("app", "tier", "env", "x")] = pick("a", "b", "c", "")
			}
			ns := pick("ns1", "ns2", "ns3")
			c.filled = nil
			want := names(c.PodsMatching(ns, labels.SelectorFromSet(sel)))
			c.filled = grouped
			got := names(c.PodsMatching(ns, labels.SelectorFromSet(sel)))
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %s %v: grouped %v, every Pod %v", round, ns, sel, got, want)
			}
		}
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// With FillNamespaces, a cache of every namespace lists Pods and slices in
// those namespaces, one list each, and holds nothing of the others; without
// it, one list of each kind covers every namespace.
func TestFillNamespaces(t *testing.T) {
	var objs []runtime.Object
	for _, ns := range []string{"a", "b", "c"} {
		objs = append(objs,
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", Labels: map[string]string{"app": "web"}}},
			&discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", Labels: map[string]string{discovery.LabelServiceName: "web"}}})
	}
	for _, tc := range []struct {
		only  []string
		want  []string
		lists int
	}{
		{[]string{"a", "c"}, []string{"a", "c"}, 5},
		{nil, []string{"a", "b", "c"}, 3},
	} {
		client := fake.NewClientset(objs...)
		c := NewCache(client, metav1.NamespaceAll)
		c.FillNamespaces = tc.only
		if err := c.Fill(context.Background()); err != nil {
			t.Fatal(err)
		}
		var pods, slices []string
		for _, ns := range []string{"a", "b", "c"} {
			if len(c.PodsMatching(ns, labels.SelectorFromSet(map[string]string{"app": "web"}))) == 1 {
				pods = append(pods, ns)
			}
			if len(c.SlicesOf(ns, "web")) == 1 {
				slices = append(slices, ns)
			}
		}
		lists := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "list" {
				lists++
			}
		}
		if fmt.Sprint(pods) != fmt.Sprint(tc.want) || fmt.Sprint(slices) != fmt.Sprint(tc.want) || lists != tc.lists {
			t.Errorf("FillNamespaces %v: Pods of %v, slices of %v, %d lists; want %v and %d lists (with Nodes')", tc.only, pods, slices, lists, tc.want, tc.lists)
		}
	}
}
