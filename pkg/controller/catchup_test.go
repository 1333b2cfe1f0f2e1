package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// stubInformer is a SharedIndexInformer whose store a test fills.
type stubInformer struct {
	cache.SharedIndexInformer
	store cache.Store
}

func (s stubInformer) GetStore() cache.Store { return s.store }

func (s stubInformer) AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return nil, nil
}

// After a reconnection writes wait until every informer that held objects
// has delivered an event, at most catchUpMax; then the Services that failed
// meanwhile are handed back, once.
func TestCatchUpHoldsWritesUntilTheCachesHear(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	pods := cache.NewStore(cache.MetaNamespaceKeyFunc)
	_ = pods.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	infs := map[string]cache.SharedIndexInformer{
		"pods":     stubInformer{store: pods},
		"services": stubInformer{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}, // empty
	}
	u, err := newCatchUp(infs, clock)
	if err != nil {
		t.Fatal(err)
	}
	if wait, retry := u.pending(); wait || retry != nil {
		t.Fatalf("before any outage: wait %v, retry %v", wait, retry)
	}
	u.synced("ns/b", false)
	u.synced("ns/a", false)
	u.synced("ns/c", false)
	u.synced("ns/c", true)
	u.handler("pods").OnAdd(nil, false) // before the reconnection: does not count
	now = now.Add(time.Second)
	u.reconnected()
	now = now.Add(time.Second)
	if wait, _ := u.pending(); !wait {
		t.Fatal("writes go out before the Pods' cache heard anything")
	}
	u.handler("pods").OnUpdate(nil, nil)
	if wait, _ := u.pending(); !wait {
		t.Fatal("writes go out in the middle of the Pods' burst of events")
	}
	now = now.Add(catchUpQuiet - time.Millisecond)
	u.handler("pods").OnUpdate(nil, nil) // the burst goes on
	now = now.Add(catchUpQuiet - time.Millisecond)
	if wait, _ := u.pending(); !wait {
		t.Fatal("writes go out before the burst of events settled")
	}
	now = now.Add(time.Millisecond)
	wait, retry := u.pending()
	if wait || strings.Join(retry, ",") != "ns/a,ns/b" {
		t.Fatalf("after the Pods' cache heard: wait %v, retry %v; want no wait, ns/a,ns/b", wait, retry)
	}
	if wait, retry := u.pending(); wait || retry != nil {
		t.Fatalf("caught up twice: wait %v, retry %v", wait, retry)
	}

	// A cache that stays silent holds writes for catchUpMax only.
	u.reconnected()
	now = now.Add(catchUpMax - time.Millisecond)
	if wait, _ := u.pending(); !wait {
		t.Fatal("released before catchUpMax")
	}
	now = now.Add(time.Millisecond)
	if wait, _ := u.pending(); wait {
		t.Fatal("held past catchUpMax")
	}
}
