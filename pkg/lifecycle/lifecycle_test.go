package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func svc(name string) *corev1.Service {
	return testutil.NewService("shop", name).Selector("app", name).Build()
}

// slice holds one endpoint per ready value, at 10.0.0.1, 10.0.0.2, ...
func slice(name, service, managedBy string, ready ...bool) *discovery.EndpointSlice {
	b := testutil.NewSlice("shop", name).Service(service).ManagedBy(managedBy).ResourceVersion("3")
	for i, r := range ready {
		b.Endpoint(fmt.Sprintf("10.0.0.%d", i+1), r)
	}
	return b.Build()
}

func names(client *fake.Clientset) string {
	list, _ := client.DiscoveryV1().EndpointSlices("shop").List(context.Background(), metav1.ListOptions{})
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Name)
	}
	return strings.Join(out, ",")
}

var write = apply.Options{ManagedBy: reconcile.DefaultManagedBy, Workers: 2}

func TestReleaseOnlyWhenTheControllerPublishesTheSame(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		live    []runtime.Object
		force   bool
		left    string
		refused string
	}{
		{"no controller slices", []runtime.Object{slice("ours", "web", reconcile.DefaultManagedBy, true)}, false, "ours", "publishes no slices"},
		{"controller differs", []runtime.Object{slice("ours", "web", reconcile.DefaultManagedBy, true, true),
			slice("kcm", "web", reconcile.ControllerManagedBy, true, false)}, false, "kcm,ours", "differ from ours in 1 endpoint"},
		{"forced", []runtime.Object{slice("ours", "web", reconcile.DefaultManagedBy, true, true),
			slice("kcm", "web", reconcile.ControllerManagedBy, true, false)}, true, "kcm", ""},
		{"same", []runtime.Object{slice("ours", "web", reconcile.DefaultManagedBy, true, true), slice("other", "web", "someone", false),
			slice("kcm", "web", reconcile.ControllerManagedBy, true, true), slice("ours-api", "api", reconcile.DefaultManagedBy, true)}, false, "kcm,other,ours-api", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.live...)
			out := Release(ctx, client, svc("web"), ReleaseOptions{Write: write, Force: tc.force})
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if got := names(client); got != tc.left {
				t.Errorf("left %s, want %s", got, tc.left)
			}
			if tc.refused == "" && out.Refused != "" || !strings.Contains(out.Refused, tc.refused) {
				t.Errorf("refused %q, want %q", out.Refused, tc.refused)
			}
		})
	}
}

// A Service the controller will never publish points to prune.
func TestReleasePointsToPrune(t *testing.T) {
	s := svc("web")
	s.Spec.Selector = nil
	client := fake.NewClientset(slice("ours", "web", reconcile.DefaultManagedBy, true))
	start := time.Now()
	out := Release(context.Background(), client, s, ReleaseOptions{Write: write, Wait: time.Minute, Poll: 10 * time.Millisecond})
	if !strings.Contains(out.Refused, "kubectl slices prune -n shop") || names(client) != "ours" || time.Since(start) > 5*time.Second {
		t.Errorf("refused %q, left %s", out.Refused, names(client))
	}
}

// --wait: ours go only once the controller's slice publishes the same.
func TestReleaseWaits(t *testing.T) {
	client := fake.NewClientset(slice("ours", "web", reconcile.DefaultManagedBy, true, true), slice("kcm", "web", reconcile.ControllerManagedBy, true))
	go func() {
		time.Sleep(300 * time.Millisecond)
		if names(client) != "kcm,ours" {
			t.Errorf("ours deleted before the controller caught up: %s", names(client))
		}
		_, _ = client.DiscoveryV1().EndpointSlices("shop").Update(context.Background(), slice("kcm", "web", reconcile.ControllerManagedBy, true, true), metav1.UpdateOptions{})
	}()
	out := Release(context.Background(), client, svc("web"), ReleaseOptions{Write: write, Wait: 5 * time.Second, Poll: 20 * time.Millisecond})
	if out.Err != nil || out.Refused != "" || names(client) != "kcm" || out.Waited < 250*time.Millisecond {
		t.Errorf("err %v refused %q left %s waited %s", out.Err, out.Refused, names(client), out.Waited)
	}
	// Within a too short wait it refuses and says so.
	client = fake.NewClientset(slice("ours", "web", reconcile.DefaultManagedBy, true, true), slice("kcm", "web", reconcile.ControllerManagedBy, true))
	out = Release(context.Background(), client, svc("web"), ReleaseOptions{Write: write, Wait: 100 * time.Millisecond, Poll: 20 * time.Millisecond})
	if !strings.Contains(out.Refused, "did not catch up within --wait") || names(client) != "kcm,ours" {
		t.Errorf("short wait: refused %q, left %s", out.Refused, names(client))
	}
}

func TestPruneDeletesOnlyOurOrphans(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(svc("web"),
		slice("web-1", "web", reconcile.DefaultManagedBy, true), slice("gone-1", "gone", reconcile.DefaultManagedBy, true),
		slice("gone-k", "gone", reconcile.ControllerManagedBy, true), slice("gone-o", "gone", "someone", true))
	found, err := FindOrphans(ctx, client, "shop", reconcile.DefaultManagedBy)
	orphans, seen := found.Slices, found.SlicesSeen
	if err != nil || seen != 2 || len(orphans) != 1 || orphans[0].Slice.Name != "gone-1" {
		t.Fatalf("orphans %+v seen %d err %v", orphans, seen, err)
	}
	dry := write
	dry.DryRun = apply.DryRunClient
	if res, err := Prune(ctx, client, orphans, dry); err != nil || len(res.Deleted) != 1 || names(client) != "gone-1,gone-k,gone-o,web-1" {
		t.Errorf("dry run: %v %v %s", res, err, names(client))
	}
	if res, err := Prune(ctx, client, orphans, write); err != nil || len(res.Deleted) != 1 || names(client) != "gone-k,gone-o,web-1" {
		t.Errorf("prune: %v %v %s", res, err, names(client))
	}
}

// Audit reads through the cache: a Service without slices and an orphan of
// ours are found, a healthy Service and another manager's slice are not.
func TestAudit(t *testing.T) {
	pod := testutil.NewPod("shop", "web-1").Label("app", "web").IP("10.0.0.1").Build()
	client := fake.NewClientset(svc("web"), pod, slice("gone-1", "gone", reconcile.DefaultManagedBy, true), slice("gone-k", "gone", reconcile.ControllerManagedBy, true))
	r, err := Audit(context.Background(), client, "shop", reconcile.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Service+" "+string(f.Kind))
	}
	if strings.Join(got, ",") != "gone Orphaned,web NoSlices" || r.Healthy || r.Services != 1 || r.Slices != 2 {
		t.Errorf("findings %v, report %+v", got, r)
	}
}

// Slices mirrored from a selector-less Service's Endpoints go back to the
// mirroring controller, only once its slices publish the same; the
// EndpointSlice controller's slices never count for such a Service.
func TestReleaseMirrored(t *testing.T) {
	s := svc("web")
	s.Spec.Selector = nil
	mirrored := func(name, managedBy string, ready ...bool) *discovery.EndpointSlice {
		m := slice(name, "web", managedBy, ready...)
		m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(
			&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "ep-uid"}}, corev1.SchemeGroupVersion.WithKind("Endpoints"))}
		return m
	}
	for _, tc := range []struct {
		name    string
		live    []runtime.Object
		left    string
		refused string
	}{
		{"mirroring controller absent", []runtime.Object{mirrored("ours", reconcile.DefaultManagedBy, true)}, "ours", "mirroring controller publishes no slices"},
		{"only the slice controller's", []runtime.Object{mirrored("ours", reconcile.DefaultManagedBy, true),
			slice("kcm", "web", reconcile.ControllerManagedBy, true)}, "kcm,ours", "mirroring controller publishes no slices"},
		{"mirroring controller differs", []runtime.Object{mirrored("ours", reconcile.DefaultManagedBy, true, true),
			mirrored("mir", reconcile.MirroringManagedBy, true)}, "mir,ours", "differ from ours"},
		{"mirroring controller same", []runtime.Object{mirrored("ours", reconcile.DefaultManagedBy, true),
			mirrored("mir", reconcile.MirroringManagedBy, true)}, "mir", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.live...)
			out := Release(context.Background(), client, s, ReleaseOptions{Write: write})
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if got := names(client); got != tc.left {
				t.Errorf("left %s, want %s", got, tc.left)
			}
			if tc.refused == "" && out.Refused != "" || !strings.Contains(out.Refused, tc.refused) {
				t.Errorf("refused %q, want %q", out.Refused, tc.refused)
			}
		})
	}
}
