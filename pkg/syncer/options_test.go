package syncer

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

var ourWrite = &apply.Options{ManagedBy: reconcile.DefaultManagedBy, DryRun: apply.DryRunNone, Workers: 2}

// liveSlices lists the namespace's slices as "name managed-by [addresses]".
func liveSlices(t *testing.T, client *fake.Clientset) []string {
	t.Helper()
	list, err := client.DiscoveryV1().EndpointSlices("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		row := s.Labels[discovery.LabelManagedBy]
		for _, e := range s.Endpoints {
			row += " " + e.Addresses[0]
		}
		out = append(out, row)
	}
	sort.Strings(out)
	return out
}

// Hold is asked before any write: a non-empty answer leaves the cluster as
// it was and is reported; an empty one lets the plan through.
func TestSyncHoldWritesNothing(t *testing.T) {
	svc := testutil.NewService("shop", "web").Selector("app", "web").Port("http", 80, "8080").Build()
	objs := func() []runtime.Object {
		return []runtime.Object{svc, testutil.NewPod("shop", "web-1").Label("app", "web").IP("10.1.0.1").Node("n1").Build(),
			testutil.NewNode("n1").Build()}
	}
	for _, tc := range []struct {
		name, reason string
		want         []string
	}{
		{"held", "kube-controller-manager publishes it", nil},
		{"not held", "", []string{reconcile.DefaultManagedBy + " 10.1.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(objs()...)
			asked := 0
			out := Sync(context.Background(), cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{
				Plan: reconcile.DefaultOptions(), Write: ourWrite,
				Hold: func(reconcile.Input, *reconcile.Plan) string { asked++; return tc.reason },
			})
			if out.Err != nil || asked != 1 || out.Held != tc.reason {
				t.Fatalf("err %v, asked %d times, held %q", out.Err, asked, out.Held)
			}
			if diff := cmp.Diff(tc.want, liveSlices(t, client)); diff != "" {
				t.Errorf("live slices (-want +got):\n%s", diff)
			}
		})
	}
}

// DeleteUnplanned deletes our slices of a Service the planner leaves alone
// (it lost its selector) and never another manager's; without it ours stay.
func TestSyncDeleteUnplanned(t *testing.T) {
	svc := testutil.NewService("shop", "web").Port("http", 80, "8080").Build() // no selector
	ours := testutil.NewSlice("shop", "web-ours").Service("web").ManagedBy(reconcile.DefaultManagedBy).ResourceVersion("3").Ready("10.1.0.1").Build()
	theirs := testutil.NewSlice("shop", "web-kcm").Service("web").ManagedBy(reconcile.MirroringManagedBy).ResourceVersion("4").Ready("10.1.0.2").Build()
	for _, tc := range []struct {
		name   string
		delete bool
		want   []string
	}{
		{"delete unplanned", true, []string{reconcile.MirroringManagedBy + " 10.1.0.2"}},
		{"keep", false, []string{reconcile.MirroringManagedBy + " 10.1.0.2", reconcile.DefaultManagedBy + " 10.1.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(svc, ours, theirs)
			out := Sync(context.Background(), cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{
				Plan: reconcile.DefaultOptions(), Write: ourWrite, DeleteUnplanned: tc.delete,
			})
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if diff := cmp.Diff(tc.want, liveSlices(t, client)); diff != "" {
				t.Errorf("live slices (-want +got):\n%s", diff)
			}
		})
	}
}
