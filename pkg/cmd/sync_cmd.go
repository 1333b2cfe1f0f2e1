package cmd

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// SyncOptions are sync's typed options.
type SyncOptions struct {
	*RootOptions
	Targets      TargetFlags
	Plan         PlanFlags
	DryRun       apply.DryRun
	Output       string
	FieldManager string
	Force        bool
	// WithEndpoints also writes each Service's legacy v1 Endpoints object.
	WithEndpoints bool
	Workers       int
	// ShutdownGrace is how long writes in flight may finish after a signal.
	ShutdownGrace time.Duration
	WatchFlags    WatchFlags
	Leader        LeaderFlags
	Webhook       WebhookFlags
	// changed reports whether a flag was set on the command line.
	changed func(string) bool
}

func addPlanFlags(cmd *cobra.Command, p *PlanFlags) {
	cmd.Flags().StringVar(&p.ManagedBy, "managed-by", reconcile.DefaultManagedBy, "The endpointslice.kubernetes.io/managed-by value of the slices to plan and write")
	cmd.Flags().IntVar(&p.MaxEndpoints, "max-endpoints-per-slice", reconcile.DefaultMaxEndpointsPerSlice, "Maximum endpoints per EndpointSlice (1..1000), as kube-controller-manager's flag")
}

func addTargetFlags(cmd *cobra.Command, t *TargetFlags) {
	cmd.Flags().StringVarP(&t.Selector, "selector", "l", "", "Select Services by label (e.g. -l app=web)")
	cmd.Flags().BoolVar(&t.All, "all", false, "Select every Service in the namespace (with -A, in every namespace)")
}

func newSyncCommand(root *RootOptions) *cobra.Command {
	o := &SyncOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:               "sync (svc/NAME ... | -l SELECTOR | --all)",
		Short:             "Write a Service's EndpointSlices as kube-controller-manager would",
		Long:              help.Text("sync.long") + exit.Help,
		Example:           help.Text("sync.example"),
		ValidArgsFunction: root.completer().ServiceArgs,
		RunE:              runCommand(o),
	}
	addTargetFlags(cmd, &o.Targets)
	addPlanFlags(cmd, &o.Plan)
	addWatchFlags(cmd, &o.WatchFlags)
	addLeaderFlags(cmd, &o.Leader)
	addWebhookFlags(cmd, &o.Webhook)
	addDryRunFlag(cmd, &o.DryRun, "writes", "every write")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Print what was (or would be) written: json, yaml or name")
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", apply.FieldManager, "Field manager recorded on written slices")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Write even where kube-controller-manager's slices are current; allow --managed-by to name one of its own values")
	cmd.Flags().BoolVar(&o.WithEndpoints, "with-endpoints", false, "Also write each Service's v1 Endpoints object as kube-controller-manager's Endpoints controller would (only when absent or written by kubectl-slices)")
	cmd.Flags().IntVar(&o.Workers, "write-concurrency", apply.DefaultWorkers, "Writes in flight at once for one Service")
	cmd.Flags().DurationVar(&o.ShutdownGrace, "shutdown-grace", apply.DefaultGrace, "On Ctrl-C or SIGTERM no new write starts; writes already sent get this long to finish, so that each is reported")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml", "name"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete normalises the arguments and resolves the namespace.
func (o *SyncOptions) Complete(c *cobra.Command, args []string) error {
	o.changed = c.Flags().Changed
	return o.completeTargets(&o.Targets, args)
}

// Validate checks every flag before anything is read.
func (o *SyncOptions) Validate() error {
	if err := args.DryRun(o.DryRun); err != nil {
		return err
	}
	if err := args.Output(o.Output, "", "json", "yaml", "name"); err != nil {
		return err
	}
	if o.Workers < 1 {
		return exit.Usagef("--write-concurrency must be at least 1")
	}
	if o.ShutdownGrace < 0 {
		return exit.Usagef("--shutdown-grace must not be negative")
	}
	if err := o.validateWatch(); err != nil {
		return err
	}
	if err := o.Plan.validate(); err != nil {
		return err
	}
	if !o.Force {
		if err := args.ForceNeeded(o.Plan.ManagedBy); err != nil {
			return err
		}
	}
	return validateTargets(&o.Targets)
}

// Run syncs each selected Service; one failure does not stop the others.
func (o *SyncOptions) Run(ctx context.Context) error {
	defer cluster.ReportRequests(o.ErrOut)
	if o.WatchFlags.Watch {
		return o.runWatch(ctx)
	}
	client, targets, err := o.connect(ctx, o.Targets)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintln(o.ErrOut, "No Services selected.")
		return nil
	}
	if !o.Force {
		if err := o.refuseForeign(ctx, client, o.Plan.ManagedBy, o.FieldManager); err != nil {
			return err
		}
	}
	write := &apply.Options{ManagedBy: o.Plan.ManagedBy, FieldManager: o.FieldManager, DryRun: o.DryRun, Workers: o.Workers, Grace: o.ShutdownGrace}
	opts := syncer.Options{Plan: o.Plan.options(), Write: write}
	if !o.Force {
		opts.Hold = judge.HoldWhereCurrent(o.Plan.ManagedBy)
	}
	runs := o.syncMany(ctx, client, targets, opts)
	var interrupted error
	if ctx.Err() != nil {
		interrupted = exit.FromSignal(ctx)
	}
	report := printers.NewSyncReport(o.Out, o.ErrOut, o.Color, o.Output, o.DryRun)
	runs, written := report.Slices(runs, interrupted != nil)
	final := runs
	if o.WithEndpoints && interrupted == nil {
		final = o.syncEndpoints(ctx, client, runs, *write, report)
	}
	// The slices' failures, with the writes made before each; an
	// Endpoints failure was said on its own line.
	if err := report.Done(runs, written); err != nil {
		return err
	}
	return cmp.Or(interrupted, forOutcomes(final))
}

// syncEndpoints writes, after the slices, each synced Service's legacy
// Endpoints object from the Pods its slices were planned from, prints a
// line each and returns the outcomes with those failures folded in, so they
// count for the exit code like any other.
func (o *SyncOptions) syncEndpoints(ctx context.Context, client kubernetes.Interface, runs []syncer.Outcome, write apply.Options, report printers.SyncReport) []syncer.Outcome {
	runs = append([]syncer.Outcome(nil), runs...)
	syncer.EndpointsAfter(ctx, client, runs, o.Plan.ManagedBy, write, func(i int, er syncer.EndpointsOutcome) {
		if er.Err != nil {
			runs[i].Err = exit.Describe(runs[i].Namespace, runs[i].Name, er.Err)
		}
		report.Endpoints(runs[i].Namespace, runs[i].Name, er, runs[i].Err)
	})
	return runs
}
