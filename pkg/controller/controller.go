package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// Options configure a Controller.
type Options struct {
	// Namespace scopes the informers; "" watches every namespace.
	Namespace string
	// Names, when not empty, are the only Services kept ("ns/name" keys);
	// otherwise Selector picks them by label (labels.Everything for --all).
	Names    map[string]bool
	Selector labels.Selector
	Plan     reconcile.Options
	Write    apply.Options
	// BatchPeriod delays a sync after a Pod change so that churn is written
	// once, as kube-controller-manager's --endpointslice-updates-batch-period.
	BatchPeriod time.Duration
	Workers     int
	// SummaryInterval is how often a summary line is printed; 0 for never.
	SummaryInterval time.Duration
	Report          *Reporter
	// Metrics (may be nil) are recorded for each sync.
	Metrics *Metrics
	// Events (may be nil) records sync failures on the Service, as upstream.
	Events record.EventRecorder
	// WithEndpoints also keeps each Service's legacy v1 Endpoints object,
	// as one-shot sync --with-endpoints writes it (only objects absent or
	// marked ours).
	WithEndpoints bool
	// Leading, when not nil, holds the workers until it is closed: a
	// standby fills and keeps its caches but writes nothing.
	Leading <-chan struct{}
	// Abort, when not nil, is cancelled when writing must stop at once
	// (leadership lost); writes in flight are cut rather than finished.
	Abort context.Context
	// BeforeWrites, when not nil, is asked once the caches are filled and
	// the lease is held, before the first write; an error stops the loop
	// with nothing written (sync --watch refuses a managed-by value whose
	// slices kubectl-slices did not write: the cache holds no managedFields,
	// so it reads them itself).
	BeforeWrites func(context.Context) error
	// OnSynced, when not nil, is told each Service synced and how long
	// the sync took (the first pass's progress line names the slowest).
	OnSynced func(key string, took time.Duration)
	// Standby, when not nil, stands by beside kube-controller-manager: a
	// Service's slices are written only once the controller has failed it
	// for Standby.TakeoverAfter, and handed back when it recovers
	// (pkg/standby).
	Standby *standby.Config
}

// Controller keeps the selected Services' slices current.
type Controller struct {
	client  kubernetes.Interface
	opts    Options
	cache   *cluster.Cache
	reader  cluster.Reader
	queue   workqueue.TypedRateLimitingInterface[string]
	slices  *sliceTracker
	trigger *syncer.Tracker
	report  *Reporter
	notes   *notes
	memos   memos

	mu       sync.Mutex
	handback map[string]bool // Services whose controller slices were said current
	standby  map[string]standby.Memory
	closures standby.Closures // the controller's recent closures, for standby.Decide
	looked   map[string]bool  // Services the standby core has looked at
	observed *observed
	now      func() time.Time
	leads    atomic.Bool // false while standing by for the Lease (leading.go)

	infs    *cluster.Informers
	health  health
	catchUp *catchUp
}

// QueueName names the work queue in the workqueue_* metrics.
const QueueName = "endpoint_slice"

// New builds a Controller on the process's cache and its informers, as
// upstream's NewController takes its informers: it registers its handlers
// before the caller starts them. Run runs it.
func New(client kubernetes.Interface, c *cluster.Cache, infs *cluster.Informers, opts Options) (*Controller, error) {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if opts.Selector == nil {
		opts.Selector = labels.Everything()
	}
	// A lost lease cuts the writes in flight, where a signal lets them finish.
	opts.Write.Abort = opts.Abort
	// As the controller's: per item exponential backoff (here 50 ms to 30 s,
	// so a Service recovers soon after an API server outage) and an overall
	// token bucket.
	limiter := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	)
	// Named as kube-controller-manager's EndpointSlice controller names its
	// queue, so a dashboard's workqueue_* panels find both by one name.
	qcfg := workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName}
	if opts.Metrics != nil {
		qcfg.MetricsProvider = opts.Metrics.Queue
	}
	ctrl := &Controller{
		client:   client,
		infs:     infs,
		opts:     opts,
		cache:    c,
		reader:   cluster.Reader{Client: client},
		queue:    workqueue.NewTypedRateLimitingQueueWithConfig(limiter, qcfg),
		slices:   newSliceTracker(),
		trigger:  syncer.NewTracker(),
		notes:    newNotes(),
		memos:    memos{m: map[string]*reconcile.Memo{}},
		report:   opts.Report,
		handback: map[string]bool{},
		standby:  map[string]standby.Memory{},
		looked:   map[string]bool{},
		observed: newObserved(),
		now:      time.Now,
	}
	ctrl.leads.Store(opts.Leading == nil)
	if err := ctrl.register(infs); err != nil {
		return nil, err
	}
	var err error
	if ctrl.catchUp, err = newCatchUp(infs.Named(), ctrl.now); err != nil {
		return nil, err
	}
	if opts.Report != nil {
		opts.Report.OnReconnect(ctrl.catchUp.reconnected)
	}
	return ctrl, nil
}

// Run waits for the caches the caller started, then syncs until ctx is
// done, lets the writes in flight finish and returns nil.
func (c *Controller) Run(ctx context.Context) error {
	if c.cache.EndpointsUnreadable && c.opts.WithEndpoints {
		return fmt.Errorf("--with-endpoints: %s is not allowed: the loop cannot keep v1 Endpoints objects without reading them; `kubectl auth can-i %s`", c.cache.Denied["endpoints"], c.cache.Denied["endpoints"])
	}
	if c.cache.EndpointsUnreadable {
		c.report.Notice("", printers.LoopEndpointsUnreadable(c.cache.Denied["endpoints"]))
	}
	if c.cache.NodesUnreadable {
		c.report.Notice("", printers.LoopNodesUnreadable(c.cache.Denied["nodes"]))
	}
	if !c.infs.WaitForSync(ctx) {
		return nil // interrupted before the caches filled: nothing written
	}
	c.report.Notice("", printers.LoopWatching(c.opts.Namespace))
	c.health.synced(c.infs.Named())
	c.opts.Metrics.Synced()
	if !c.waitLeading(ctx) {
		c.queue.ShutDown()
		return nil // stopped while standing by: nothing was written
	}
	if c.opts.BeforeWrites != nil {
		if err := c.opts.BeforeWrites(ctx); err != nil {
			c.queue.ShutDown()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	var tick <-chan time.Time
	if c.opts.SummaryInterval > 0 {
		t := time.NewTicker(c.opts.SummaryInterval)
		defer t.Stop()
		tick = t.C
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick:
			c.report.Summary(c.queue.Len())
		case <-beat.C:
			c.health.beat()
		}
	}
	c.queue.ShutDown()
	wg.Wait()
	c.report.Summary(c.queue.Len())
	return nil
}

// processNext syncs one Service. On the signal it starts no new write: a
// Service may be left part written, which the next run completes (sync
// converges from whatever it finds). A key taken after the signal is dropped
// unsynced.
func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	// After ShutDown the queue still hands out every key it holds: once
	// interrupted, start no new Service, so shutdown waits for the syncs in
	// flight only, not for the whole backlog.
	if ctx.Err() != nil {
		return false
	}
	// After an outage, nothing is written from caches that have not yet
	// heard what they missed (catchup.go).
	wait, retry := c.catchUp.pending()
	if wait {
		c.queue.AddAfter(key, catchUpPoll)
		return true
	}
	for _, k := range retry {
		c.queue.Forget(k)
		c.queue.Add(k)
	}
	c.report.syncs.Add(1)
	// A signal, a lost lease or 30 s stop the sync from starting writes;
	// those already sent get Write.Grace to finish and are reported (a
	// request on the wire may be made by the server whatever we do), except
	// on a lost lease, which cuts them (Write.Abort).
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if c.opts.Abort != nil {
		defer context.AfterFunc(c.opts.Abort, cancel)()
	}
	began := time.Now()
	err := c.sync(sctx, key)
	if c.opts.OnSynced != nil {
		c.opts.OnSynced(key, time.Since(began))
	}
	c.opts.Metrics.Result(result(err))
	if ctx.Err() == nil {
		c.catchUp.synced(key, err == nil)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// Cut by the signal: what was written is reported, the rest is
		// the next run's (the queue is shut down).
	case err == nil:
		c.queue.Forget(key)
		c.report.Recovered(key)
	case errors.Is(err, errStale):
		c.report.stale.Add(1)
		klog.V(2).InfoS("cache lags our own writes; retrying", "service", key)
		c.queue.AddRateLimited(key)
	default:
		c.report.Error(key, err)
		c.queue.AddRateLimited(key)
	}
	return true
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		utilruntime.HandleError(err)
		return nil
	}
	svc, err := c.cache.Service(ctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return c.removeAll(ctx, key, ns, name)
	case err != nil:
		return err
	case !c.selected(svc):
		// It stopped matching -l: what was written stays, as a one-shot
		// sync would have left it.
		c.memos.set(key, nil)
		return nil
	}
	// One trigger time per sync, however many attempts it takes.
	var trig *time.Time
	opts := syncer.Options{
		Plan: c.opts.Plan, Write: &c.opts.Write, Retry: c.reader, DeleteUnplanned: true,
		// Selectorless Services are mirrored from the cached Endpoints.
		Planner: syncer.MirroringPlanner(c.cache.EndpointsOf),
		Trigger: func(s *corev1.Service, pods []*corev1.Pod) time.Time {
			if trig == nil {
				t := c.trigger.Compute(s, pods)
				trig = &t
			}
			return *trig
		},
	}
	if pods, all := c.notes.take(key); !all && c.incremental() {
		// A Service left in sync is planned from its memo and the Pods
		// noted since (incremental.go).
		opts.Incremental, opts.Changed = &memoSync{c: c, key: key, pods: pods}, c.trigger.Changed
	}
	var sb *standbySync
	if c.opts.Standby != nil {
		sb = &standbySync{c: c, key: key}
		seen := c.observed.take(key)
		opts.Hold = sb.hold(seen)
		// A failed sync's retry still reflects the change seen.
		defer func() {
			if sb.decision == nil {
				c.observed.note(key, seen)
			}
		}()
	}
	out := syncer.Sync(ctx, guarded{Cache: c.cache, slices: c.slices, key: key, managedBy: c.opts.Plan.ManagedBy}, c.client.DiscoveryV1(), svc, opts)
	switch {
	case !out.Incremental:
		c.opts.Metrics.PlannedBy("full")
		c.remember(key, out)
	case out.Plan != nil:
		c.opts.Metrics.PlannedBy("memo")
	}
	return c.settle(ctx, key, svc, out, sb)
}

// settle records, reports and follows up a sync's outcome, whichever way
// it was planned.
func (c *Controller) settle(ctx context.Context, key string, svc *corev1.Service, out syncer.Outcome, sb *standbySync) error {
	// Before record: what we last wrote tells a hand edit from our own.
	restored := map[string]bool{}
	for _, u := range out.Result.Updated {
		if l := out.Plan.Live(u.Name); l != nil && c.slices.EditedElsewhere(l) {
			restored[u.Name] = true
		}
	}
	c.record(out.Result)
	c.observe(key, svc, out)
	// A takeover is said before the writes it made.
	var standbyErr error
	if sb != nil {
		standbyErr = sb.commit(ctx, out)
	}
	if out.Result.Writes() > 0 {
		c.report.Write(key, out.Plan, out.Result, restored)
	}
	if sb == nil && out.Err == nil && out.Plan != nil {
		c.sayHandback(key, out.Plan)
	}
	if standbyErr != nil && out.Err == nil {
		return standbyErr
	}
	if out.Err == nil && c.opts.WithEndpoints && out.Held == "" && out.Input.Service != nil {
		return c.syncEndpoints(ctx, key, out.Input.Service, out.Input.Pods)
	}
	return out.Err
}

// removeAll deletes our slices of a Service that is gone.
func (c *Controller) removeAll(ctx context.Context, key, ns, name string) error {
	mine := c.inScope(key, ours(c.cache.SlicesOf(ns, name), c.opts.Plan.ManagedBy))
	if c.slices.Stale(key, mine) {
		return errStale // a slice we just created may not be in the cache yet
	}
	c.trigger.Forget(ns, name)
	c.memos.set(key, nil)
	c.notes.take(key)
	c.forgetStandby(key, true)
	if c.opts.WithEndpoints {
		if err := c.removeEndpoints(ctx, key, ns, name); err != nil {
			return err
		}
	}
	res, err := syncer.DeleteAll(ctx, c.client.DiscoveryV1(), ns, mine, c.opts.Write)
	c.record(res)
	c.opts.Metrics.Wrote(res)
	if res.Writes() > 0 {
		c.report.Removed(key, res)
	}
	if err == nil {
		c.slices.Forget(key)
		c.mu.Lock()
		delete(c.handback, key)
		n := len(c.handback)
		c.mu.Unlock()
		c.opts.Metrics.SetHandback(n)
		c.opts.Metrics.Gone(key)
	}
	return err
}

func (c *Controller) record(r apply.Result) {
	for _, s := range r.Created {
		c.slices.Written(s)
	}
	for _, s := range r.Updated {
		c.slices.Written(s)
	}
	for _, s := range r.Deleted {
		c.slices.Deleted(s)
	}
}

// inScope keeps the slices of a deleted Service that the loop's targets
// covered: with Service names, when the Service was one of them; with -l,
// each slice whose copy of the Service's labels the selector matches. A
// loop kept to some Services leaves the slices of others, which another
// loop (or a one-shot run) wrote, to their own keeping.
func (c *Controller) inScope(key string, slices []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	if len(c.opts.Names) > 0 {
		if c.opts.Names[key] {
			return slices
		}
		return nil
	}
	if c.opts.Selector.Empty() {
		return slices
	}
	var out []*discovery.EndpointSlice
	for _, s := range slices {
		if c.opts.Selector.Matches(labels.Set(reconcile.ServiceLabels(s))) {
			out = append(out, s)
		}
	}
	return out
}

// selected reports whether a Service is one of the targets.
func (c *Controller) selected(svc *corev1.Service) bool {
	if len(c.opts.Names) > 0 {
		return c.opts.Names[svc.Namespace+"/"+svc.Name]
	}
	return c.opts.Selector.Matches(labels.Set(svc.Labels))
}
