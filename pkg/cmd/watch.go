package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/record"

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
	changed := o.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	if err := validateLeader(changed, o.Leader, w.Watch); err != nil {
		return err
	}
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
	case o.WithEndpoints:
		// The loop keeps slices only: accepting the flag would leave the
		// v1 Endpoints objects unwritten while the user thinks them kept.
		return usageError("--with-endpoints is one-shot: --watch keeps EndpointSlices only; run 'kubectl slices sync --with-endpoints' without --watch")
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
	return o.runController(ctx, client, ns, opts)
}

// runController runs the loop with the in-cluster parts the flags ask for:
// the health endpoint, leader election, events on Services.
func (o *SyncOptions) runController(ctx context.Context, client kubernetes.Interface, ns string, opts controller.Options) error {
	var ctrl *controller.Controller
	opts.Metrics = controller.NewMetrics(func() int { return ctrl.QueueLen() })
	// The webhook's port is bound first: taken, it is a usage error before
	// any request.
	var srv *webhookServer
	if o.Webhook.Addr != "" {
		// One process serves the loop and the admission webhook, which
		// answers from the loop's cache once it has filled.
		managers := []string{"kubectl-slices"}
		if o.FieldManager != "kubectl-slices" {
			managers = append(managers, o.FieldManager)
		}
		var err error
		if srv, err = o.Webhook.server(o.RootOptions, o.Plan, managers); err != nil {
			return err
		}
		if err := srv.listen(); err != nil {
			return err
		}
		defer srv.ln.Close() // if serving never starts; Shutdown closes it otherwise
		opts.Synced = func(c *cluster.Cache) { srv.synced(c, opts.Namespace) }
		opts.GroupPods = true
	}
	// Events on Services for failed syncs, as upstream records them. The
	// recorder drops an Event the API refuses, so without the right say once
	// that there will be none.
	denied, err := deniedVerb(ctx, client, "", "events", opts.Namespace, "", "create", "patch")
	if err != nil {
		return err
	}
	if denied != "" {
		opts.Report.Notice("", "Events are not writable with these credentials (cannot "+denied+" events): failed syncs are logged but not recorded on the Service")
	} else {
		events := record.NewBroadcaster(record.WithContext(ctx))
		defer events.Shutdown()
		events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
		opts.Events = events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubectl-slices"})
	}
	var watchdog *leaderelection.HealthzAdaptor
	var e *election
	if o.Leader.Elect {
		// kube-controller-manager's: the lease may lapse 20 s before
		// /healthz fails.
		watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		leaseNS := o.Leader.Namespace
		if leaseNS == "" {
			leaseNS = ns // cli-runtime's: the ServiceAccount's namespace in a Pod
		}
		var err error
		if e, err = newElection(ctx, client, o.Leader, leaseNS, watchdog, opts.Metrics, opts.Report); err != nil {
			return err
		}
		opts.Leading, opts.Abort = e.Leading, e.Abort
	}
	ctrl = controller.New(client, opts)
	hctx, stopHealth := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHealth()
	if o.Leader.HealthAddr != "" {
		addr, err := serveHealth(hctx, o.Leader.HealthAddr, opts.Metrics.Registry, ctrl.Ready, ctrl.Healthy, watchdog)
		if err != nil {
			return err
		}
		opts.Report.Notice("", "serving /healthz, /readyz and /metrics on "+addr)
	}
	if srv == nil {
		return o.runLoop(ctx, ctrl, e, ns, opts.Namespace)
	}
	// Either failing stops both.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return o.runLoop(gctx, ctrl, e, ns, opts.Namespace) })
	g.Go(func() error { return srv.run(gctx) })
	return g.Wait()
}

// runLoop runs the controller, under the election when there is one.
func (o *SyncOptions) runLoop(ctx context.Context, ctrl *controller.Controller, e *election, ns, scope string) error {
	if e == nil {
		if err := ctrl.Run(ctx); err != nil {
			return watchError(ns, scope, err)
		}
		return nil
	}
	e.Start()
	// Losing the lease stops the loop at once; a signal lets the syncs in
	// flight finish, then the lease is released for a fast hand-over.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.Abort.Done():
			cancel()
		case <-rctx.Done():
		}
	}()
	runErr := ctrl.Run(rctx)
	if e.Release() {
		return &ExitError{Code: ExitAPI, Err: fmt.Errorf("lost the lease %s (not renewed within %v): stopped writing; exiting so that a restart stands by again", e.name, o.Leader.RenewDeadline)}
	}
	if runErr != nil {
		return watchError(ns, scope, runErr)
	}
	return nil
}

// watchError describes an error that stopped the loop. A right it needs
// is missing (checked at start-up, so the informers never retry a
// forbidden list forever): one line naming it and where the RBAC is.
func watchError(ns, scope string, err error) error {
	if !apierrors.IsForbidden(err) {
		return describe(ns, "", err)
	}
	where := "namespace " + scope
	if scope == metav1.NamespaceAll {
		where = "all namespaces"
	}
	return &ExitError{ExitAPI, fmt.Errorf("forbidden: cannot %s in %s; `kubectl slices deploy` prints the RBAC the loop needs",
		forbiddenWhat(err), where)}
}

// forbiddenWhat is "VERB RESOURCE[.GROUP]" of a Forbidden error.
func forbiddenWhat(err error) string {
	what := "access the API"
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		verb := forbiddenVerb(status.Status().Message)
		what = verb + " the request"
		if d := status.Status().Details; d != nil {
			what = verb + " " + d.Kind
			if d.Group != "" {
				what += "." + d.Group
			}
		}
	}
	return what
}
