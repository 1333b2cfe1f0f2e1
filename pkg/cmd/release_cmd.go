package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
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
	args      []string
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
	var dryRun, wait string
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
		RunE: func(c *cobra.Command, args []string) error {
			o.args, o.DryRun = args, apply.DryRun(dryRun)
			if wait != "" {
				d, err := time.ParseDuration(wait)
				if err != nil || d <= 0 {
					return usageError("--wait must be a positive duration such as 90s or 5m, got %q", wait)
				}
				o.Wait = d
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	addTargetFlags(cmd, &o.Targets)
	cmd.Flags().StringVar(&o.ManagedBy, "managed-by", reconcile.DefaultManagedBy, "The managed-by value of the slices to hand back")
	cmd.Flags().StringVar(&dryRun, "dry-run", "none", `"none" deletes; "client" sends nothing; "server" sends each delete with dryRun=All`)
	cmd.Flags().BoolVar(&o.Force, "force", false, "Delete our slices even when kube-controller-manager's differ from them or are missing, or when slices kubectl-slices did not write carry --managed-by")
	cmd.Flags().StringVar(&wait, "wait", "", "Wait until kube-controller-manager's slices publish what ours do (alone: 5m; or a duration)")
	cmd.Flags().Lookup("wait").NoOptDefVal = "5m"
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Validate checks the flags before anything is read.
func (o *ReleaseOptions) Validate() error {
	if err := validateDryRun(o.DryRun); err != nil {
		return err
	}
	if o.ManagedBy == "" {
		return usageError("--managed-by must not be empty")
	}
	if err := forceNeeded(o.ManagedBy); err != nil {
		return usageError("release hands slices back to kube-controller-manager: --managed-by must name kubectl-slices' own value, not %q", o.ManagedBy)
	}
	return o.Targets.validate(o.args)
}

// Run releases each selected Service, several at once.
func (o *ReleaseOptions) Run(ctx context.Context) error {
	client, targets, err := o.connect(ctx, o.Targets, o.args)
	if err != nil {
		return err
	}
	if !o.Force {
		if err := o.refuseTakeover(ctx, client, o.ManagedBy, apply.FieldManager); err != nil {
			return err
		}
	}
	opts := lifecycle.ReleaseOptions{Force: o.Force, Wait: o.Wait, Poll: releasePoll,
		Write: apply.Options{ManagedBy: o.ManagedBy, FieldManager: apply.FieldManager, DryRun: o.DryRun, Workers: apply.DefaultWorkers}}
	svcs := make([]*corev1.Service, len(targets))
	for i, t := range targets {
		svcs[i] = t.Service // nil when not found
	}
	outs := lifecycle.ReleaseAll(ctx, client, svcs, opts)
	if ctx.Err() != nil {
		return interrupted(ctx)
	}
	st, errStyle := printers.StyleFor(o.Color, o.Out), printers.StyleFor(o.Color, o.ErrOut)
	var runs []syncer.Outcome
	refused, released, untouched := 0, 0, 0
	for i, t := range targets {
		run := syncer.Outcome{Namespace: t.Namespace, Name: t.Name}
		out := outs[i]
		switch {
		case t.Err != nil:
			run.Err = describe(t.Namespace, t.Name, t.Err)
		case out.Err != nil:
			run.Err = describe(t.Namespace, t.Name, out.Err)
		case out.Endpoints.Err != nil:
			run.Err = describe(t.Namespace, t.Name, out.Endpoints.Err)
		}
		if run.Err != nil {
			runs = append(runs, run)
			continue
		}
		switch {
		case out.Refused != "":
			refused++
			fmt.Fprintf(o.ErrOut, "%s service %s/%s not released: %s\n", errStyle.Yellow("refused:"), t.Namespace, t.Name, out.Refused)
		case len(out.Judgement.Ours) == 0:
			if !out.Endpoints.Ours {
				untouched++
			}
			if len(o.args) > 0 {
				fmt.Fprintf(o.Out, "%s: no slices of %s to release\n", st.Bold("service "+t.Namespace+"/"+t.Name), o.ManagedBy)
			}
		default:
			released++
			printers.Released(o.Out, st, out, dryRunSuffix(o.DryRun))
		}
		if ep := out.Endpoints; ep.Refused != "" {
			if out.Refused == "" {
				refused++
			}
			fmt.Fprintf(o.ErrOut, "%s endpoints %s/%s not released: %s\n", errStyle.Yellow("refused:"), t.Namespace, t.Name, ep.Refused)
		} else if ep.Ours || (ep.TakenOver && len(o.args) > 0) {
			if ep.Ours && len(out.Judgement.Ours) == 0 && out.Refused == "" {
				released++
			}
			printers.ReleasedEndpoints(o.Out, st, t.Namespace, t.Name, ep, dryRunSuffix(o.DryRun))
		}
		runs = append(runs, run)
	}
	printers.Failures(o.ErrOut, errStyle, runs)
	if len(o.args) == 0 {
		fmt.Fprintf(o.ErrOut, "%d released, %d refused, %d without slices of %s.\n", released, refused, untouched, o.ManagedBy)
	}
	if err := exitFor(runs); err != nil {
		return err
	}
	if refused > 0 {
		return &ExitError{Code: ExitChanges, Err: errAlreadyPrinted}
	}
	return nil
}
