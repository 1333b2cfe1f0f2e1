package apply

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func endpointsPlan(action endpoints.Action, managedBy string, live *corev1.Endpoints) *endpoints.Plan {
	d := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{endpoints.LabelManagedBy: managedBy}}}
	if live != nil {
		d.ResourceVersion = live.ResourceVersion
	}
	return &endpoints.Plan{Action: action, Desired: d, Live: live}
}

func TestEndpointsWritesOnlyOurs(t *testing.T) {
	ctx := context.Background()
	foreign := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "3", Labels: map[string]string{"owner": "me"}}}
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
