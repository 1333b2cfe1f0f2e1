package upstreamdiff

import (
	"context"
	"flag"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var (
	cases = flag.Int("diff-cases", 40, "random cases per differential test")
	seed  = flag.Int64("diff-seed", 1, "seed of the first random case")
)

// namedCreates counts creates that carry both a name and generateName:
// upstream's recycleSlices sends those when it hits its bug (below).
var namedCreates atomic.Int64

// nameSeq numbers generated names across every fake cluster.
var nameSeq atomic.Int64

// fakeCluster is a fake clientset that names objects created with
// generateName, as the API server does, plus its informer factory.
func fakeCluster(objs ...runtime.Object) (*fake.Clientset, informers.SharedInformerFactory) {
	client := fake.NewClientset(objs...)
	client.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		create := a.(k8stesting.CreateAction)
		m, err := meta.Accessor(create.GetObject())
		if err == nil && m.GetName() != "" && m.GetGenerateName() != "" {
			namedCreates.Add(1)
		}
		if err != nil {
			return false, nil, nil
		}
		// Name a copy: the caller's object stays as it sent it.
		obj := create.GetObject().DeepCopyObject()
		m, _ = meta.Accessor(obj)
		if m.GetName() == "" && m.GetGenerateName() != "" {
			m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), nameSeq.Add(1)))
		}
		// The API server gives every object a UID, and the controllers'
		// slice trackers key by it: without one, every slice shares the
		// empty UID and a deletion expected for one blocks them all.
		if m.GetUID() == "" {
			m.SetUID(types.UID(fmt.Sprintf("uid-created-%d", nameSeq.Add(1))))
		}
		m.SetGeneration(1)
		if err := client.Tracker().Create(create.GetResource(), obj, create.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	})
	// Bump generations as the API server does: the controllers' stale-cache
	// guards compare them.
	client.PrependReactor("update", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		update := a.(k8stesting.UpdateAction)
		obj := update.GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, nil, nil
		}
		old, err := client.Tracker().Get(update.GetResource(), update.GetNamespace(), m.GetName())
		if err != nil {
			return true, nil, err
		}
		if om, err := meta.Accessor(old); err == nil {
			m.SetGeneration(om.GetGeneration() + 1)
		}
		if err := client.Tracker().Update(update.GetResource(), obj, update.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	})
	return client, informers.NewSharedInformerFactory(client, 0)
}

// converge polls the upstream controller's output until it equals ours, a
// deadline passes (the controller works asynchronously and retries with a
// 1 s, 2 s, 4 s backoff when its informer lags its own writes) or giveUp
// says the controller cannot get there, then returns the last output. It
// first waits a little so that a controller that writes nothing has had
// time to write something wrong.
func converge(ours string, upstream func() string, giveUp func() bool) string {
	wait := 50 * time.Millisecond
	if ours == "" {
		wait = 500 * time.Millisecond
	}
	time.Sleep(wait)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := upstream()
		if got == ours || time.Now().After(deadline) || giveUp() {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// never is a giveUp for converge that waits until the deadline.
func never() bool { return false }

func withTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
