package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// DiffOptions are diff's typed options.
type DiffOptions struct {
	*RootOptions
	Targets TargetFlags
	Plan    PlanFlags
	// Force shows what sync --force would write.
	Force bool
}

func newDiffCommand(root *RootOptions) *cobra.Command {
	o := &DiffOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:               "diff (svc/NAME ... | -l SELECTOR | --all)",
		Short:             "Show what sync would change, as unified diffs",
		Long:              help.Text("diff.long") + exit.Help,
		Example:           help.Text("diff.example"),
		ValidArgsFunction: root.completer().ServiceArgs,
		RunE:              runCommand(o),
	}
	addTargetFlags(cmd, &o.Targets)
	addPlanFlags(cmd, &o.Plan)
	cmd.Flags().BoolVar(&o.Force, "force", false, "Show what sync --force would write, also where kube-controller-manager's slices are current")
	return cmd
}

// Complete normalises the arguments and resolves the namespace.
func (o *DiffOptions) Complete(_ *cobra.Command, args []string) error {
	return o.completeTargets(&o.Targets, args)
}

// Validate checks the flags before anything is read.
func (o *DiffOptions) Validate() error {
	if err := o.Plan.validate(); err != nil {
		return err
	}
	return validateTargets(&o.Targets)
}

// Run prints the diffs; errors take precedence over changes in the exit code.
func (o *DiffOptions) Run(ctx context.Context) error {
	defer cluster.ReportRequests(o.ErrOut)
	client, targets, err := o.connect(ctx, o.Targets)
	if err != nil {
		return err
	}
	// What sync would change: nothing where kube-controller-manager's
	// slices are current, unless --force.
	opts := syncer.Options{Plan: o.Plan.options()}
	if !o.Force {
		opts.Hold = judge.HoldWhereCurrent(o.Plan.ManagedBy)
	}
	runs := o.syncMany(ctx, client, targets, opts)
	if ctx.Err() != nil {
		return exit.FromSignal(ctx)
	}
	changed, firstErr, err := printers.Diffs(o.Out, o.ErrOut, printers.StyleFor(o.Color, o.Out), printers.StyleFor(o.Color, o.ErrOut), runs)
	if err != nil {
		return err
	}
	if firstErr != nil {
		return &exit.Error{Code: exit.Code(firstErr), Err: exit.ErrPrinted}
	}
	return exit.ChangesIf(changed)
}
