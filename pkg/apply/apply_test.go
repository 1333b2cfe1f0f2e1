package apply

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func slice(name, managedBy string) *discovery.EndpointSlice {
	return &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", ResourceVersion: "7", UID: types.UID("u-" + name),
		Labels: map[string]string{discovery.LabelManagedBy: managedBy, discovery.LabelServiceName: "web"}}, AddressType: discovery.AddressTypeIPv4}
}

func opts(d DryRun) Options {
	return Options{ManagedBy: reconcile.DefaultManagedBy, FieldManager: "kubectl-slices", DryRun: d, Workers: 4}
}

// Phases run creates, then updates, then deletes, with preconditions.
func TestApplyOrderAndPreconditions(t *testing.T) {
	live := []runtime.Object{slice("web-upd", reconcile.DefaultManagedBy), slice("web-del", reconcile.DefaultManagedBy)}
	client := fake.NewClientset(live...)
	create := slice("", reconcile.DefaultManagedBy)
	create.GenerateName, create.ResourceVersion = "web-", ""
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice)
		s.Name = "web-new"
		return false, nil, nil
	})
	plan := &reconcile.Plan{Create: []*discovery.EndpointSlice{create}, Update: []*discovery.EndpointSlice{slice("web-upd", reconcile.DefaultManagedBy)},
		Delete: []*discovery.EndpointSlice{slice("web-del", reconcile.DefaultManagedBy)}}
	res, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if err != nil || res.Writes() != 3 {
		t.Fatalf("writes %d, err %v", res.Writes(), err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb())
		if d, ok := a.(k8stesting.DeleteAction); ok {
			pre := d.GetDeleteOptions().Preconditions
			if pre == nil || *pre.ResourceVersion != "7" || *pre.UID != "u-web-del" {
				t.Errorf("delete without preconditions: %+v", pre)
			}
		}
		if c, ok := a.(k8stesting.CreateActionImpl); ok && c.CreateOptions.FieldManager != "kubectl-slices" {
			t.Errorf("field manager %q", c.CreateOptions.FieldManager)
		}
	}
	if want := []string{"create", "update", "delete"}; !equal(verbs, want) {
		t.Errorf("verbs %v, want %v", verbs, want)
	}
}

func TestApplyRefusesForeignSlices(t *testing.T) {
	client := fake.NewClientset()
	plan := &reconcile.Plan{Delete: []*discovery.EndpointSlice{slice("kcm", reconcile.ControllerManagedBy)}}
	_, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if err == nil || len(client.Actions()) != 0 {
		t.Fatalf("err %v, %d actions", err, len(client.Actions()))
	}
}

func TestDryRuns(t *testing.T) {
	plan := &reconcile.Plan{Update: []*discovery.EndpointSlice{slice("web-upd", reconcile.DefaultManagedBy)}}
	client := fake.NewClientset(slice("web-upd", reconcile.DefaultManagedBy))
	res, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunClient))
	if err != nil || len(client.Actions()) != 0 || len(res.Updated) != 1 {
		t.Fatalf("client dry run: err %v, %d actions", err, len(client.Actions()))
	}
	if _, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunServer)); err != nil {
		t.Fatal(err)
	}
	u := client.Actions()[0].(k8stesting.UpdateActionImpl)
	if len(u.UpdateOptions.DryRun) != 1 || u.UpdateOptions.DryRun[0] != metav1.DryRunAll {
		t.Errorf("server dry run sent %+v", u.UpdateOptions)
	}
}

// A conflict is reported as ErrConflict and stops the later phases; a
// namespace being deleted is reported as such.
func TestApplyErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}
	client := fake.NewClientset(slice("web-upd", reconcile.DefaultManagedBy), slice("web-del", reconcile.DefaultManagedBy))
	client.PrependReactor("update", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(gr, "web-upd", errors.New("changed"))
	})
	plan := &reconcile.Plan{Update: []*discovery.EndpointSlice{slice("web-upd", reconcile.DefaultManagedBy)},
		Delete: []*discovery.EndpointSlice{slice("web-del", reconcile.DefaultManagedBy)}}
	_, err := Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), plan, opts(DryRunNone))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v", err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			t.Error("delete ran after a failed update phase")
		}
	}

	client = fake.NewClientset()
	client.PrependReactor("create", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		e := apierrors.NewForbidden(gr, "", errors.New("namespace shop is being terminated"))
		e.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
		return true, nil, e
	})
	create := slice("", reconcile.DefaultManagedBy)
	_, err = Apply(context.Background(), client.DiscoveryV1().EndpointSlices("shop"), &reconcile.Plan{Create: []*discovery.EndpointSlice{create}}, opts(DryRunNone))
	var nt *NamespaceTerminatingError
	if !errors.As(err, &nt) {
		t.Fatalf("err %v", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
