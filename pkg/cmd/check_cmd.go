package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/lifecycle"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
)

// CheckOptions are check's typed options.
type CheckOptions struct {
	*RootOptions
	Plan      PlanFlags
	Output    string
	namespace string
}

func newCheckCommand(root *RootOptions) *cobra.Command {
	o := &CheckOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:     "check [-n NAMESPACE | -A]",
		Short:   "Audit every Service's EndpointSlices and print the command that repairs each finding",
		Long:    help.Text("check.long"),
		Example: help.Text("check.example"),
		Args:    cobra.NoArgs,
		RunE:    runCommand(o),
	}
	addPlanFlags(cmd, &o.Plan)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete resolves the namespace: -n's, the kubeconfig's, or all with -A.
func (o *CheckOptions) Complete(*cobra.Command, []string) error {
	var err error
	o.namespace, err = o.scopeNamespace()
	return err
}

// Validate checks the flags before anything is read.
func (o *CheckOptions) Validate() error {
	if err := args.Output(o.Output, "", "json", "yaml"); err != nil {
		return err
	}
	return o.Plan.validate()
}

// Run audits and prints; findings exit 1.
func (o *CheckOptions) Run(ctx context.Context) error {
	client, err := o.Clientset()
	if err != nil {
		return err
	}
	ns := o.namespace
	// A progress line on a terminal, from the first Service judged.
	bar := progress.NewLazy(o.ErrOut)
	report, err := lifecycle.AuditWith(ctx, client, ns, o.Plan.options(), bar.Step)
	bar.Done()
	if err != nil {
		if ctx.Err() != nil {
			return exit.FromSignal(ctx)
		}
		return exit.Describe(ns, "", err)
	}
	if err := printers.CheckOutput(o.Out, o.ErrOut, printers.StyleFor(o.Color, o.Out), o.Output, report); err != nil {
		return err
	}
	return exit.ChangesIf(!report.Healthy)
}
