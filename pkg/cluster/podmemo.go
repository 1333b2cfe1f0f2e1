package cluster

import (
	"maps"
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// podGroupMemo remembers each PodGroupIndex group's first Pod by name and
// its members' names, so that an admission reads a group of 5,000 Pods in
// constant time; the informer's notifications (Cache.TrackPodGroups)
// invalidate a group when one of its Pods comes, changes or goes. They
// also say which groups a namespace has: a group is listed from the
// notification of its first Pod, a moment after the store has it, as the
// store itself follows the API server. The counts take each notification
// once and in order, as a shared informer delivers them to a handler.
//
// A notification follows the store's update, so a generation read under mu
// never claims more than the store holds: a memo computed from the store
// at generation g is at least as new as g, and any later change bumps the
// generation past it.
type podGroupMemo struct {
	mu sync.Mutex
	// gen counts the changes to a group and members its Pods, as the
	// notifications tell; a group's entries go when it empties, so a
	// label churned by rollouts (pod-template-hash) does not pile up.
	gen     map[string]uint64
	members map[string]int
	memo    map[string]memoEntry
	// keys are the groups of each namespace with a member, so that an
	// admission reads its namespace's groups, not the keys of the whole
	// cluster's index (at 150,000 Pods and 10,000 Services, listing
	// those was three quarters of an admission's handling).
	keys map[string]map[string]struct{}
}

type memoEntry struct {
	gen uint64
	g   PodGroup
}

// TrackPodGroups returns the Pod informer's handler that keeps the memo
// of PodGroups current; Informers registers it. Until it is called,
// PodGroups reads every group's Pods from the store at each call.
func (c *Cache) TrackPodGroups() cache.ResourceEventHandler {
	m := newPodGroupMemo()
	c.podGroups = m
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { m.change(1, obj) },
		// The new Pod counted before the old one is taken away, under one
		// lock: a Pod alone in its group that stays in it never leaves the
		// group empty, so an admission in between still finds it.
		UpdateFunc: func(old, cur any) { m.change(1, cur, old) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m.change(-1, obj)
		},
	}
}

func newPodGroupMemo() *podGroupMemo {
	return &podGroupMemo{gen: map[string]uint64{}, members: map[string]int{}, memo: map[string]memoEntry{}, keys: map[string]map[string]struct{}{}}
}

// change counts the first object's Pod delta in its group, and a second
// (an update's old Pod) -delta in its own, under one lock.
func (m *podGroupMemo) change(delta int, objs ...any) {
	type pod struct {
		namespace, key string
		delta          int
	}
	var pods []pod
	for _, obj := range objs {
		if r, ok := obj.(*PodRecord); ok {
			pods = append(pods, pod{r.Namespace, r.groupKey(), delta})
		}
		delta = -delta
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range pods {
		m.count(p.namespace, p.key, p.delta)
	}
}

func (m *podGroupMemo) count(namespace, key string, delta int) {
	m.members[key] += delta
	if m.members[key] <= 0 {
		delete(m.members, key)
		delete(m.gen, key)
		delete(m.memo, key)
		if ks := m.keys[namespace]; ks != nil {
			delete(ks, key)
			if len(ks) == 0 {
				delete(m.keys, namespace)
			}
		}
		return
	}
	if m.keys[namespace] == nil {
		m.keys[namespace] = map[string]struct{}{}
	}
	m.keys[namespace][key] = struct{}{}
	m.gen[key]++
}

// keysIn is the keys of namespace's groups with a member, in no order (as
// the index lists them).
func (m *podGroupMemo) keysIn(namespace string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.AppendSeq(make([]string, 0, len(m.keys[namespace])), maps.Keys(m.keys[namespace]))
}

// group returns the group of key, from the memo while no notification has
// touched it since.
func (m *podGroupMemo) group(pods cache.Indexer, key, shape string) (PodGroup, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gen := m.gen[key]
	if e, ok := m.memo[key]; ok && e.gen == gen {
		return e.g, true, nil
	}
	g, ok, err := readGroup(pods, key, shape)
	if err != nil || !ok {
		return g, ok, err
	}
	// Only groups the notifications know of are remembered, so that an
	// emptied group leaves nothing behind.
	if _, known := m.members[key]; known {
		m.memo[key] = memoEntry{gen, g}
	}
	return g, true, nil
}
