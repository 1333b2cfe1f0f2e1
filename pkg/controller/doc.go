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
// standby fills its caches and queues Services but starts no worker until
// it leads, and Options.Abort cuts writes in flight when the lease is lost.
// Failed syncs are Warning events on the Service, as upstream records them.
//
// Each sync re-plans the whole Service from the cache, as upstream does;
// planning only the Pods that changed would cost less, and is not done (the
// README's Performance section has the measured figures and where the time
// goes).
package controller
