package cmd

import (
	"cmp"
	"context"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
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

const releaseExitHelp = `Exit codes:
  0  every selected Service was handed back, or had no slices of kubectl-slices
  1  a hand-back was refused (kube-controller-manager's slices differ or are missing, its
     Endpoints controller has not taken our Endpoints object over, or either did not catch
     up within --wait); nothing was deleted or changed for what was refused
  2  usage error
  3  a Service was not found
  4  the API server refused or failed
  5  our slices kept changing while being deleted
  130  interrupted (Ctrl-C)`

func newReleaseCommand(root *RootOptions) *cobra.Command {
	o := &ReleaseOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:   "release (svc/NAME ... | -l SELECTOR | --all) [--wait[=TIMEOUT]]",
		Short: "Hand a Service's EndpointSlices and Endpoints back to kube-controller-manager",
		Long: `Once kube-controller-manager is back, delete the slices kubectl-slices wrote for a Service,
but only when the controller's own slices for it exist and publish the same endpoints as
ours: the same addresses, conditions (ready, serving, terminating), nodes, zones and ports.
Consumers merge both managers' slices, so deleting ours then changes nothing they see: at
no moment does the Service have fewer ready endpoints than before.

Otherwise release refuses and prints the difference, endpoint by endpoint. --wait re-reads
the slices every 0.5 s until the controller catches up (default 5m, or the given
duration); --force deletes ours anyway. Slices of any other manager are never touched.

The v1 Endpoints object sync --with-endpoints wrote (endpoints.kubernetes.io/managed-by:
kubectl-slices) is never deleted: there is one per Service, and kube-controller-manager's
Endpoints controller takes it over by rewriting it under its own label when it starts or
when the Service's Pods change. release reports it handed back once that happened (--wait
waits for it), and refuses otherwise; --force removes only our label and leaves every
address for the controller to overwrite. An Endpoints object not labelled as ours is never
touched.

` + releaseExitHelp,
		Example: `  # Hand back one Service once kube-controller-manager publishes it again
  kubectl slices release svc/web -n shop

  # Wait up to two minutes for the controller to catch up, then hand back
  kubectl slices release svc/web -n shop --wait=2m

  # Every Service of every namespace; show what would be deleted
  kubectl slices release --all -A --dry-run=client`,
		ValidArgsFunction: root.completeServices,
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
func (o *ReleaseOptions) Complete(_ *cobra.Command, args []string) error {
	if o.wait != "" {
		d, err := time.ParseDuration(o.wait)
		if err != nil || d <= 0 {
			return exit.Usagef("--wait must be a positive duration such as 90s or 5m, got %q", o.wait)
		}
		o.Wait = d
	}
	return o.Targets.complete(o.RootOptions, args)
}

// Validate checks the flags before anything is read.
func (o *ReleaseOptions) Validate() error {
	if err := validateDryRun(o.DryRun); err != nil {
		return err
	}
	if err := validateManagedBy(o.ManagedBy); err != nil {
		return err
	}
	if err := forceNeeded(o.ManagedBy); err != nil {
		return exit.Usagef("release hands slices back to kube-controller-manager: --managed-by must name kubectl-slices' own value, not %q", o.ManagedBy)
	}
	return o.Targets.validate(o.AllNamespaces)
}

// Run releases each selected Service, several at once.
func (o *ReleaseOptions) Run(ctx context.Context) error {
	client, targets, err := o.connect(ctx, o.Targets)
	if err != nil {
		return err
	}
	if !o.Force {
		if err := o.refuseTakeover(ctx, client, o.ManagedBy, apply.FieldManager); err != nil {
			return err
		}
	}
	opts := lifecycle.ReleaseOptions{Force: o.Force, Wait: o.Wait, Poll: releasePoll,
		Write: apply.Options{ManagedBy: o.ManagedBy, FieldManager: apply.FieldManager, DryRun: o.DryRun, Workers: apply.DefaultWorkers, Grace: apply.DefaultGrace}}
	svcs := make([]*corev1.Service, len(targets))
	for i, t := range targets {
		svcs[i] = t.Service // nil when not found
	}
	outs := lifecycle.ReleaseAll(ctx, client, svcs, opts)
	if ctx.Err() != nil {
		return exit.FromSignal(ctx)
	}
	report := printers.ReleaseReport{Out: o.Out, ErrOut: o.ErrOut, St: printers.StyleFor(o.Color, o.Out), ErrSt: printers.StyleFor(o.Color, o.ErrOut),
		Named: len(o.Targets.names) > 0, ManagedBy: o.ManagedBy, DryRun: printers.DryRunSuffix(o.DryRun)}
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
	if err := exit.ForOutcomes(runs); err != nil {
		return err
	}
	if refused > 0 {
		return &exit.Error{Code: exit.Changes, Err: exit.ErrPrinted}
	}
	return nil
}

// releaseView is what printers report of a hand-back.
func releaseView(out lifecycle.ReleaseOutcome) printers.Release {
	ep := out.Endpoints
	return printers.Release{Service: out.Service, Judgement: out.Judgement, Deleted: out.Result.Deleted, Waited: out.Waited, Refused: out.Refused,
		Endpoints: printers.EndpointsRelease{Ours: ep.Ours, TakenOver: ep.TakenOver, Disowned: ep.Disowned, Refused: ep.Refused}}
}
