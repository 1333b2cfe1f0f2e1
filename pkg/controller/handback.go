package controller

import (
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// sayHandback tells, once per Service, that kube-controller-manager's own
// slices for it exist and publish exactly the endpoints ours do: the
// controller is back, and ours can be handed back.
func (c *Controller) sayHandback(key string, plan *reconcile.Plan) {
	c.mu.Lock()
	said := c.handback[key]
	c.mu.Unlock()
	if said || !plan.Service.Planned() {
		return
	}
	var theirs []*discovery.EndpointSlice
	for _, s := range plan.Foreign {
		if s.Labels[discovery.LabelManagedBy] == reconcile.ControllerManagedBy && s.DeletionTimestamp == nil {
			theirs = append(theirs, s)
		}
	}
	ours := plan.Final()
	if len(theirs) == 0 || !sameCounts(theirs, ours) || !judge.SameEndpoints(theirs, ours) {
		return
	}
	c.mu.Lock()
	c.handback[key] = true
	n := len(c.handback)
	c.mu.Unlock()
	c.opts.Metrics.SetHandback(n)
	c.report.Notice(key, printers.LoopControllerCurrent(len(theirs)))
}

// watchingHandback: a controller slice event matters until the Service's
// hand-back was said.
func (c *Controller) watchingHandback(s *discovery.EndpointSlice) bool {
	if s.Labels[discovery.LabelManagedBy] != reconcile.ControllerManagedBy {
		return false
	}
	key, _ := sliceService(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.handback[key]
}

// sameCounts is the cheap first look before the canonical comparison:
// slices that publish the same endpoints have as many, as many of them
// ready. While a Service's Pods flip, the controller's slices trail ours by
// a change and fail it at once, so a 20,000-endpoint comparison runs only
// when it may succeed.
func sameCounts(a, b []*discovery.EndpointSlice) bool {
	na, ra := endpointCounts(a)
	nb, rb := endpointCounts(b)
	return na == nb && ra == rb
}

func endpointCounts(slices []*discovery.EndpointSlice) (n, ready int) {
	for _, s := range slices {
		n += len(s.Endpoints)
		for i := range s.Endpoints {
			if r := s.Endpoints[i].Conditions.Ready; r != nil && *r {
				ready++
			}
		}
	}
	return n, ready
}
