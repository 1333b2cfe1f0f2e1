package syncer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Interrupted mid-write, a Service's outcome is an error (never "synced")
// and holds every write the server made.
func TestSyncInterruptedIsNotSynced(t *testing.T) {
	objs := []runtime.Object{testService(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}
	for i := range 200 {
		objs = append(objs, testPod(fmt.Sprintf("web-%d", i), fmt.Sprintf("10.1.%d.%d", i/200, i%200+1), t0))
	}
	client := fake.NewClientset(objs...)
	ctx, cancel := context.WithCancel(context.Background())
	var made atomic.Int64
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n := made.Add(1)
		a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice).Name = fmt.Sprintf("web-%d", n)
		if n == 20 {
			cancel()
		}
		time.Sleep(time.Millisecond)
		return false, nil, nil
	})
	opts := Options{Plan: reconcile.DefaultOptions(), Write: &apply.Options{ManagedBy: reconcile.DefaultManagedBy, DryRun: apply.DryRunNone, Workers: 4, Grace: time.Second}}
	opts.Plan.MaxEndpointsPerSlice = 2
	out := Sync(ctx, cluster.Reader{Client: client}, client.DiscoveryV1(), testService(), opts)
	if !errors.Is(out.Err, context.Canceled) {
		t.Fatalf("err %v, want the interrupt; %d created of %d planned", out.Err, len(out.Result.Created), len(out.Plan.Create))
	}
	if int64(len(out.Result.Created)) != made.Load() || made.Load() >= 100 {
		t.Fatalf("%d creates reported, %d made, 100 planned", len(out.Result.Created), made.Load())
	}
}
