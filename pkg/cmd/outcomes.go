package cmd

import (
	"fmt"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// The exit of a run over several Services is decided here, beside the
// commands that make such runs (sync, release), and not in pkg/exit: exit
// sits below every package that fails, so it knows no syncer.Outcome.

// described words each failure as the one line a user sees (exit.Describe).
func described(outs []syncer.Outcome) []syncer.Outcome {
	out := make([]syncer.Outcome, len(outs))
	for i, o := range outs {
		if o.Err != nil {
			o.Err = exit.Describe(o.Namespace, o.Name, o.Err)
		}
		out[i] = o
	}
	return out
}

// forOutcomes is the exit of a run over several Services, whose failures
// were printed: all good → nil; some failed, some succeeded → Changes; all
// failed → the first failure's own code.
func forOutcomes(runs []syncer.Outcome) error {
	failed, first := 0, error(nil)
	for _, r := range runs {
		if r.Err != nil {
			failed++
			if first == nil {
				first = r.Err
			}
		}
	}
	switch {
	case failed == 0:
		return nil
	case failed < len(runs):
		return &exit.Error{Code: exit.Changes, Err: fmt.Errorf("%d of %d Services failed", failed, len(runs))}
	}
	return &exit.Error{Code: exit.Code(first), Err: exit.ErrPrinted}
}
