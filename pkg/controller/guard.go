package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// errStale: the cache has not yet seen our last writes for the Service.
var errStale = errors.New("the cache has not yet seen our own writes")

// guarded is the cache as a syncer.Source that refuses to plan from slices
// older than our own writes.
type guarded struct {
	*cluster.Cache
	slices    *sliceTracker
	key       string
	managedBy string
}

func (g guarded) Load(ctx context.Context, svc *corev1.Service) (reconcile.Input, error) {
	in, err := g.Cache.Load(ctx, svc)
	if err == nil && g.slices.Stale(g.key, ours(in.Slices, g.managedBy)) {
		return in, errStale
	}
	return in, err
}

// ours keeps our live slices of a Service, without those being deleted:
// those of every value a run under managedBy writes.
func ours(all []*discovery.EndpointSlice, managedBy string) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, s := range all {
		if reconcile.IsOurs(s.Labels[discovery.LabelManagedBy], managedBy) && s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	return out
}
