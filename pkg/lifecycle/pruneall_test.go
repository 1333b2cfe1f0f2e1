package lifecycle

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// PruneAll deletes the orphan slices, then the orphan Endpoints objects;
// when a slice cannot be deleted, no Endpoints object is touched.
func TestPruneAll(t *testing.T) {
	ctx := context.Background()
	objects := func() []runtime.Object {
		return []runtime.Object{svc("web"), slice("web-1", "web", reconcile.DefaultManagedBy, true),
			slice("gone-1", "gone", reconcile.DefaultManagedBy, true), eps("gone", reconcile.DefaultManagedBy, "10.0.0.4")}
	}
	client := fake.NewClientset(objects()...)
	found, err := FindOrphans(ctx, client, "shop", reconcile.DefaultManagedBy)
	if err != nil || len(found.Slices) != 1 || len(found.Endpoints) != 1 {
		t.Fatalf("found %+v, %v", found, err)
	}
	out := PruneAll(ctx, client, found, write)
	if out.Err() != nil || len(out.Slices) != 1 || len(out.Endpoints) != 1 || names(client) != "web-1" || len(dumpEndpoints(t, client)) != 0 {
		t.Errorf("pruned %+v; left slices %s, Endpoints %v", out, names(client), dumpEndpoints(t, client))
	}

	client = fake.NewClientset(objects()...)
	refused := errors.New("refused")
	client.PrependReactor("delete", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, refused })
	out = PruneAll(ctx, client, found, write)
	if !errors.Is(out.SlicesErr, refused) || !errors.Is(out.Err(), refused) || out.EndpointsErr != nil || len(dumpEndpoints(t, client)) != 1 {
		t.Errorf("a slice refused: %+v; Endpoints left %v, want the orphan kept", out, dumpEndpoints(t, client))
	}

	client = fake.NewClientset()
	if out := PruneAll(ctx, client, Orphans{}, write); out.Err() != nil || len(client.Actions()) != 0 {
		t.Errorf("nothing found: %+v, %d requests", out, len(client.Actions()))
	}
}
