// Package controller is `kubectl slices sync --watch`: it keeps the slices of
// the selected Services current, the way kube-controller-manager's
// EndpointSlice controller does. Shared informers (cluster.Cache) feed event
// handlers that only map events to Service keys; a rate-limited workqueue
// coalesces them (--batch-period); workers call syncer.Sync, the same
// function one-shot sync uses. A tracker of our own writes (tracker.go, after
// upstream's EndpointSliceTracker) keeps the workers from acting on a cache
// that has not yet seen them, and tells our own write echoes from hand edits.
package controller
