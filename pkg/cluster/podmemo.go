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
// store itself follows the API server.
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
	// those was over half of an admission's CPU).
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
		AddFunc: func(obj any) { m.change(obj, 1) },
		UpdateFunc: func(old, cur any) {
			m.change(old, -1)
			m.change(cur, 1)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m.change(obj, -1)
		},
	}
}

func newPodGroupMemo() *podGroupMemo {
	return &podGroupMemo{gen: map[string]uint64{}, members: map[string]int{}, memo: map[string]memoEntry{}, keys: map[string]map[string]struct{}{}}
}

func (m *podGroupMemo) change(obj any, delta int) {
	r, ok := obj.(*PodRecord)
	if !ok {
		return
	}
	key := r.groupKey()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.members[key] += delta
	if m.members[key] <= 0 {
		delete(m.members, key)
		delete(m.gen, key)
		delete(m.memo, key)
		if ks := m.keys[r.Namespace]; ks != nil {
			delete(ks, key)
			if len(ks) == 0 {
				delete(m.keys, r.Namespace)
			}
		}
		return
	}
	if m.keys[r.Namespace] == nil {
		m.keys[r.Namespace] = map[string]struct{}{}
	}
	m.keys[r.Namespace][key] = struct{}{}
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
