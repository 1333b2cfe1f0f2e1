// Package controller is `kubectl slices sync --watch`: it keeps the slices of
// the selected Services current, the way kube-controller-manager's
// EndpointSlice controller does. Shared informers (cluster.Cache) feed event
// handlers that only map events to Service keys; a rate-limited workqueue
// coalesces them (--batch-period); workers call syncer.Sync, the same
// function one-shot sync uses. A tracker of our own writes (tracker.go, after
// upstream's EndpointSliceTracker) keeps the workers from acting on a cache
// that has not yet seen them, and tells our own write echoes from hand edits.
//
// In a cluster (metrics.go, health.go): Prometheus metrics after upstream's
// EndpointSlice controller's are recorded here around the pure planner;
// Ready and Healthy feed /readyz and /healthz; with Options.Leading a
// standby fills its caches but queues nothing and starts no worker until it
// leads, then queues what its caches hold (leading.go); Options.Abort cuts
// writes in flight when the lease is lost.
// Failed syncs are Warning events on the Service, as upstream records them.
// The Reporter (report.go) decides when the loop prints a line and to which
// stream; pkg/printers writes its text (or JSON object).
//
// Standby mode (Options.Standby, standby.go) asks pkg/standby, from
// syncer's Hold hook, whether to write at all: nothing while
// kube-controller-manager's slices are current or have differed for less
// than the threshold (the Service is requeued for when it will have
// passed), ours while it fails the Service, and ours deleted once its
// slices have been current for the hold. Every change to the controller's
// slices queues the Service at once, to see it catch up and measure its
// lag. The handlers note when they observed a change per Service
// (observed.go), which dates a difference; the controller's closures of
// differences are kept for the core to tell a backlog from a failure.
//
// A sync plans from the Pods that changed, not the whole Service, where it
// can (incremental.go): the Pod handlers note which Pods they queued a
// Service for, and a Service left in sync keeps a reconcile.Memo that plans
// those Pods alone with Compute's result, handed to syncer.Sync as its
// Incremental planner (one writer, and a conflict retried in full). A
// Service the memo cannot vouch for (standby, --with-endpoints, a change it does not expect) is planned in
// full from the cache, as upstream plans every sync.
package controller
