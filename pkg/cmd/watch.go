package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/transport"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
)

// WatchFlags are sync's --watch flags.
type WatchFlags = daemon.LoopSettings

func addWatchFlags(cmd *cobra.Command, w *WatchFlags) {
	cmd.Flags().BoolVarP(&w.Watch, "watch", "w", false, "Keep the slices current until interrupted, as the controller would (one line per write)")
	cmd.Flags().DurationVar(&w.BatchPeriod, "batch-period", 0, "With --watch: wait this long after a Pod change before syncing its Services, to write churn once (as kube-controller-manager's --endpointslice-updates-batch-period)")
	cmd.Flags().DurationVar(&w.SummaryInterval, "summary-interval", time.Minute, "With --watch: print a summary line this often (0 for never)")
	cmd.Flags().IntVar(&w.Workers, "concurrent-syncs", 5, "With --watch: Services synced at once (as kube-controller-manager's --concurrent-service-endpoint-syncs)")
	cmd.Flags().BoolVar(&w.Standby, "standby", false, "With --watch: stand by beside kube-controller-manager; write a Service's slices only once the controller has failed it for --takeover-after, and hand them back when it recovers")
	cmd.Flags().DurationVar(&w.TakeoverAfter, "takeover-after", daemon.DefaultTakeoverAfter, "With --standby: how long the controller's slices may differ from the desired ones, counted from when the loop observed the change and restarted by the controller's progress, before ours are written")
	cmd.Flags().DurationVar(&w.HandbackHold, "handback-hold", daemon.DefaultHandbackHold, "With --standby: how long the controller's slices must stay current before ours are deleted")
}

// validateWatch checks the flags of the loop (daemon.LoopSettings.ValidateSync);
// each refusal is a usage error.
func (o *SyncOptions) validateWatch() error {
	err := o.WatchFlags.ValidateSync(o.changed, o.Leader, o.Webhook, o.Plan.ManagedBy, o.DryRun != apply.DryRunNone, o.Output)
	if err != nil {
		return exit.Usagef("%v", err)
	}
	return nil
}

// runWatch keeps the selected Services' slices current until ctx is done.
// Targets are the same as one-shot sync's, kept as a filter: names in the
// namespace, -l by label, --all every Service (of every namespace with -A).
func (o *SyncOptions) runWatch(ctx context.Context) error {
	// The first pass over the Services, on a terminal; the loop's lines
	// clear it first so that each starts on a clean line.
	bar := progress.Start(o.ErrOut, 0)
	report := controller.NewReporter(bar.Around(o.Out), bar.Around(o.ErrOut), o.Output == "json")
	// Outermost last: reads wait for the API server (daemon.PatientReads),
	// each attempt is seen by the reporter; under an election, writes go
	// out only while the Lease is known to be ours (daemon.Fence).
	wrap := []transport.WrapperFunc{report.WrapTransport, daemon.PatientReads}
	var fence *daemon.Fence
	if o.Leader.Elect {
		fence = daemon.NewFence(o.Leader.RenewDeadline)
		wrap = append(wrap, fence.Wrap)
	}
	client, err := o.clientsetWrapped(transport.Wrappers(wrap...))
	if err != nil {
		return err
	}
	ns := o.Targets.Namespace
	opts := controller.Options{
		Plan:          o.Plan.options(),
		Write:         apply.Options{ManagedBy: o.Plan.ManagedBy, FieldManager: o.FieldManager, DryRun: apply.DryRunNone, Workers: o.Workers, Grace: o.ShutdownGrace},
		Report:        report,
		WithEndpoints: o.WithEndpoints,
	}
	o.WatchFlags.Apply(&opts, o.Plan.ManagedBy)
	daemon.Scope(&opts, o.Targets)
	if !o.Force {
		opts.BeforeWrites = func(ctx context.Context) error {
			return o.refuseForeign(ctx, client, o.Plan.ManagedBy, o.FieldManager)
		}
	}
	return o.runController(ctx, client, ns, opts, bar, fence)
}

// runController runs the loop with the in-cluster parts the flags ask for:
// the health endpoint, leader election, the webhook from the same cache.
func (o *SyncOptions) runController(ctx context.Context, client kubernetes.Interface, ns string, opts controller.Options, bar *progress.Bar, fence *daemon.Fence) error {
	cfg := daemon.Config{Client: client, Namespace: opts.Namespace, Loop: &opts, HealthAddr: o.Leader.HealthAddr, Log: o.ErrOut, Requests: cluster.RequestsMade, FirstPass: bar}
	if o.Webhook.Addr != "" {
		cfg.Webhook = o.Webhook.LoopWebhook(o.Plan.options(), o.FieldManager)
	}
	if o.Leader.Elect {
		cfg.Lease = o.Leader.Lease(ns) // default: cli-runtime's namespace, the ServiceAccount's in a Pod
		cfg.Lease.Fence = fence
	}
	return exit.Process(ns, opts.Namespace, daemon.RunLoop(ctx, cfg))
}
