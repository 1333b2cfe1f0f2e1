package cluster

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
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
