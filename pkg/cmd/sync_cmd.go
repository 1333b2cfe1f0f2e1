package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
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
	WatchFlags    WatchFlags
	Leader        LeaderFlags
	Webhook       WebhookFlags
	args          []string
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
	var dryRun string
	cmd := &cobra.Command{
		Use:   "sync (svc/NAME ... | -l SELECTOR | --all)",
		Short: "Write a Service's EndpointSlices as kube-controller-manager would",
		Long: `Plan each Service's EndpointSlices from the Pods its selector matches, exactly as
kube-controller-manager's EndpointSlice controller does, and write them under
endpointslice.kubernetes.io/managed-by: kubectl-slices. Slices of any other manager are
never modified. A second sync of an unchanged cluster writes nothing.

Where kube-controller-manager's own slices for a Service exist and publish exactly the
desired endpoints, sync writes nothing for it and says so (--force writes anyway); when
slices of ours are also present it points to 'kubectl slices release', which hands them
back.

` + exitCodeHelp,
		Example: `  # Repair one Service whose endpoints are missing
  kubectl slices sync svc/web -n shop

  # See what would be written, validated by the API server, without writing
  kubectl slices sync svc/web --dry-run=server -o yaml

  # Every Service labelled tier=frontend, in all namespaces
  kubectl slices sync -l tier=frontend -A

  # Keep every Service of a namespace current until interrupted
  kubectl slices sync --all -n shop --watch

  # In a cluster, as one of several replicas: one leads and writes, the others stand by;
  # probes and Prometheus metrics on :8080
  kubectl slices sync --all -A --watch --leader-elect --health-addr :8080`,
		ValidArgsFunction: root.completeServices,
		RunE: func(c *cobra.Command, args []string) error {
			o.args, o.DryRun, o.changed = args, apply.DryRun(dryRun), c.Flags().Changed
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	addTargetFlags(cmd, &o.Targets)
	addPlanFlags(cmd, &o.Plan)
	addWatchFlags(cmd, &o.WatchFlags)
	addLeaderFlags(cmd, &o.Leader)
	addWebhookFlags(cmd, &o.Webhook)
	cmd.Flags().StringVar(&dryRun, "dry-run", "none", `"none" writes; "client" sends nothing; "server" sends every write with dryRun=All`)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Print what was (or would be) written: json, yaml or name")
	cmd.Flags().StringVar(&o.FieldManager, "field-manager", apply.FieldManager, "Field manager recorded on written slices")
	cmd.Flags().BoolVar(&o.Force, "force", false, "Write even where kube-controller-manager's slices are current; allow --managed-by to name one of its own values")
	cmd.Flags().BoolVar(&o.WithEndpoints, "with-endpoints", false, "Also write each Service's v1 Endpoints object as kube-controller-manager's Endpoints controller would (only when absent or written by kubectl-slices)")
	cmd.Flags().IntVar(&o.Workers, "write-concurrency", 16, "Writes in flight at once for one Service")
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml", "name"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Validate checks every flag before anything is read.
func (o *SyncOptions) Validate() error {
	switch o.DryRun {
	case apply.DryRunNone, apply.DryRunClient, apply.DryRunServer:
	default:
		return usageError(`--dry-run must be "none", "client" or "server", got %q`, o.DryRun)
	}
	switch o.Output {
	case "", "json", "yaml", "name":
	default:
		return usageError("-o must be json, yaml or name, got %q", o.Output)
	}
	if o.Workers < 1 {
		return usageError("--write-concurrency must be at least 1")
	}
	if err := o.validateWatch(); err != nil {
		return err
	}
	if err := o.Plan.validate(); err != nil {
		return err
	}
	if !o.Force {
		if err := forceNeeded(o.Plan.ManagedBy); err != nil {
			return err
		}
	}
	return o.Targets.validate(o.args)
}

// Run syncs each selected Service; one failure does not stop the others.
func (o *SyncOptions) Run(ctx context.Context) error {
	defer reportRequests(o.ErrOut)
	if o.WatchFlags.Watch {
		return o.runWatch(ctx)
	}
	client, targets, err := o.connect(ctx, o.Targets, o.args)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintln(o.ErrOut, "No Services selected.")
		return nil
	}
	write := &apply.Options{ManagedBy: o.Plan.ManagedBy, FieldManager: o.FieldManager, DryRun: o.DryRun, Workers: o.Workers}
	errStyle := printers.StyleFor(o.Color, o.ErrOut)
	step, done := printers.Progress(o.ErrOut)
	if len(targets) == 1 {
		step = func(int, int, string) {}
	}
	var hold holdFunc
	if !o.Force {
		hold = holdWhereCurrent(o.Plan.ManagedBy)
	}
	runs := runServices(ctx, client, targets, o.AllNamespaces, o.Plan, write, hold, func(i int, what string) { step(i, len(targets), what) })
	done()
	var written []printers.Written
	var outcomes []printers.Outcome
	var interruptedErr error
	if ctx.Err() != nil {
		// Interrupted: report the Services done, and what was written for
		// those the signal cut short, not their failures.
		interruptedErr = interrupted(ctx)
		finished := runs[:0:0]
		for _, run := range runs {
			if run.Err == nil {
				finished = append(finished, run)
				continue
			}
			if r := run.Result; r.Writes() > 0 {
				fmt.Fprintf(o.ErrOut, "service %s/%s: interrupted after %d created, %d updated, %d deleted\n",
					run.Namespace, run.Name, len(r.Created), len(r.Updated), len(r.Deleted))
				written = append(written, writtenObjects(r)...)
			}
		}
		runs = finished
	}
	for _, run := range runs {
		if run.Plan != nil {
			printers.Warnings(o.ErrOut, errStyle, run.Plan)
		}
		out := printers.Outcome{Namespace: run.Namespace, Name: run.Name, Plan: run.Plan, Err: run.Err,
			Created: len(run.Result.Created), Updated: len(run.Result.Updated), Deleted: len(run.Result.Deleted), Held: run.Held}
		if o.DryRun != apply.DryRunNone {
			out.DryRun = string(o.DryRun)
		}
		out.Written = writtenObjects(run.Result)
		outcomes = append(outcomes, out)
		written = append(written, out.Written...)
	}
	// With -o the objects own stdout, so the summary goes to stderr.
	summaryOut, style := o.Out, printers.StyleFor(o.Color, o.Out)
	if o.Output != "" {
		summaryOut, style = o.ErrOut, errStyle
	}
	printers.Summary(summaryOut, style, outcomes)
	if o.WithEndpoints && interruptedErr == nil {
		// After the slices, each Service's legacy Endpoints object, from the
		// Pods its slices were planned from.
		epRuns := make([]endpointsRun, len(runs))
		for i, run := range runs {
			epRuns[i] = syncEndpoints(ctx, client, run, o.Plan.ManagedBy, *write)
		}
		runs = endpointsOutcome(summaryOut, o.ErrOut, style, errStyle, runs, epRuns, o.DryRun)
	}
	printers.Failures(o.ErrOut, errStyle, outcomes)
	if o.Output != "" {
		if err := printers.Objects(o.Out, o.Output, dryRunSuffix(o.DryRun), written); err != nil {
			return err
		}
	}
	if interruptedErr != nil {
		return interruptedErr
	}
	return exitFor(runs)
}

func writtenObjects(r apply.Result) []printers.Written {
	var out []printers.Written
	for _, s := range r.Created {
		out = append(out, printers.Written{Slice: s, Operation: "created"})
	}
	for _, s := range r.Updated {
		out = append(out, printers.Written{Slice: s, Operation: "configured"})
	}
	for _, s := range r.Deleted {
		out = append(out, printers.Written{Slice: s, Operation: "deleted"})
	}
	return out
}

func dryRunSuffix(d apply.DryRun) string {
	switch d {
	case apply.DryRunClient:
		return " (dry run)"
	case apply.DryRunServer:
		return " (server dry run)"
	}
	return ""
}
