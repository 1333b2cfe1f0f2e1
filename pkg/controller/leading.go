package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// A replica standing by for the Lease queues nothing: its workers wait, and
// a queue, notes and observations kept for months would hold every Service
// key it ever saw, deleted ones too (the queue forgets a key only when a
// worker takes it). What it would have synced is known again from its
// caches the moment it leads (queueAll); what it observed before would
// date nothing anyway (a first look is dated now, pkg/standby's opened).

// enqueue queues key after the delay, once the replica leads.
func (c *Controller) enqueue(key string, after time.Duration) {
	if !c.leads.Load() {
		return
	}
	if after <= 0 {
		c.queue.Add(key)
		return
	}
	c.queue.AddAfter(key, after)
}

// lead marks the replica leading and queues every Service its caches say
// may need a sync: each selected Service, and each Service named by a
// slice or Endpoints object of ours (deleted while standing by: ours are
// removed). Events from now on queue their own; one delivered between the
// mark and the listing is queued twice, which the queue folds.
func (c *Controller) lead() {
	c.leads.Store(true)
	for _, o := range c.cache.Services.List() {
		if svc := o.(*corev1.Service); c.selected(svc) {
			c.queue.Add(svc.Namespace + "/" + svc.Name)
		}
	}
	for _, o := range c.cache.Slices.List() {
		if s := o.(*discovery.EndpointSlice); c.isOurs(s) {
			if key, ok := sliceService(s); ok {
				c.queue.Add(key)
			}
		}
	}
	if c.cache.Endpoints != nil {
		for _, o := range c.cache.Endpoints.List() {
			if ep := o.(*corev1.Endpoints); c.oursMarked(ep) {
				c.queue.Add(ep.Namespace + "/" + ep.Name)
			}
		}
	}
}
