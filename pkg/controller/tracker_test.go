package controller

import (
	"testing"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

func trackedSlice(uid string, gen int64) *discovery.EndpointSlice {
	return testutil.NewSlice("shop", "web-"+uid).Service("web").UID(uid).Generation(gen).Build()
}

// The stale-cache guard, rule by rule (upstream's EndpointSliceTracker).
func TestSliceTracker(t *testing.T) {
	tr := newSliceTracker()
	a := trackedSlice("a", 2)
	if !tr.ShouldSync(a) || tr.Stale("shop/web", nil) {
		t.Fatal("an untracked slice must sync and nothing is stale")
	}
	tr.Written(a)
	if tr.ShouldSync(trackedSlice("a", 2)) {
		t.Error("the echo of our own write must not sync")
	}
	if !tr.ShouldSync(trackedSlice("a", 3)) {
		t.Error("a newer generation (a hand edit) must sync")
	}
	if !tr.Stale("shop/web", nil) {
		t.Error("a cache without the slice we created is stale")
	}
	if !tr.Stale("shop/web", []*discovery.EndpointSlice{trackedSlice("a", 1)}) {
		t.Error("a cache with an older generation than we wrote is stale")
	}
	if tr.Stale("shop/web", []*discovery.EndpointSlice{trackedSlice("a", 2)}) {
		t.Error("a cache that has our write is not stale")
	}
	tr.Deleted(a)
	if !tr.Stale("shop/web", []*discovery.EndpointSlice{trackedSlice("a", 2)}) {
		t.Error("a cache still holding a slice we deleted is stale")
	}
	if tr.Stale("shop/web", nil) {
		t.Error("a cache without the slice we deleted is not stale")
	}
	if !tr.HandleDeletion(a) {
		t.Error("our own deletion is expected")
	}
	b := trackedSlice("b", 1)
	tr.Written(b)
	if tr.HandleDeletion(b) {
		t.Error("a deletion we did not make is unexpected (a hand delete)")
	}
	if tr.Stale("shop/web", nil) {
		t.Error("after a hand delete the cache is not stale: the slice must be put back")
	}
}

// A slice edited by another writer since our last write is told from the
// echo of our own: the loop's write line then says it was restored.
func TestSliceTrackerEditedElsewhere(t *testing.T) {
	tr := newSliceTracker()
	ours, other := trackedSlice("a", 1), trackedSlice("b", 1)
	tr.Written(ours)
	tr.Written(other)
	if tr.EditedElsewhere(ours) || tr.EditedElsewhere(other) {
		t.Fatal("our own writes coming back are no edit")
	}
	if !tr.EditedElsewhere(trackedSlice("a", 2)) {
		t.Error("a newer generation than our write is another writer's edit")
	}
	if tr.EditedElsewhere(trackedSlice("b", 1)) {
		t.Error("the slice we wrote, unchanged, is no edit")
	}
}
