package cmd

import (
	"cmp"
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/lifecycle"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// ReleaseOptions are release's typed options.
type ReleaseOptions struct {
	*RootOptions
	Targets   TargetFlags
	ManagedBy string
	DryRun    apply.DryRun
	Force     bool
	Wait      time.Duration
	wait      string
}

// releasePoll is how often --wait re-reads a Service's slices.
const releasePoll = 500 * time.Millisecond

func newReleaseCommand(root *RootOptions) *cobra.Command {
	o := &ReleaseOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:               "release (svc/NAME ... | -l SELECTOR | --all) [--wait[=TIMEOUT]]",
		Short:             "Hand a Service's EndpointSlices and Endpoints back to kube-controller-manager",
		Long:              help.Text("release.long"),
		Example:           help.Text("release.example"),
		ValidArgsFunction: root.completer().ServiceArgs,
		RunE:              runCommand(o),
	}
	addTargetFlags(cmd, &o.Targets)
	cmd.Flags().StringVar(&o.ManagedBy, "managed-by", reconcile.DefaultManagedBy, "The managed-by value of the slices to hand back")
	addDryRunFlag(cmd, &o.DryRun, "deletes", "each delete")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Delete our slices even when kube-controller-manager's differ from them or are missing, or when slices kubectl-slices did not write carry --managed-by")
	cmd.Flags().StringVar(&o.wait, "wait", "", "Wait until kube-controller-manager's slices publish what ours do (alone: 5m; or a duration)")
	cmd.Flags().Lookup("wait").NoOptDefVal = "5m"
	return cmd
}

// Complete normalises the arguments, resolves the namespace and parses
// --wait.
func (o *ReleaseOptions) Complete(_ *cobra.Command, argv []string) error {
	var err error
	if o.Wait, err = args.Duration("--wait", o.wait); err != nil {
		return err
	}
	return o.completeTargets(&o.Targets, argv)
}

// Validate checks the flags before anything is read.
func (o *ReleaseOptions) Validate() error {
	if err := args.DryRun(o.DryRun); err != nil {
		return err
	}
	if err := args.ManagedBy(o.ManagedBy); err != nil {
		return err
	}
	if err := args.ForceNeeded(o.ManagedBy); err != nil {
		return exit.Usagef("release hands slices back to kube-controller-manager: --managed-by must name kubectl-slices' own value, not %q", o.ManagedBy)
	}
	return validateTargets(&o.Targets)
}

// Run releases each selected Service, several at once.
func (o *ReleaseOptions) Run(ctx context.Context) error {
	client, targets, err := o.connect(ctx, o.Targets)
	if err != nil {
		return err
	}
	if !o.Force {
		if err := o.refuseForeign(ctx, client, o.ManagedBy, apply.FieldManager); err != nil {
			return err
		}
	}
	opts := lifecycle.ReleaseOptions{Force: o.Force, Wait: o.Wait, Poll: releasePoll,
		Write: apply.Options{ManagedBy: o.ManagedBy, FieldManager: apply.FieldManager, DryRun: o.DryRun, Workers: apply.DefaultWorkers, Grace: apply.DefaultGrace}}
	outs := lifecycle.ReleaseAll(ctx, client, syncer.Services(targets), opts)
	if ctx.Err() != nil {
		return exit.FromSignal(ctx)
	}
	report := printers.ReleaseReport{Out: o.Out, ErrOut: o.ErrOut, St: printers.StyleFor(o.Color, o.Out), ErrSt: printers.StyleFor(o.Color, o.ErrOut),
		Named: len(o.Targets.Names) > 0, ManagedBy: o.ManagedBy, DryRun: printers.DryRunSuffix(o.DryRun)}
	runs, rels := make([]syncer.Outcome, len(targets)), make([]printers.Release, 0, len(targets))
	for i, t := range targets {
		runs[i] = syncer.Outcome{Namespace: t.Namespace, Name: t.Name}
		if err := cmp.Or(t.Err, outs[i].Err, outs[i].Endpoints.Err); err != nil {
			runs[i].Err = exit.Describe(t.Namespace, t.Name, err)
		} else {
			rels = append(rels, releaseView(outs[i]))
		}
	}
	released, refused, untouched := report.Print(rels)
	printers.Failures(o.ErrOut, report.ErrSt, runs)
	if !report.Named {
		report.Summary(released, refused, untouched)
	}
	if err := forOutcomes(runs); err != nil {
		return err
	}
	return exit.ChangesIf(refused > 0)
}

// releaseView is what printers report of a hand-back.
func releaseView(out lifecycle.ReleaseOutcome) printers.Release {
	ep := out.Endpoints
	return printers.Release{Service: out.Service, Judgement: out.Judgement, Deleted: out.Result.Deleted, Waited: out.Waited, Refused: out.Refused,
		Endpoints: printers.EndpointsRelease{Ours: ep.Ours, TakenOver: ep.TakenOver, Disowned: ep.Disowned, Refused: ep.Refused}}
}
