package cmd

import (
	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// PlanFlags tune planning; shared by sync, diff and explain.
type PlanFlags struct {
	ManagedBy    string
	MaxEndpoints int
}

// options are the planner's options; syncer.Sync sets the trigger time of
// each write.
func (p PlanFlags) options() reconcile.Options {
	o := reconcile.DefaultOptions()
	o.ManagedBy, o.MaxEndpointsPerSlice = p.ManagedBy, p.MaxEndpoints
	return o
}

func (p PlanFlags) validate() error {
	if p.MaxEndpoints < 1 || p.MaxEndpoints > reconcile.MaxEndpointsPerSliceLimit {
		return exit.Usagef("--max-endpoints-per-slice must be between 1 and %d, got %d", reconcile.MaxEndpointsPerSliceLimit, p.MaxEndpoints)
	}
	return args.ManagedBy(p.ManagedBy)
}
