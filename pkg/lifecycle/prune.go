package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Orphans is what prune deletes: slices and Endpoints objects of ours that
// outlived their Service, with how many of ours were looked at.
type Orphans struct {
	Slices        []explain.Orphan
	SlicesSeen    int
	Endpoints     []explain.EndpointsOrphan
	EndpointsSeen int
}

// FindOrphans lists the Services of namespace ("" for all), the slices and
// the Endpoints objects carrying our managed-by value (selected by label on
// the server: no other manager's object is even read), and returns ours
// that outlived their Service.
func FindOrphans(ctx context.Context, client kubernetes.Interface, namespace, managedBy string) (Orphans, error) {
	var out Orphans
	svcs, err := cluster.Reader{Client: client}.Services(ctx, namespace, "")
	if err != nil {
		return out, fmt.Errorf("list services: %w", err)
	}
	byKey := map[string]*corev1.Service{}
	for _, s := range svcs {
		byKey[s.Namespace+"/"+s.Name] = s
	}
	lookup := func(ns, name string) *corev1.Service { return byKey[ns+"/"+name] }
	ours, err := ourSlices(ctx, client, namespace, managedBy)
	if err != nil {
		return out, fmt.Errorf("list endpointslices: %w", err)
	}
	out.Slices, out.SlicesSeen = explain.Orphans(ours, managedBy, lookup), len(ours)
	eps, err := ourEndpoints(ctx, client, namespace, managedBy)
	if err != nil {
		return out, fmt.Errorf("list endpoints: %w", err)
	}
	out.Endpoints, out.EndpointsSeen = explain.EndpointsOrphans(eps, managedBy, lookup), len(eps)
	return out, nil
}

// ourSlices lists the slices carrying our managed-by value, selected by
// label on the server.
func ourSlices(ctx context.Context, client kubernetes.Interface, namespace, managedBy string) ([]*discovery.EndpointSlice, error) {
	return listOurs[*discovery.EndpointSlice](ctx, labels.Set{discovery.LabelManagedBy: managedBy}.String(),
		func(o metav1.ListOptions) (runtime.Object, error) {
			return client.DiscoveryV1().EndpointSlices(namespace).List(ctx, o)
		})
}

// listOurs lists every page of a label-selected list (client-go's pager:
// it falls back to one full list when a continue token expires).
func listOurs[T runtime.Object](ctx context.Context, selector string, list func(metav1.ListOptions) (runtime.Object, error)) ([]T, error) {
	p := pager.New(pager.SimplePageFunc(list))
	p.PageSize = cluster.PageSize
	var out []T
	err := p.EachListItem(ctx, metav1.ListOptions{LabelSelector: selector}, func(o runtime.Object) error {
		out = append(out, o.(T))
		return nil
	})
	return out, err
}

// Prune deletes the orphans, namespace by namespace, each delete with the
// resourceVersion and UID read as preconditions: a slice rewritten since
// (by a sync that found its Service again) is kept and reported as a
// conflict. apply refuses any slice of another managed-by value.
func Prune(ctx context.Context, client kubernetes.Interface, orphans []explain.Orphan, write apply.Options) (apply.Result, error) {
	byNS := map[string][]*discovery.EndpointSlice{}
	var order []string
	for _, o := range orphans {
		ns := o.Slice.Namespace
		if byNS[ns] == nil {
			order = append(order, ns)
		}
		byNS[ns] = append(byNS[ns], o.Slice)
	}
	var total apply.Result
	for _, ns := range order {
		sortSlices(byNS[ns])
		res, err := apply.Apply(ctx, client.DiscoveryV1().EndpointSlices(ns), &reconcile.Plan{Delete: byNS[ns]}, write)
		total.Add(res)
		if err != nil {
			return total, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return total, nil
}

// Pruned is what PruneAll deleted. SlicesErr stops it before any Endpoints
// object is tried; EndpointsErr is the first Endpoints delete that failed.
type Pruned struct {
	Slices                  []*discovery.EndpointSlice
	Endpoints               []*corev1.Endpoints
	SlicesErr, EndpointsErr error
}

// Err is the failure that stopped PruneAll, if any.
func (p Pruned) Err() error {
	if p.SlicesErr != nil {
		return p.SlicesErr
	}
	return p.EndpointsErr
}

// PruneAll deletes what FindOrphans found: the slices (Prune), then, if
// they all went, the Endpoints objects (PruneEndpoints). Nothing found,
// nothing is sent.
func PruneAll(ctx context.Context, client kubernetes.Interface, found Orphans, write apply.Options) Pruned {
	var out Pruned
	if len(found.Slices) > 0 {
		res, err := Prune(ctx, client, found.Slices, write)
		if out.Slices, out.SlicesErr = res.Deleted, err; err != nil {
			return out
		}
	}
	if len(found.Endpoints) > 0 {
		out.Endpoints, out.EndpointsErr = PruneEndpoints(ctx, client, found.Endpoints, write)
	}
	return out
}
