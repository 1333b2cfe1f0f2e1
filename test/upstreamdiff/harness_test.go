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
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var (
	cases = flag.Int("diff-cases", 60, "random cases per differential test")
	seed  = flag.Int64("diff-seed", 1, "seed of the first random case")
)

// fakeCluster is a fake clientset that names objects created with
// generateName, as the API server does, plus its informer factory.
func fakeCluster(objs ...runtime.Object) (*fake.Clientset, informers.SharedInformerFactory) {
	client := fake.NewClientset(objs...)
	var n atomic.Int64
	client.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject()
		m, err := meta.Accessor(obj)
		if err == nil && m.GetName() == "" && m.GetGenerateName() != "" {
			m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), n.Add(1)))
		}
		return false, nil, nil
	})
	return client, informers.NewSharedInformerFactory(client, 0)
}

// converge polls the upstream controller's output until it equals ours or
// a deadline passes (the controller works asynchronously), then returns
// the last output. It first waits a little so that a controller that
// writes nothing has had time to write something wrong.
func converge(ours string, upstream func() string) string {
	wait := 50 * time.Millisecond
	if ours == "" {
		wait = 500 * time.Millisecond
	}
	time.Sleep(wait)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := upstream()
		if got == ours || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func withTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
