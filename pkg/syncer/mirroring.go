package syncer

import (
	"context"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// EndpointsLookup is judge.EndpointsLookup, the Endpoints reader a
// MirroringPlanner is built from.
type EndpointsLookup = judge.EndpointsLookup

// MirroringPlanner is judge.PlanService as Sync's planner.
func MirroringPlanner(lookup EndpointsLookup) Planner {
	return func(ctx context.Context, in reconcile.Input, po reconcile.Options) (*reconcile.Plan, error) {
		return judge.PlanService(ctx, lookup, in, po)
	}
}
