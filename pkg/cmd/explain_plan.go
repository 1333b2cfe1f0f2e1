package cmd

import (
	"context"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// plan is explain's planning step, syncer's one planner choice: offline
// (--local) there is no Endpoints object to mirror from (a nil lookup).
func (o *ExplainOptions) plan(ctx context.Context, in reconcile.Input) (*reconcile.Plan, error) {
	var lookup syncer.EndpointsLookup
	if !o.Local {
		client, err := o.Clientset()
		if err != nil {
			return nil, err
		}
		lookup = syncer.GetEndpoints(client)
	}
	return judge.PlanService(ctx, lookup, in, o.Plan.options())
}
