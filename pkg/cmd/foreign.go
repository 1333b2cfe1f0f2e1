package cmd

import (
	"context"
	"errors"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/lifecycle"
)

// refuseForeign runs lifecycle.CheckForeign over the run's scope (-n's
// namespace, or every one with -A) before anything is written. A refusal is
// a usage error (exit 2), as args.ForceNeeded's: the flags name another tool's
// value, and --force is the answer.
func (o *RootOptions) refuseForeign(ctx context.Context, client kubernetes.Interface, managedBy, fieldManager string) error {
	ns, err := o.scopeNamespace()
	if err != nil {
		return err
	}
	err = lifecycle.CheckForeign(ctx, client, ns, managedBy, fieldManager)
	var fe *lifecycle.ForeignError
	switch {
	case errors.As(err, &fe):
		return &exit.Error{Code: exit.Usage, Err: fe}
	case err != nil && ctx.Err() != nil:
		return exit.FromSignal(ctx)
	case err != nil:
		return &exit.Error{Code: exit.Code(err), Err: err}
	}
	return nil
}
