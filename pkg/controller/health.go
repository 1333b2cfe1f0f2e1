package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// heartbeat is how often the run loop says it is alive; /healthz fails once
// it has been silent for staleAfter.
const (
	heartbeat  = 5 * time.Second
	staleAfter = 30 * time.Second
)

// health is what /readyz and /healthz read: whether the caches filled, the
// informers, and the run loop's last heartbeat.
type health struct {
	mu     sync.Mutex
	infs   map[string]cache.SharedIndexInformer
	last   time.Time
	isSync bool
}

func (h *health) synced(infs map[string]cache.SharedIndexInformer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.infs, h.isSync, h.last = infs, true, time.Now()
}

func (h *health) beat() {
	h.mu.Lock()
	h.last = time.Now()
	h.mu.Unlock()
}

// Ready reports nil once every cache has filled, as leader or standby.
func (c *Controller) Ready() error {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	if !c.health.isSync {
		return errors.New("caches not yet synced")
	}
	return nil
}

// Healthy reports nil while the run loop is alive and no informer stopped.
// Before the caches fill it is healthy: a slow first list is not a wedge
// (readiness covers it).
func (c *Controller) Healthy() error {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	if !c.health.isSync {
		return nil
	}
	if d := time.Since(c.health.last); d > staleAfter {
		return fmt.Errorf("run loop silent for %v", d.Round(time.Second))
	}
	var stopped []string
	for name, inf := range c.health.infs {
		if inf.IsStopped() {
			stopped = append(stopped, name)
		}
	}
	if len(stopped) > 0 {
		sort.Strings(stopped)
		return fmt.Errorf("informers stopped: %v", stopped)
	}
	return nil
}

// waitLeading holds a standby until it leads; false if ctx ended first.
func (c *Controller) waitLeading(ctx context.Context) bool {
	if c.opts.Leading == nil {
		c.opts.Metrics.SetLeader(true)
		return true
	}
	c.report.Notice("", printers.LoopStandingBy())
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-beat.C:
			c.health.beat()
		case <-c.opts.Leading:
			c.opts.Metrics.SetLeader(true)
			c.report.Notice("", printers.LoopLeading())
			c.lead()
			return true
		}
	}
}

func result(err error) string {
	switch {
	case err == nil:
		return "success"
	case errors.Is(err, errStale):
		return "stale"
	}
	return "error"
}

// observe records a sync's writes and, when it succeeded, its plan; a
// failure is recorded as an event on the Service, as upstream records it.
func (c *Controller) observe(key string, svc *corev1.Service, out syncer.Outcome) {
	c.opts.Metrics.Wrote(out.Result)
	switch {
	case out.Err == nil && out.Held != "":
		// Standing by: nothing of ours is planned to exist.
	case out.Err == nil:
		c.opts.Metrics.Planned(key, out.Plan, out.Result, c.opts.Plan.MaxEndpointsPerSlice)
	case c.opts.Abort != nil && c.opts.Abort.Err() != nil:
		// The lease was lost: a write cut short is no failure to record,
		// and a former leader writes nothing more, events included.
	case !errors.Is(out.Err, errStale) && c.opts.Events != nil:
		c.opts.Events.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s/%s: %v", svc.Namespace, svc.Name, out.Err)
	}
}

// QueueLen is the number of Services waiting to be synced.
func (c *Controller) QueueLen() int {
	if c == nil {
		return 0
	}
	return c.queue.Len()
}
