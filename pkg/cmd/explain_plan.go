package cmd

import (
	"context"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// plan is explain's planning step: offline (--local) there is no Endpoints
// object to mirror from, so only pkg/reconcile plans.
func (o *ExplainOptions) plan(ctx context.Context, in reconcile.Input) (*reconcile.Plan, error) {
	if o.Local {
		return reconcile.Compute(in, o.Plan.options())
	}
	client, err := o.Clientset()
	if err != nil {
		return nil, err
	}
	return syncer.PlanService(ctx, syncer.GetEndpoints(client), in, o.Plan.options())
}
