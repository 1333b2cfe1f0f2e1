package controller

import (
	"sync"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// deletionExpected marks a slice we deleted and whose deletion the cache has
// not shown yet.
const deletionExpected = -1

// sliceTracker remembers, per Service, the generation of every slice we
// wrote (the API server bumps it on any change outside metadata, and on
// labels), as upstream's EndpointSliceTracker does:
//
//  1. after a create or update, the generation the API server returned;
//  2. after a delete, deletionExpected;
//  3. an informer event for a slice whose generation we already know is our
//     own write coming back, not a reason to sync;
//  4. a cache that holds an older generation than we wrote, or still holds a
//     slice we deleted, or lacks one we created, is stale: planning from it
//     would undo our own writes or create duplicates, so the sync waits.
type sliceTracker struct {
	mu   sync.Mutex
	gens map[string]map[types.UID]int64 // service key → slice UID → generation
}

func newSliceTracker() *sliceTracker {
	return &sliceTracker{gens: map[string]map[types.UID]int64{}}
}

func sliceKey(s *discovery.EndpointSlice) string {
	return s.Namespace + "/" + s.Labels[discovery.LabelServiceName]
}

func (t *sliceTracker) set(s *discovery.EndpointSlice, gen int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := sliceKey(s)
	if t.gens[key] == nil {
		t.gens[key] = map[types.UID]int64{}
	}
	t.gens[key][s.UID] = gen
}

// Written records a slice as the API server returned it from our write.
func (t *sliceTracker) Written(s *discovery.EndpointSlice) { t.set(s, s.Generation) }

// Deleted records a slice we deleted.
func (t *sliceTracker) Deleted(s *discovery.EndpointSlice) { t.set(s, deletionExpected) }

// ShouldSync: a slice event is worth a sync unless it shows a generation we
// wrote ourselves (or an older one).
func (t *sliceTracker) ShouldSync(s *discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gen, ok := t.gens[sliceKey(s)][s.UID]
	return !ok || s.Generation > gen
}

// EditedElsewhere reports whether a live slice we wrote has since been
// changed by another writer: its generation is past the one we wrote.
func (t *sliceTracker) EditedElsewhere(s *discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	gen, ok := t.gens[sliceKey(s)][s.UID]
	return ok && gen != deletionExpected && s.Generation > gen
}

// HandleDeletion forgets a deleted slice and reports whether we expected
// the deletion; an unexpected one (by hand) needs a sync to put it back.
func (t *sliceTracker) HandleDeletion(s *discovery.EndpointSlice) (expected bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	byUID := t.gens[sliceKey(s)]
	gen, ok := byUID[s.UID]
	delete(byUID, s.UID)
	return ok && gen == deletionExpected
}

// Stale reports whether the cached slices of ours for a Service lag behind
// our own writes.
func (t *sliceTracker) Stale(service string, cached []*discovery.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	byUID := t.gens[service]
	seen := make(map[types.UID]bool, len(cached))
	for _, s := range cached {
		seen[s.UID] = true
		gen, ok := byUID[s.UID]
		if ok && (gen == deletionExpected || gen > s.Generation) {
			return true
		}
	}
	for uid, gen := range byUID {
		if gen != deletionExpected && !seen[uid] {
			return true
		}
	}
	return false
}

// Forget drops a deleted Service.
func (t *sliceTracker) Forget(service string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.gens, service)
}
