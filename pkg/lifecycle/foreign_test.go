package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func writtenBy(s *discovery.EndpointSlice, managers ...string) *discovery.EndpointSlice {
	for _, m := range managers {
		s.ManagedFields = append(s.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate})
	}
	return s
}

// A managed-by value under which slices exist that show no trace of our
// field manager is another tool's: the run is refused, naming them. A trace
// of ours (also the run's own --field-manager) lets it proceed, and slices
// of other values never count.
func TestCheckForeign(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		slices []*discovery.EndpointSlice
		fm     string
		refuse string
	}{
		{"another tool's", []*discovery.EndpointSlice{writtenBy(slice("web-mesh", "web", "mesh.example.io"), "mesh-agent")}, "", "shop/web-mesh"},
		{"none at all", nil, "", ""},
		{"ours, edited by hand since", []*discovery.EndpointSlice{writtenBy(slice("web-x", "web", "mesh.example.io"), apply.FieldManager, "kubectl-edit")}, "", ""},
		{"ours under the run's field manager", []*discovery.EndpointSlice{writtenBy(slice("web-x", "web", "mesh.example.io"), "ops-sync")}, "ops-sync", ""},
		{"no managedFields", []*discovery.EndpointSlice{slice("web-bare", "web", "mesh.example.io")}, "", "shop/web-bare"},
		{"other values only", []*discovery.EndpointSlice{writtenBy(slice("web-k", "web", "someone"), "x")}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			for _, s := range tc.slices {
				objs = append(objs, s)
			}
			client := fake.NewClientset(objs...)
			err := CheckForeign(ctx, client, "shop", "mesh.example.io", tc.fm)
			var te *ForeignError
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && (!errors.As(err, &te) || !strings.Contains(err.Error(), "EndpointSlice "+tc.refuse+" carries it")):
				t.Fatalf("got %v, want a refusal naming %s", err, tc.refuse)
			}
		})
	}
}

// Our own default value is not checked: no request, no refusal.
func TestCheckForeignSkipsOurDefault(t *testing.T) {
	client := fake.NewClientset(writtenBy(slice("web-k", "web", reconcile.DefaultManagedBy), "x"))
	if err := CheckForeign(context.Background(), client, "shop", reconcile.DefaultManagedBy, ""); err != nil || len(client.Actions()) != 0 {
		t.Errorf("default value: %v after %d requests", err, len(client.Actions()))
	}
}

func TestForeignErrorNamesAFew(t *testing.T) {
	e := &ForeignError{ManagedBy: "m", Slices: []string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "a/7"}}
	want := `refusing to write under managed-by "m": EndpointSlices a/1, a/2, a/3, a/4, a/5 and 2 more carry it but were not written by kubectl-slices (another tool's value?); pick another --managed-by, or pass --force to take them over`
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
}
