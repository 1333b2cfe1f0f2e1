package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The informers' lists are not the end of the fill: the Pod group memo,
// which says which groups a namespace has, must have heard of them too.
func TestWaitForSyncWaitsForPodGroups(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	infs := &Informers{Services: factory.Core().V1().Services().Informer(), Pods: factory.Core().V1().Pods().Informer(),
		Slices: factory.Discovery().V1().EndpointSlices().Informer(), factory: factory}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	infs.Start(ctx.Done())
	defer infs.Shutdown()
	if !infs.WaitForSync(ctx) {
		t.Fatal("informers without the memo did not sync")
	}
	infs.podGroupsSynced = func() bool { return false }
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if infs.WaitForSync(short) {
		t.Fatal("synced while the Pod group memo had not heard of the first list")
	}
	infs.podGroupsSynced = func() bool { return true }
	if !infs.WaitForSync(ctx) {
		t.Fatal("not synced once the memo had")
	}
}

// A webhook's cache, once synced, lists every group of each namespace the
// first list held: the memo's notifications are part of the fill.
func TestInformersSyncedListEveryGroup(t *testing.T) {
	const namespaces, groups, each = 4, 50, 40
	var objs []runtime.Object
	for n := range namespaces {
		for g := range groups {
			for i := range each {
				objs = append(objs, groupPod(fmt.Sprintf("ns-%d", n), fmt.Sprintf("g%d-%d", g, i), map[string]string{"app": fmt.Sprintf("g%d", g)}, 80))
			}
		}
	}
	client := fake.NewClientset(objs...)
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true
		return true, r, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewCache(client, "")
	c.GroupPods = true
	infs, err := c.Informers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// WaitForSync polls every 100 ms, by when the memo has mostly caught
	// up: that it waits for the memo at all is checked here.
	if infs.podGroupsSynced == nil {
		t.Fatal("the informers do not wait for the Pod group memo")
	}
	infs.Start(ctx.Done())
	defer infs.Shutdown()
	if !infs.WaitForSync(ctx) {
		t.Fatal("not synced")
	}
	for n := range namespaces {
		ns := fmt.Sprintf("ns-%d", n)
		gs, err := c.PodGroups(ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(gs) != groups {
			t.Fatalf("namespace %s: %d groups listed once synced, want %d", ns, len(gs), groups)
		}
	}
}
