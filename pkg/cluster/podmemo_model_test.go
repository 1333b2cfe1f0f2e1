package cluster

import (
	"fmt"
	"math/rand"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// A model of the informer: the store changes first, the handler hears of
// it later, in order; reads come at any time. Once every notification is
// delivered, the memo answers as the store does, for each namespace ("a"
// and "ab": one's key a prefix of the other's).
func TestPodGroupMemoModel(t *testing.T) {
	namespaces := []string{"a", "ab"}
	for seed := int64(0); seed < 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
		c := &Cache{Pods: store}
		h := c.TrackPodGroups()
		var pending []func()
		mk := func(ns, name string) *PodRecord {
			return record(groupPod(ns, name, map[string]string{"app": []string{"web", "db"}[r.Intn(2)]}, int32(80+r.Intn(2))))
		}
		for step := 0; step < 200; step++ {
			ns, name := namespaces[r.Intn(len(namespaces))], fmt.Sprintf("p%d", r.Intn(4))
			old, exists, _ := store.GetByKey(ns + "/" + name)
			switch op := r.Intn(6); {
			case op == 0 && exists:
				_ = store.Delete(old)
				o := old
				pending = append(pending, func() { h.OnDelete(o) })
			case op <= 2:
				p := mk(ns, name)
				if exists {
					_ = store.Update(p)
					o := old
					pending = append(pending, func() { h.OnUpdate(o, p) })
				} else {
					_ = store.Add(p)
					pending = append(pending, func() { h.OnAdd(p, false) })
				}
			case op == 3 && len(pending) > 0:
				n := 1 + r.Intn(len(pending))
				for _, f := range pending[:n] {
					f()
				}
				pending = pending[n:]
			default:
				_, _ = c.PodGroups(ns, nil)
				_, _ = c.PodGroups(ns, map[string]string{"app": "web"})
			}
			if len(pending) == 0 || r.Intn(4) == 0 {
				for _, f := range pending {
					f()
				}
				pending = nil
				for _, ns := range namespaces {
					for _, sel := range []map[string]string{nil, {"app": "web"}} {
						got, err := c.PodGroups(ns, sel)
						if err != nil {
							t.Fatal(err)
						}
						want := groupsString(t, store, ns, sel)
						if s := groupsString(t, memoStore(got), ns, nil); s != want {
							t.Fatalf("seed %d step %d %s sel %v: memo %q, store %q", seed, step, ns, sel, s, want)
						}
					}
				}
			}
		}
	}
}
