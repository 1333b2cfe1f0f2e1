package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// TestPodGroupMemo: with the informer's notifications the groups follow
// every change to the store, and an emptied group leaves no entry behind.
func TestPodGroupMemo(t *testing.T) {
	web := map[string]string{"app": "web"}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
	c := &Cache{Pods: store}
	h := c.TrackPodGroups()
	add := func(pod *corev1.Pod) {
		p := record(pod)
		if err := store.Add(p); err != nil {
			t.Fatal(err)
		}
		h.OnAdd(p, false)
	}
	update := func(oldPod, curPod *corev1.Pod) {
		old, cur := record(oldPod), record(curPod)
		if err := store.Update(cur); err != nil {
			t.Fatal(err)
		}
		h.OnUpdate(old, cur)
	}
	del := func(pod *corev1.Pod, tombstone bool) {
		p := record(pod)
		if err := store.Delete(p); err != nil {
			t.Fatal(err)
		}
		if tombstone {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: p.Namespace + "/" + p.Name, Obj: p})
		} else {
			h.OnDelete(p)
		}
	}
	sel := map[string]string{"app": "web"}
	check := func(step, want string) {
		t.Helper()
		// Twice: the second answer comes from the memo.
		for range 2 {
			if got := groupsString(t, store, "a", sel); got != want {
				t.Fatalf("%s, without the memo: %q, want %q", step, got, want)
			}
			gs, err := c.PodGroups("a", sel)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range gs {
				for _, n := range g.Names {
					if n < g.First.Name {
						t.Fatalf("%s: first %s of %v", step, g.First.Name, g.Names)
					}
				}
			}
			got := groupsString(t, memoStore(gs), "a", nil)
			if got != want {
				t.Fatalf("%s, from the memo: %q, want %q", step, got, want)
			}
		}
	}
	w1, w0 := groupPod("a", "web-1", web, 8080), groupPod("a", "web-0", web, 8080)
	add(w1)
	check("one Pod", "web-1")
	add(w0)
	check("a second Pod of the group", "web-0 web-1")
	add(groupPod("a", "web-2", web, 9090))
	check("another shape", "web-0 web-1|web-2")
	moved := groupPod("a", "web-0", map[string]string{"app": "db"}, 8080)
	update(w0, moved)
	check("relabelled out of the selection", "web-1|web-2")
	w1b := groupPod("a", "web-1", web, 8080)
	w1b.Status.Phase = corev1.PodFailed
	update(w1, w1b)
	check("changed shape", "web-1|web-2")
	del(w1b, false)
	del(groupPod("a", "web-2", web, 9090), true)
	check("deleted", "")
	del(moved, false)
	m := c.podGroups
	if len(m.gen)+len(m.members)+len(m.memo)+len(m.keys) != 0 {
		t.Errorf("an empty store leaves entries: gen %v members %v memo %d keys %v", m.gen, m.members, len(m.memo), m.keys)
	}
}

// TestPodGroupMemoServes: until a notification, a group is answered from
// the memo without reading its Pods (the point of it).
func TestPodGroupMemoServes(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
	c := &Cache{Pods: store}
	h := c.TrackPodGroups()
	p := record(groupPod("a", "web-0", map[string]string{"app": "web"}, 80))
	_ = store.Add(p)
	h.OnAdd(p, false)
	first, _ := c.PodGroups("a", nil)
	// In the store only, as before the informer's notification.
	_ = store.Add(record(groupPod("a", "web-1", map[string]string{"app": "web"}, 80)))
	again, _ := c.PodGroups("a", nil)
	if len(first) != 1 || len(again) != 1 || len(again[0].Names) != 1 {
		t.Fatalf("before the notification: %+v then %+v", first, again)
	}
	h.OnAdd(record(groupPod("a", "web-1", map[string]string{"app": "web"}, 80)), false)
	after, _ := c.PodGroups("a", nil)
	if len(after) != 1 || len(after[0].Names) != 2 {
		t.Fatalf("after the notification: %+v", after)
	}
}

// memoStore puts the groups' names back into a store, for groupsString.
func memoStore(gs []PodGroup) cache.Indexer {
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
	for i, g := range gs {
		for _, n := range g.Names {
			// One label per group keeps them apart.
			_ = s.Add(record(groupPod(g.First.Namespace, n, map[string]string{"g": string(rune('a' + i))}, 80)))
		}
	}
	return s
}

// TestPodGroupMemoUpdateKeepsGroup: a Pod alone in its group, updated
// without leaving it (a status write), never leaves its namespace without
// that group for an admission reading at the same time.
func TestPodGroupMemoUpdateKeepsGroup(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
	c := &Cache{Pods: store}
	h := c.TrackPodGroups()
	p := record(groupPod("a", "solo", map[string]string{"app": "solo"}, 80))
	_ = store.Add(p)
	h.OnAdd(p, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200000 {
			h.OnUpdate(p, p)
		}
	}()
	for missing := 0; ; {
		select {
		case <-done:
			if missing > 0 {
				t.Fatalf("the group was missing from %d reads during its Pod's updates", missing)
			}
			return
		default:
		}
		if len(c.podGroups.keysIn("a")) != 1 {
			missing++
		}
	}
}
