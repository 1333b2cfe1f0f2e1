package cmd

import (
	"context"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
)

// WatchFlags are sync's --watch flags.
type WatchFlags struct {
	Watch           bool
	BatchPeriod     time.Duration
	SummaryInterval time.Duration
	Workers         int
}

func addWatchFlags(cmd *cobra.Command, w *WatchFlags) {
	cmd.Flags().BoolVarP(&w.Watch, "watch", "w", false, "Keep the slices current until interrupted, as the controller would (one line per write)")
	cmd.Flags().DurationVar(&w.BatchPeriod, "batch-period", 0, "With --watch: wait this long after a Pod change before syncing its Services, to write churn once (as kube-controller-manager's --endpointslice-updates-batch-period)")
	cmd.Flags().DurationVar(&w.SummaryInterval, "summary-interval", time.Minute, "With --watch: print a summary line this often (0 for never)")
	cmd.Flags().IntVar(&w.Workers, "concurrent-syncs", 5, "With --watch: Services synced at once (as kube-controller-manager's --concurrent-service-endpoint-syncs)")
}

func (o *SyncOptions) validateWatch() error {
	w := o.WatchFlags
	if !w.Watch {
		if o.Webhook.Addr != "" || o.Webhook.CertFile != "" || o.Webhook.KeyFile != "" {
			return usageError("--webhook-addr and the TLS flags serve the webhook from the watch loop: add --watch, or run 'kubectl slices webhook'")
		}
		return nil
	}
	if err := o.Webhook.validate(false); err != nil {
		return err
	}
	switch {
	case o.DryRun != apply.DryRunNone:
		return usageError("--watch writes; it cannot be combined with --dry-run")
	case o.Output != "" && o.Output != "json":
		return usageError("with --watch, -o may only be json (one object per line)")
	case w.BatchPeriod < 0 || w.SummaryInterval < 0:
		return usageError("--batch-period and --summary-interval must not be negative")
	case w.Workers < 1:
		return usageError("--concurrent-syncs must be at least 1")
	}
	return nil
}

// runWatch keeps the selected Services' slices current until ctx is done.
// Targets are the same as one-shot sync's, kept as a filter: names in the
// namespace, -l by label, --all every Service (of every namespace with -A).
func (o *SyncOptions) runWatch(ctx context.Context) error {
	// main tunes the GC for a short-lived run (collect rarely, up to 2 GiB);
	// a long-running cache should hold little more than it keeps: GOGC=50
	// lets the heap grow half its live size between collections (make
	// bench-watch: 20,000 Pods cached; GOGC=100 measured 244 MiB resident).
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
	report := controller.NewReporter(o.Out, o.ErrOut, o.Output == "json")
	client, err := o.clientsetWrapped(report.WrapTransport)
	if err != nil {
		return err
	}
	ns, err := o.Namespace()
	if err != nil {
		return err
	}
	opts := controller.Options{
		Namespace:       ns,
		Selector:        labels.Everything(),
		Plan:            o.Plan.options(),
		Write:           apply.Options{ManagedBy: o.Plan.ManagedBy, FieldManager: o.FieldManager, DryRun: apply.DryRunNone, Workers: o.Workers},
		BatchPeriod:     o.WatchFlags.BatchPeriod,
		Workers:         o.WatchFlags.Workers,
		SummaryInterval: o.WatchFlags.SummaryInterval,
		Report:          report,
	}
	if o.AllNamespaces {
		opts.Namespace = metav1.NamespaceAll
	}
	names, err := normalizeArgs(o.args)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		opts.Names = map[string]bool{}
		for _, n := range names {
			opts.Names[ns+"/"+n[len("services/"):]] = true
		}
		opts.Namespace = ns
	}
	if o.Targets.Selector != "" {
		if opts.Selector, err = labels.Parse(o.Targets.Selector); err != nil {
			return usageError("invalid selector %q: %v", o.Targets.Selector, err)
		}
	}
	if o.Webhook.Addr == "" {
		if err := controller.New(client, opts).Run(ctx); err != nil {
			return describe(ns, "", err)
		}
		return nil
	}
	return o.runWatchWithWebhook(ctx, client, opts)
}

// runWatchWithWebhook runs the watch loop and the admission webhook in one
// process: the webhook answers from the loop's cache once it has filled.
// Either failing stops both.
func (o *SyncOptions) runWatchWithWebhook(ctx context.Context, client kubernetes.Interface, opts controller.Options) error {
	managers := []string{"kubectl-slices"}
	if o.FieldManager != "kubectl-slices" {
		managers = append(managers, o.FieldManager)
	}
	srv, err := o.Webhook.server(o.RootOptions, o.Plan, managers)
	if err != nil {
		return err
	}
	opts.Synced = func(c *cluster.Cache) { srv.synced(c, opts.Namespace) }
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := controller.New(client, opts).Run(gctx); err != nil {
			return describe(opts.Namespace, "", err)
		}
		return nil
	})
	g.Go(func() error { return srv.run(gctx) })
	return g.Wait()
}
