package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// Standby mode (Options.Standby): the pure core in pkg/standby decides per
// Service; this file keeps what it remembers, asks it from syncer's Hold
// hook, and acts on its decision (requeue, hand-back, metrics, events).

// standbySync is one sync's view of the standby core: the decision of the
// last attempt, committed once the sync is over.
type standbySync struct {
	c        *Controller
	key      string
	decision *standby.Decision
}

// hold is syncer.Options.Hold in standby mode. It runs once per attempt; the
// state is committed after the sync (commit), from the last attempt. seen
// is when the informers delivered the change this sync reflects.
func (s *standbySync) hold(seen time.Time) func(in reconcile.Input, plan *reconcile.Plan) string {
	return func(in reconcile.Input, plan *reconcile.Plan) string {
		s.decision = nil
		if in.Service == nil || !plan.Service.Planned() {
			// Nothing to publish (ExternalName, no selector and no
			// Endpoints): the controller publishes nothing either, and
			// slices of ours are deleted as outside standby.
			return ""
		}
		c := s.c
		c.mu.Lock()
		mem, known := c.standby[s.key]
		looked := c.looked[s.key]
		progress := c.closures.Latest(mem.Behind)
		c.mu.Unlock()
		if !known {
			mem = standby.Initial(*c.opts.Standby, in.Slices)
			// A Service the core has looked at before (then with nothing
			// to publish) is not new to the loop.
			mem.Fresh = !looked
		}
		d := standby.Decide(*c.opts.Standby, mem, standby.Input{
			Controller: judge.ControllerOf(in.Service), Desired: plan.Final(), Live: in.Slices, ServiceUID: in.Service.UID,
			Observed: seen, Created: in.Service.CreationTimestamp.Time, Progress: progress, Now: c.now(),
		})
		s.decision = &d
		if d.Action == standby.Write {
			return ""
		}
		if d.Reason == "" {
			return "standing by"
		}
		return d.Reason
	}
}

// commit keeps the decided state, hands back, requeues, and tells of a
// takeover or a hand-back. A failed write keeps the decided state (serving
// goes on trying); a failed hand-back keeps the previous one.
func (s *standbySync) commit(ctx context.Context, out syncer.Outcome) error {
	c, d := s.c, s.decision
	if d == nil {
		if out.Err == nil && out.Plan != nil && !out.Plan.Service.Planned() {
			c.forgetStandby(s.key, false)
		}
		return nil
	}
	if d.Action == standby.HandBack {
		res, err := syncer.DeleteAll(ctx, c.client.DiscoveryV1(), out.Namespace, d.Judgement.Ours, c.opts.Write)
		c.record(res)
		c.opts.Metrics.Wrote(res)
		c.report.count(res)
		if err != nil {
			return err // stays as it was: the retry decides again
		}
	}
	c.mu.Lock()
	c.standby[s.key] = d.Memory
	c.looked[s.key] = true
	if d.Closed {
		c.closures.Add(standby.Closure{Opened: d.Opened, Closed: c.now()}, c.opts.Standby.TakeoverAfter)
	}
	counts := c.stateCounts()
	c.mu.Unlock()
	m := c.opts.Metrics
	m.SetStates(counts)
	if d.Closed {
		m.ControllerLag(d.Lag)
	}
	if d.RequeueAfter > 0 {
		c.queue.AddAfter(s.key, d.RequeueAfter)
	}
	switch d.Event {
	case standby.TakenOver:
		m.TakenOver()
		c.tell(out.Service, "TakenOver", printers.LoopTakingOver(d.Reason))
	case standby.HandedBack:
		m.HandedBack()
		c.tell(out.Service, "HandedBack", printers.LoopHandedBack(len(d.Judgement.Ours), d.Reason))
	}
	return nil
}

// tell prints one line and records an Event on the Service.
func (c *Controller) tell(svc *corev1.Service, reason, msg string) {
	c.report.Notice(svc.Namespace+"/"+svc.Name, msg)
	if c.opts.Events != nil {
		c.opts.Events.Event(svc, corev1.EventTypeNormal, reason, msg)
	}
}

// forgetStandby drops a Service's state (deleted, or nothing to publish).
// A Service with nothing to publish stays looked at: when it gains
// something (a selector, an Endpoints object) the controller's first
// slices are a new change, not one the controller has had since the
// Service's creation.
func (c *Controller) forgetStandby(key string, deleted bool) {
	if c.opts.Standby == nil {
		return
	}
	c.mu.Lock()
	delete(c.standby, key)
	if deleted {
		delete(c.looked, key)
		c.observed.forget(key)
	} else {
		c.looked[key] = true
	}
	counts := c.stateCounts()
	c.mu.Unlock()
	c.opts.Metrics.SetStates(counts)
}

// stateCounts counts the Services in each state; c.mu must be held.
func (c *Controller) stateCounts() map[standby.State]int {
	out := map[standby.State]int{}
	for _, m := range c.standby {
		out[m.State]++
	}
	return out
}

// States is, per Service key, the standby state of every Service seen;
// nil outside standby mode.
func (c *Controller) States() map[string]standby.State {
	if c.opts.Standby == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]standby.State, len(c.standby))
	for k, m := range c.standby {
		out[k] = m.State
	}
	return out
}

// watchesController: in standby mode every change to a controller's slice
// is looked at at once, to see it catch up (and measure how late it is).
func (c *Controller) watchesController(s *discovery.EndpointSlice) bool {
	switch s.Labels[discovery.LabelManagedBy] {
	case reconcile.ControllerManagedBy, reconcile.MirroringManagedBy:
		return c.opts.Standby != nil
	}
	return false
}
