package syncer

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "svc-uid", CreationTimestamp: metav1.NewTime(t0)},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.0.0.1",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
}

func testPod(name, ip string, readyAt time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(readyAt)}}},
	}
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
	client := fake.NewClientset(svc, testPod("web-1", "10.1.0.1", t0.Add(time.Hour)), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	gone := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-gone", Namespace: "shop", ResourceVersion: "3",
			Labels:          map[string]string{discovery.LabelServiceName: "web", discovery.LabelManagedBy: reconcile.DefaultManagedBy},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: "svc-uid", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}},
		AddressType: discovery.AddressTypeIPv4,
	}
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

func ptr[T any](v T) *T { return &v }

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
