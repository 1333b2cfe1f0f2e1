package daemon

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	verifyprobe "github.com/kubectl-slices/kubectl-slices/pkg/verify/probe"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/watch"
)

// /healthz fails when rounds stop: none started for the interval and a
// sync period after the last, or one in flight past its worst case, which
// grows with the nodes (a large cluster's long round is not a stall).
func TestVerifierLiveness(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range 100 {
		_ = nodes.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n" + string(rune('a'+i%26)) + string(rune('a'+i/26))}})
	}
	run := verifyprobe.Run{SyncPeriod: 30 * time.Second}
	run.Concurrency, run.NodeTimeout = 8, 10*time.Second
	v := &verifier{cfg: VerifyConfig{Run: run, Interval: 5 * time.Minute, Now: func() time.Time { return now }},
		cache: &cluster.Cache{Nodes: nodes}}
	if err := v.live(nil); err != nil {
		t.Fatalf("before the first round: %v", err)
	}
	v.lastRound = now.Add(-6 * time.Minute)
	if err := v.live(nil); err != nil {
		t.Fatalf("6 min after the last round (interval 5 min, sync period 30 s): %v", err)
	}
	v.lastRound = now.Add(-7 * time.Minute)
	if err := v.live(nil); err == nil {
		t.Fatal("7 min after the last round and none started: live")
	}
	// 100 nodes, 8 at a time, 10 s each: 13 batches; a round of 3 minutes
	// is within its bound (14 x 10 s + 2 min), one of 5 minutes is stuck.
	v.started = now.Add(-3 * time.Minute)
	if err := v.live(nil); err != nil {
		t.Fatalf("a round 3 min in over 100 nodes: %v", err)
	}
	v.started = now.Add(-5 * time.Minute)
	if err := v.live(nil); err == nil {
		t.Fatal("a round 5 min in over 100 nodes: live")
	}
}

// A change of a selected Service while a round reads is noted for it;
// another Service's is not, nor one before the caches are synced.
func TestVerifierNotesChangesDuringARound(t *testing.T) {
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	web := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "other"}}
	_ = svcs.Add(web)
	_ = svcs.Add(other)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	v := &verifier{cfg: VerifyConfig{Selection: syncer.Selection{Namespace: "shop", Names: []string{"web"}}, Now: func() time.Time { return now }},
		cache: &cluster.Cache{Services: svcs}, wake: make(chan struct{}, 1)}
	v.schedule = watch.Schedule{Interval: 5 * time.Minute, Settle: 30 * time.Second}
	v.schedule.Started(now)
	v.changed(web)
	if got := v.schedule.Next(); !got.Equal(now.Add(5 * time.Minute)) {
		t.Fatalf("a change before the caches synced was scheduled: next %v", got.Sub(now))
	}
	v.synced, v.started, v.during = true, now, map[string]bool{}
	v.changed(other)
	if got := v.schedule.Next(); !got.Equal(now.Add(5 * time.Minute)) {
		t.Fatalf("another Service's change was scheduled: next %v", got.Sub(now))
	}
	v.changed(web)
	if len(v.during) != 1 || !v.during["shop/web"] {
		t.Fatalf("noted during the round: %v", v.during)
	}
	if got := v.schedule.Next(); !got.Equal(now.Add(30 * time.Second)) {
		t.Fatalf("the selected Service's change: next %v, want a sync period", got.Sub(now))
	}
}
