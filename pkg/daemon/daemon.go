package daemon

import (
	"context"
	"io"
	"net"
	"runtime/debug"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
)

// Config is what differs between the long-running commands.
type Config struct {
	Client kubernetes.Interface
	// Namespace scopes the cache; "" holds every namespace.
	Namespace string
	// Loop, when set, runs the sync loop with these options (Metrics,
	// Events, Leading and Abort are filled here); nil serves the webhook
	// alone from a read-only cache.
	Loop *controller.Options
	// Lease, when set, holds the loop's writes until this replica leads.
	Lease *Lease
	// HealthAddr, when set, serves /healthz, /readyz and /metrics (loop only).
	HealthAddr string
	// Webhook, when set, serves the admission webhook from the same cache.
	Webhook *Webhook
	// Log receives the webhook's lines; the loop's go through its Reporter.
	Log io.Writer
	// Requests, when set, counts the API requests made so far (-1 when not
	// counted), for the webhook's summary line.
	Requests func() int
	// FirstPass (nil: none) draws the loop's first pass over its Services
	// once the caches are filled; not with a Lease, whose standby may wait
	// long before its first sync. The pass is followed either way: once it
	// is done, its garbage is returned to the OS.
	FirstPass *progress.Bar
}

// Run starts every part the Config asks for and runs them until ctx is
// done or one fails; then writes in flight finish, the Lease is released
// and the informers stop. It tunes the garbage collector for a resident
// cache (tuneGC, CollectWhenQuiet): not main's settings for one-shot runs,
// which let the heap grow to five times what it keeps.
func Run(ctx context.Context, cfg Config) error {
	tuneGC()
	go CollectWhenQuiet(ctx, QuietGCInterval)
	if cfg.Requests == nil {
		cfg.Requests = func() int { return -1 }
	}
	// Ports and certificates first: a mistake there costs no request.
	var srv *webhookServer
	if cfg.Webhook != nil {
		var err error
		if srv, err = listenWebhook(ctx, cfg.Client, *cfg.Webhook, cfg.Log, cfg.Requests); err != nil {
			return err
		}
		defer srv.ln.Close() // if serving never starts; Shutdown closes it otherwise
	}
	var healthLn net.Listener
	if cfg.Loop != nil && cfg.HealthAddr != "" {
		var err error
		if healthLn, err = listenHealth(cfg.HealthAddr); err != nil {
			return err
		}
		defer healthLn.Close()
	}
	c := cluster.NewCache(cfg.Client, cfg.Namespace)
	c.ReadOnly = cfg.Loop == nil
	c.GroupPods = srv != nil // the webhook reads Pods by group
	if cfg.Loop != nil && cfg.Loop.WithEndpoints {
		c.KeepEndpoints = cfg.Loop.Plan.ManagedBy
	}
	var lp *loop
	if cfg.Loop != nil {
		var err error
		if lp, err = newLoop(ctx, cfg, c); err != nil {
			return err
		}
		defer lp.close()
	}
	infs, err := c.Informers(ctx)
	if err != nil {
		return err
	}
	if lp != nil {
		if err := lp.attach(infs); err != nil {
			return err
		}
		if healthLn != nil {
			// Serves until the loop has finished its writes, not only
			// until the signal: the probes stay truthful during shutdown.
			hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
			defer stop()
			serveHealth(hctx, healthLn, lp.metrics.Registry, lp.probes())
			lp.opts.Report.Notice("", printers.LoopServingHealth(healthLn.Addr().String()))
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	infs.Start(gctx.Done())
	// Not the factory's Shutdown alone: a watch-list retry may sleep out its
	// backoff (cluster.ShutdownInformers).
	defer infs.Shutdown()
	g.Go(func() error {
		if !infs.WaitForSync(gctx) {
			return nil
		}
		// The initial lists decoded every object in full before the
		// transform slimmed it: give that memory back to the OS now rather
		// than keep it resident for the life of the process.
		debug.FreeOSMemory()
		if srv != nil {
			srv.synced(c, cfg.Namespace)
		}
		if lp == nil {
			return nil
		}
		bar := cfg.FirstPass
		if cfg.Lease != nil {
			bar = nil // a standby may wait long before its first sync
		}
		firstPass(gctx, bar, c, lp.opts, lp.ctrl.QueueLen)
		if gctx.Err() == nil {
			// The first pass planned every Service in full, and the heap
			// grew to hold that garbage beside the caches: give it back
			// now, not when the cluster next falls quiet (CollectWhenQuiet),
			// which under steady churn it may never do.
			debug.FreeOSMemory()
		}
		return nil
	})
	if srv != nil {
		g.Go(func() error { return srv.run(gctx) })
	}
	if lp != nil {
		g.Go(func() error { return lp.run(gctx) })
		g.Go(func() error { lp.contact.keepInTouch(gctx, cfg.Client); return nil })
	}
	return g.Wait()
}

// loop is the sync loop's part of the process: the controller, its
// metrics and Events, and the election it writes under.
type loop struct {
	opts     controller.Options
	client   kubernetes.Interface
	cache    *cluster.Cache
	metrics  *controller.Metrics
	watchdog *leaderelection.HealthzAdaptor
	contact  contact
	election *election
	ctrl     *controller.Controller
	close    func()
}

// newLoop checks the rights the loop's optional parts need (Events, the
// Lease) and prepares them; the controller is attached to the informers
// once they exist.
func newLoop(ctx context.Context, cfg Config, c *cluster.Cache) (*loop, error) {
	lp := &loop{opts: *cfg.Loop, client: cfg.Client, cache: c, close: func() {}}
	lp.contact = contact{heard: lp.opts.Report.Heard, now: time.Now}
	lp.metrics = controller.NewMetrics()
	lp.opts.Metrics = lp.metrics
	if bar := cfg.FirstPass; bar != nil && cfg.Lease == nil {
		lp.opts.OnSynced = bar.Took
	}
	// Events on Services for failed syncs, as upstream records them. The
	// recorder drops an Event the API refuses, so without the right say once
	// that there will be none.
	denied, err := cluster.DeniedVerb(ctx, cfg.Client, "", "events", cfg.Namespace, "", "create", "patch")
	if err != nil {
		return nil, err
	}
	if denied != "" {
		lp.opts.Report.Notice("", printers.LoopEventsUnwritable(denied))
	} else {
		events := record.NewBroadcaster(record.WithContext(ctx))
		lp.close = events.Shutdown
		events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.Client.CoreV1().Events("")})
		lp.opts.Events = events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubectl-slices"})
	}
	if cfg.Lease != nil {
		// kube-controller-manager's: the lease may lapse 20 s before
		// /healthz fails.
		lp.watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
		if lp.election, err = newElection(ctx, cfg.Client, *cfg.Lease, lp.watchdog, lp.metrics, lp.opts.Report); err != nil {
			lp.close()
			return nil, err
		}
		lp.opts.Leading, lp.opts.Abort = lp.election.Leading, lp.election.Abort
	}
	return lp, nil
}

// attach builds the controller on the informers, before they start.
func (lp *loop) attach(infs *cluster.Informers) error {
	var err error
	lp.ctrl, err = controller.New(lp.client, lp.cache, infs, lp.opts)
	return err
}

// run runs the controller, under the election when there is one. Losing
// the lease stops the loop at once; a signal lets the syncs in flight
// finish, then the lease is released for a fast hand-over.
func (lp *loop) run(ctx context.Context) error {
	e := lp.election
	if e == nil {
		return lp.ctrl.Run(ctx)
	}
	e.Start()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.Abort.Done():
			cancel()
		case <-rctx.Done():
		}
	}()
	runErr := lp.ctrl.Run(rctx)
	if e.Release() {
		return e.lostError()
	}
	return runErr
}
