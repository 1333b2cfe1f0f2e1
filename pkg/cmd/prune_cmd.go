package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/lifecycle"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// PruneOptions are prune's typed options.
type PruneOptions struct {
	*RootOptions
	ManagedBy string
	DryRun    apply.DryRun
	namespace string
	// Force prunes under a --managed-by value that slices kubectl-slices
	// did not write also carry.
	Force bool
}

func newPruneCommand(root *RootOptions) *cobra.Command {
	o := &PruneOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:     "prune [-n NAMESPACE | -A]",
		Short:   "Delete EndpointSlices and Endpoints of kubectl-slices that outlived their Service",
		Long:    help.Text("prune.long"),
		Example: help.Text("prune.example"),
		Args:    cobra.NoArgs,
		RunE:    runCommand(o),
	}
	cmd.Flags().StringVar(&o.ManagedBy, "managed-by", reconcile.DefaultManagedBy, "The managed-by value of the slices to prune")
	addDryRunFlag(cmd, &o.DryRun, "deletes", "each delete")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Prune even when slices kubectl-slices did not write carry --managed-by")
	return cmd
}

// Complete resolves the namespace: -n's, the kubeconfig's, or all with -A.
func (o *PruneOptions) Complete(*cobra.Command, []string) error {
	var err error
	o.namespace, err = o.scopeNamespace()
	return err
}

// Validate checks the flags before anything is read.
func (o *PruneOptions) Validate() error {
	if err := args.DryRun(o.DryRun); err != nil {
		return err
	}
	if err := args.ManagedBy(o.ManagedBy); err != nil {
		return err
	}
	if args.ForceNeeded(o.ManagedBy) != nil {
		return exit.Usagef("prune deletes kubectl-slices' own slices: --managed-by must not name kube-controller-manager's value %q", o.ManagedBy)
	}
	return nil
}

// Run lists what goes and deletes it.
func (o *PruneOptions) Run(ctx context.Context) error {
	client, err := o.Clientset()
	if err != nil {
		return err
	}
	ns := o.namespace
	fail := func(err error) error {
		if ctx.Err() != nil {
			return exit.FromSignal(ctx)
		}
		return exit.Describe(ns, "", err)
	}
	if !o.Force {
		if err := o.refuseForeign(ctx, client, o.ManagedBy, apply.FieldManager); err != nil {
			return err
		}
	}
	found, err := lifecycle.FindOrphans(ctx, client, ns, o.ManagedBy)
	if err != nil {
		return fail(err)
	}
	write := apply.Options{ManagedBy: o.ManagedBy, DryRun: o.DryRun, Workers: apply.DefaultWorkers, Grace: apply.DefaultGrace}
	pruned := lifecycle.PruneAll(ctx, client, found, write)
	printers.Prune(o.Out, o.ErrOut, printers.StyleFor(o.Color, o.Out), printers.PruneReport{
		Slices: found.Slices, SlicesSeen: found.SlicesSeen, Endpoints: found.Endpoints, EndpointsSeen: found.EndpointsSeen,
		DeletedSlices: pruned.Slices, DeletedEndpoints: pruned.Endpoints, SlicesFailed: pruned.SlicesErr != nil, Failed: pruned.Err() != nil,
		ManagedBy: o.ManagedBy, DryRun: printers.DryRunSuffix(o.DryRun)})
	if err := pruned.Err(); err != nil {
		return fail(err)
	}
	return nil
}
