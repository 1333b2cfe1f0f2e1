package apply

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func endpointsPlan(action endpoints.Action, managedBy string, live *corev1.Endpoints) *endpoints.Plan {
	d := testutil.NewEndpoints("shop", "web").Label(endpoints.LabelManagedBy, managedBy).Build()
	if live != nil {
		d.ResourceVersion = live.ResourceVersion
	}
	return &endpoints.Plan{Action: action, Desired: d, Live: live}
}

func TestEndpointsWritesOnlyOurs(t *testing.T) {
	ctx := context.Background()
	foreign := testutil.NewEndpoints("shop", "web").ResourceVersion("3").Label("owner", "me").Build()
	client := fake.NewClientset(foreign.DeepCopy())
	eps := client.CoreV1().Endpoints("shop")

	// An update over an object without our mark is refused before sending.
	if _, err := Endpoints(ctx, eps, endpointsPlan(endpoints.Update, reconcile.DefaultManagedBy, foreign), opts(DryRunNone)); err == nil {
		t.Fatal("update over a foreign Endpoints was not refused")
	}
	// So is a desired object without our mark.
	if _, err := Endpoints(ctx, eps, endpointsPlan(endpoints.Create, "someone", nil), opts(DryRunNone)); err == nil {
		t.Fatal("create under another managed-by value was not refused")
	}
	// A create racing someone else's is a conflict, not an overwrite.
	_, err := Endpoints(ctx, eps, endpointsPlan(endpoints.Create, reconcile.DefaultManagedBy, nil), opts(DryRunNone))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("create over an existing object: %v", err)
	}
	got, _ := eps.Get(ctx, "web", metav1.GetOptions{})
	if got.Labels["owner"] != "me" {
		t.Fatalf("foreign object changed: %v", got.Labels)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" {
			t.Fatalf("an update was sent: %v", a)
		}
	}
}

func TestEndpointsCreateAndClientDryRun(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	eps := client.CoreV1().Endpoints("shop")
	plan := endpointsPlan(endpoints.Create, reconcile.DefaultManagedBy, nil)
	if out, err := Endpoints(ctx, eps, plan, opts(DryRunClient)); err != nil || out == nil || len(client.Actions()) != 0 {
		t.Fatalf("client dry run: %v %v, %d actions", out, err, len(client.Actions()))
	}
	if _, err := Endpoints(ctx, eps, plan, opts(DryRunNone)); err != nil {
		t.Fatal(err)
	}
	if _, err := eps.Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := Endpoints(ctx, eps, &endpoints.Plan{Action: endpoints.Skip}, opts(DryRunNone)); out != nil || err != nil {
		t.Fatalf("skip wrote: %v %v", out, err)
	}
}

// prune's delete and release --force's disown refuse an Endpoints object
// without our mark (the Endpoints controller's, someone's, none) and one
// read without a resourceVersion, before sending anything: the listing
// that found them is not trusted alone.
func TestDeleteAndDisownEndpointsOnlyOurs(t *testing.T) {
	ctx := context.Background()
	mk := func(name, rv string, labels map[string]string) *corev1.Endpoints {
		return testutil.NewEndpoints("shop", name).UID("uid-" + name).ResourceVersion(rv).Labels(labels).
			Subset(corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}}).Build()
	}
	refused := []*corev1.Endpoints{
		mk("controller", "3", map[string]string{endpoints.LabelManagedBy: endpoints.ControllerManagedBy}),
		mk("someone", "3", map[string]string{endpoints.LabelManagedBy: "someone"}),
		mk("unmarked", "3", nil),
		mk("no-version", "", map[string]string{endpoints.LabelManagedBy: reconcile.DefaultManagedBy}),
	}
	var objs []runtime.Object
	for _, ep := range refused {
		objs = append(objs, ep.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	eps := client.CoreV1().Endpoints("shop")
	for _, ep := range refused {
		if err := DeleteEndpoints(ctx, eps, ep, opts(DryRunNone)); err == nil {
			t.Errorf("delete of %s not refused", ep.Name)
		}
		if _, err := DisownEndpoints(ctx, eps, ep, opts(DryRunNone)); err == nil {
			t.Errorf("disown of %s not refused", ep.Name)
		}
	}
	for _, a := range client.Actions() {
		if v := a.GetVerb(); v == "delete" || v == "update" || v == "patch" {
			t.Errorf("sent %s %v", v, a)
		}
	}
	ours := mk("ours", "3", map[string]string{endpoints.LabelManagedBy: reconcile.DefaultManagedBy})
	client = fake.NewClientset(ours.DeepCopy())
	if err := DeleteEndpoints(ctx, client.CoreV1().Endpoints("shop"), ours, opts(DryRunNone)); err != nil {
		t.Fatalf("delete of ours: %v", err)
	}
}
