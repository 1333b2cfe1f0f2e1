package syncer

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testService() *corev1.Service {
	return testutil.NewService("shop", "web").UID("svc-uid").Created(t0).ClusterIP("10.0.0.1").Selector("app", "web").Port("http", 80, "8080").Build()
}

func testPod(name, ip string, readyAt time.Time) *corev1.Pod {
	return testutil.NewPod("shop", name).Label("app", "web").Node("n1").IP(ip).ReadyAt(readyAt).Build()
}

// staleSource serves an input holding a slice of ours that no longer exists,
// as a cache that missed its deletion would.
type staleSource struct {
	cluster.Reader
	gone *discovery.EndpointSlice
}

func (s staleSource) Load(ctx context.Context, svc *corev1.Service) (reconcile.Input, error) {
	in, err := s.Reader.Load(ctx, svc)
	in.Slices = append(in.Slices, s.gone)
	return in, err
}

// An update that meets a slice deleted meanwhile re-reads, re-plans and
// succeeds; the writes of every attempt are reported.
func TestSyncReplansAfterUpdateOfDeletedSlice(t *testing.T) {
	svc := testService()
	client := fake.NewClientset(svc, testPod("web-1", "10.1.0.1", t0.Add(time.Hour)), testutil.NewNode("n1").Build())
	gone := testutil.NewSlice("shop", "web-gone").Service("web").ManagedBy(reconcile.DefaultManagedBy).ResourceVersion("3").OwnedBy(svc).Build()
	reader := cluster.Reader{Client: client}
	out := Sync(context.Background(), staleSource{Reader: reader, gone: gone}, client.DiscoveryV1(), svc, Options{
		Plan:  reconcile.DefaultOptions(),
		Write: &apply.Options{ManagedBy: reconcile.DefaultManagedBy, DryRun: apply.DryRunNone, Workers: 2},
		Retry: reader,
	})
	if out.Err != nil {
		t.Fatalf("err %v after %d attempts", out.Err, out.Attempts)
	}
	if out.Attempts != 2 || len(out.Result.Created) != 1 {
		t.Fatalf("attempts %d, created %d, plan %+v, input %+v", out.Attempts, len(out.Result.Created), out.Plan, out.Input)
	}
	live, _ := client.DiscoveryV1().EndpointSlices("shop").List(context.Background(), metav1.ListOptions{})
	if len(live.Items) != 1 || len(live.Items[0].Endpoints) != 1 || live.Items[0].Endpoints[0].Addresses[0] != "10.1.0.1" {
		t.Fatalf("end state %+v", live.Items)
	}
	if got := live.Items[0].Annotations[corev1.EndpointsLastChangeTriggerTime]; got != t0.Add(time.Hour).Format(time.RFC3339Nano) {
		t.Errorf("trigger time %q, want the Pod's Ready transition", got)
	}
}

func TestLatestChange(t *testing.T) {
	svc := testService()
	if got := LatestChange(svc, nil); !got.Equal(t0) {
		t.Errorf("no pods: %v", got)
	}
	pods := []*corev1.Pod{testPod("a", "10.0.0.1", t0.Add(time.Minute)), testPod("b", "10.0.0.2", t0.Add(2*time.Minute)), testPod("c", "10.0.0.3", t0.Add(-time.Hour))}
	if got := LatestChange(svc, pods); !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("latest %v", got)
	}
	if got := LatestChange(&corev1.Service{}, nil); !got.IsZero() {
		t.Errorf("nothing known: %v", got)
	}
}

// The tracker returns, after the first sync, the earliest trigger time that
// moved since the previous one, or zero.
func TestTracker(t *testing.T) {
	tr := NewTracker()
	svc := testService()
	a, b := testPod("a", "10.0.0.1", t0.Add(time.Minute)), testPod("b", "10.0.0.2", t0.Add(2*time.Minute))
	if got := tr.Compute(svc, []*corev1.Pod{a, b}); !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("first sync %v", got)
	}
	if got := tr.Compute(svc, []*corev1.Pod{a, b}); !got.IsZero() {
		t.Errorf("nothing changed: %v", got)
	}
	a2, b2 := testPod("a", "10.0.0.1", t0.Add(5*time.Minute)), testPod("b", "10.0.0.2", t0.Add(4*time.Minute))
	if got := tr.Compute(svc, []*corev1.Pod{a2, b2}); !got.Equal(t0.Add(4 * time.Minute)) {
		t.Errorf("two moved: %v, want the earlier", got)
	}
	tr.Forget("shop", "web")
	if got := tr.Compute(svc, []*corev1.Pod{a2}); !got.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("after forget: %v", got)
	}
}

// Tracker.Changed, told which Pods changed, returns what Compute returns
// given all of them, over random changes (Ready times moving forward or
// back, Pods leaving and coming back, Pods without a Ready condition).
func TestTrackerChangedAsCompute(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	svc := testService()
	full, part := NewTracker(), NewTracker()
	pods := map[string]*corev1.Pod{}
	list := func() []*corev1.Pod {
		var out []*corev1.Pod
		for _, name := range slices.Sorted(maps.Keys(pods)) {
			out = append(out, pods[name])
		}
		return out
	}
	for i := range 8 {
		name := fmt.Sprintf("p%d", i)
		pods[name] = testPod(name, "10.0.0.1", t0.Add(time.Duration(r.Intn(100))*time.Second))
	}
	full.Compute(svc, list())
	part.Compute(svc, list())
	for step := range 500 {
		changed := map[string]*corev1.Pod{}
		for range 1 + r.Intn(3) {
			name := fmt.Sprintf("p%d", r.Intn(10))
			switch r.Intn(4) {
			case 0:
				delete(pods, name)
			case 1:
				p := testPod(name, "10.0.0.1", time.Time{})
				p.Status.Conditions = nil
				pods[name] = p
			default:
				pods[name] = testPod(name, "10.0.0.1", t0.Add(time.Duration(r.Intn(200))*time.Second))
			}
			changed[name] = pods[name]
		}
		want := full.Compute(svc, list())
		got, commit, known := part.Changed(svc, changed)
		if !known {
			t.Fatal("a Service synced before is unknown")
		}
		commit()
		if !got.Equal(want) {
			t.Fatalf("step %d: Changed says %v, Compute %v", step, got, want)
		}
	}
	if _, _, known := NewTracker().Changed(svc, nil); known {
		t.Error("a Service never synced is known")
	}
}
