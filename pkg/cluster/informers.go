package cluster

import (
	"context"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Informers are the shared informers that keep a Cache current, typed so
// that a caller cannot ask for one that is not there by a misspelt name.
// Endpoints and Nodes are nil when RBAC does not let us watch them.
type Informers struct {
	Services, Pods, Slices cache.SharedIndexInformer
	Endpoints, Nodes       cache.SharedIndexInformer

	factory informers.SharedInformerFactory
	// podGroupsSynced is the Pod group memo's handler having heard of the
	// first list (Cache.TrackPodGroups); nil without it.
	podGroupsSynced cache.InformerSynced
}

// Named lists the informers present by resource, for logs and health.
func (i *Informers) Named() map[string]cache.SharedIndexInformer {
	out := map[string]cache.SharedIndexInformer{
		"services": i.Services, "pods": i.Pods, "endpointslices": i.Slices,
	}
	if i.Endpoints != nil {
		out["endpoints"] = i.Endpoints
	}
	if i.Nodes != nil {
		out["nodes"] = i.Nodes
	}
	return out
}

// Start runs the informers until stop is closed.
func (i *Informers) Start(stop <-chan struct{}) { i.factory.Start(stop) }

// WaitForSync waits until every informer has listed once, and the Pod
// group memo has heard of every Pod of that list; false when ctx ended
// first.
func (i *Informers) WaitForSync(ctx context.Context) bool {
	for name, inf := range i.Named() {
		if !cache.WaitForNamedCacheSync(name, ctx.Done(), inf.HasSynced) {
			return false
		}
	}
	if i.podGroupsSynced != nil {
		return cache.WaitForNamedCacheSync("pod groups", ctx.Done(), i.podGroupsSynced)
	}
	return true
}

// Shutdown waits, at most InformerStopGrace, for the informers to stop once
// their stop channel is closed.
func (i *Informers) Shutdown() { ShutdownInformers(i.factory, InformerStopGrace) }

// InformerStopGrace bounds the wait for the informers to stop
// (ShutdownInformers).
const InformerStopGrace = time.Second

// ShutdownInformers waits at most grace for the factory's informers to stop.
// client-go's watch-list retry (Reflector.watchList) sleeps out its backoff,
// up to a minute after an API server outage (30 s cap, jitter 1.0),
// without looking at the stop channel. The informers only fill the cache
// and queue keys, so a process that is stopping need not wait for that
// sleep: the sync loop (workers done, nothing written after) and the
// admission webhook (server shut down) both call this on their way out.
func ShutdownInformers(f informers.SharedInformerFactory, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		f.Shutdown()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
