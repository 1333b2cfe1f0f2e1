package cmd

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
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
		return usageError("--max-endpoints-per-slice must be between 1 and %d, got %d", reconcile.MaxEndpointsPerSliceLimit, p.MaxEndpoints)
	}
	return validateManagedBy(p.ManagedBy)
}

// validateManagedBy checks a --managed-by value as the API server checks a
// label value, so a bad one is a usage error before any request.
func validateManagedBy(v string) error {
	if v == "" {
		return usageError("--managed-by must not be empty")
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return usageError("--managed-by %q is not a valid label value: %s", v, errs[0])
	}
	return nil
}

// forceNeeded explains why writing under the controllers' own managed-by
// values needs --force.
func forceNeeded(managedBy string) error {
	who := map[string]string{
		reconcile.ControllerManagedBy: "kube-controller-manager's EndpointSlice controller",
		reconcile.MirroringManagedBy:  "kube-controller-manager's EndpointSlice mirroring controller",
	}[managedBy]
	if who == "" {
		return nil
	}
	return usageError("refusing to write under managed-by %q: %s owns that value and would fight kubectl-slices over the slices; use the default (%s), or pass --force if that controller is off for good",
		managedBy, who, reconcile.DefaultManagedBy)
}

func countOutcome(runs []syncer.Outcome) (ok, failed int) {
	for _, r := range runs {
		if r.Err != nil {
			failed++
		} else {
			ok++
		}
	}
	return ok, failed
}

// exitFor: all good → 0; some failed, some synced → 1; all failed → the
// first failure's own code.
func exitFor(runs []syncer.Outcome) error {
	ok, failed := countOutcome(runs)
	if failed == 0 {
		return nil
	}
	for _, r := range runs {
		if r.Err != nil {
			if ok > 0 {
				return &ExitError{Code: ExitChanges, Err: fmt.Errorf("%d of %d Services failed", failed, len(runs))}
			}
			return &ExitError{Code: ExitCode(r.Err), Err: errAlreadyPrinted}
		}
	}
	return nil
}

// errAlreadyPrinted marks an error whose message was already shown.
var errAlreadyPrinted = errors.New("")

// described words each failure as the one line a user sees (describe).
func described(outs []syncer.Outcome) []syncer.Outcome {
	out := make([]syncer.Outcome, len(outs))
	for i, o := range outs {
		if o.Err != nil {
			o.Err = describe(o.Namespace, o.Name, o.Err)
		}
		out[i] = o
	}
	return out
}
