package lifecycle

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func eps(name, managedBy string, ips ...string) *corev1.Endpoints {
	b := testutil.NewEndpoints("shop", name).ResourceVersion("5").UID("ep-uid-x").Addresses("", 80, ips)
	if managedBy != "" {
		b.Label(endpoints.LabelManagedBy, managedBy)
	}
	return b.Build()
}

// dumpEndpoints is every Endpoints object of shop, as JSON, by name.
func dumpEndpoints(t *testing.T, client *fake.Clientset) map[string]string {
	t.Helper()
	list, err := client.CoreV1().Endpoints("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ep := range list.Items {
		b, _ := json.Marshal(ep)
		out[ep.Name] = string(b)
	}
	return out
}

// Prune deletes our Endpoints of a Service gone, selector-less or
// ExternalName; ours of a live selector Service and anyone else's stay
// byte-identical.
func TestPruneEndpoints(t *testing.T) {
	ctx := context.Background()
	nosel, ext := svc("nosel"), svc("ext")
	nosel.Spec.Selector = nil
	ext.Spec.Type = corev1.ServiceTypeExternalName
	objs := []runtime.Object{svc("web"), nosel, ext,
		eps("web", reconcile.DefaultManagedBy, "10.0.0.1"), eps("nosel", reconcile.DefaultManagedBy, "10.0.0.2"),
		eps("ext", reconcile.DefaultManagedBy, "10.0.0.3"), eps("gone", reconcile.DefaultManagedBy, "10.0.0.4"),
		eps("gone-hand", "", "10.0.0.5"), eps("gone-kcm", endpoints.ControllerManagedBy, "10.0.0.6"), eps("gone-other", "someone", "10.0.0.7")}
	client := fake.NewClientset(objs...)
	before := dumpEndpoints(t, client)
	found, err := FindOrphans(ctx, client, "shop", reconcile.DefaultManagedBy)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range found.Endpoints {
		got = append(got, o.Endpoints.Name+":"+string(o.Reason))
	}
	if strings.Join(got, ",") != "ext:ExternalName,gone:ServiceGone,nosel:NoSelector" || found.EndpointsSeen != 4 {
		t.Fatalf("orphans %v, seen %d", got, found.EndpointsSeen)
	}
	dry := write
	dry.DryRun = apply.DryRunClient
	if del, err := PruneEndpoints(ctx, client, found.Endpoints, dry); err != nil || len(del) != 3 || len(dumpEndpoints(t, client)) != len(before) {
		t.Fatalf("dry run: %d deleted, %v", len(del), err)
	}
	if del, err := PruneEndpoints(ctx, client, found.Endpoints, write); err != nil || len(del) != 3 {
		t.Fatalf("prune: %d deleted, %v", len(del), err)
	}
	after := dumpEndpoints(t, client)
	for name, raw := range before {
		switch name {
		case "ext", "gone", "nosel":
			if _, ok := after[name]; ok {
				t.Errorf("%s was not pruned", name)
			}
		default:
			if after[name] != raw {
				t.Errorf("%s changed:\n%s\n%s", name, raw, after[name])
			}
		}
	}
}

// Release never deletes the Endpoints object: it waits for the controller
// to take it over, or with --force removes our mark and nothing else; it
// never writes an object that is not ours.
func TestReleaseEndpoints(t *testing.T) {
	ctx := context.Background()
	nosel := svc("web")
	nosel.Spec.Selector = nil
	for _, tc := range []struct {
		name             string
		svc              *corev1.Service
		live             *corev1.Endpoints
		force            bool
		refused          string
		ours, taken, dis bool
		wantMark         string
	}{
		{"absent", svc("web"), nil, false, "", false, false, false, ""},
		{"hand-written", svc("web"), eps("web", "", "10.0.0.1"), true, "", false, false, false, ""},
		{"the controller's", svc("web"), eps("web", endpoints.ControllerManagedBy, "10.0.0.1"), true, "", false, true, false, endpoints.ControllerManagedBy},
		{"ours, not taken over", svc("web"), eps("web", reconcile.DefaultManagedBy, "10.0.0.1"), false, "has not taken it over", true, false, false, reconcile.DefaultManagedBy},
		{"ours, forced", svc("web"), eps("web", reconcile.DefaultManagedBy, "10.0.0.1"), true, "", true, false, true, ""},
		{"ours, no selector", nosel, eps("web", reconcile.DefaultManagedBy, "10.0.0.1"), true, "kubectl slices prune -n shop", true, false, false, reconcile.DefaultManagedBy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.live != nil {
				objs = append(objs, tc.live)
			}
			client := fake.NewClientset(objs...)
			before := dumpEndpoints(t, client)
			out := ReleaseEndpoints(ctx, client, tc.svc, ReleaseOptions{Write: write, Force: tc.force})
			if out.Err != nil || out.Ours != tc.ours || out.TakenOver != tc.taken || out.Disowned != tc.dis ||
				(tc.refused == "") != (out.Refused == "") || !strings.Contains(out.Refused, tc.refused) {
				t.Fatalf("got %+v", out)
			}
			after := dumpEndpoints(t, client)
			if tc.live == nil {
				if len(after) != 0 {
					t.Fatalf("created %v", after)
				}
				return
			}
			ep, err := client.CoreV1().Endpoints("shop").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the Endpoints object is gone: %v", err)
			}
			if got := ep.Labels[endpoints.LabelManagedBy]; got != tc.wantMark {
				t.Errorf("mark %q, want %q", got, tc.wantMark)
			}
			if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "10.0.0.1" {
				t.Errorf("addresses changed: %+v", ep.Subsets)
			}
			if !tc.dis && after["web"] != before["web"] {
				t.Errorf("changed without --force:\n%s\n%s", before["web"], after["web"])
			}
		})
	}
}

// --wait: handed back once the controller rewrites the object under its mark.
func TestReleaseEndpointsWaits(t *testing.T) {
	client := fake.NewClientset(eps("web", reconcile.DefaultManagedBy, "10.0.0.1"))
	go func() {
		time.Sleep(200 * time.Millisecond)
		taken := eps("web", endpoints.ControllerManagedBy, "10.0.0.1")
		_, _ = client.CoreV1().Endpoints("shop").Update(context.Background(), taken, metav1.UpdateOptions{})
	}()
	out := ReleaseEndpoints(context.Background(), client, svc("web"), ReleaseOptions{Write: write, Wait: 5 * time.Second, Poll: 20 * time.Millisecond})
	if out.Err != nil || out.Refused != "" || !out.Ours || !out.TakenOver {
		t.Errorf("got %+v", out)
	}
	client = fake.NewClientset(eps("web", reconcile.DefaultManagedBy, "10.0.0.1"))
	out = ReleaseEndpoints(context.Background(), client, svc("web"), ReleaseOptions{Write: write, Wait: 100 * time.Millisecond, Poll: 20 * time.Millisecond})
	if !strings.Contains(out.Refused, "did not within --wait") {
		t.Errorf("short wait: %+v", out)
	}
}
