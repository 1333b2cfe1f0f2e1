package syncer

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Incremental plans a Service from the Pods changed since its last sync
// rather than from a full read: the watch loop's reconcile.Memo
// (pkg/controller/incremental.go). Sync asks it on a first attempt only, and
// writes its plan as any other; a conflict re-reads and plans in full.
type Incremental interface {
	// Changes reads what changed since svc's last sync; false means it
	// cannot say, and the attempt plans in full. An error ends the attempt
	// as Source.Load's does.
	Changes(ctx context.Context, svc *corev1.Service) (Changes, bool, error)
	// Plan plans svc from ch under po; false means the attempt plans in
	// full instead.
	Plan(svc *corev1.Service, ch Changes, po reconcile.Options) (*reconcile.Plan, bool)
	// Written is told what writing that plan did (nothing is said when the
	// plan needed no write).
	Written(res apply.Result, err error)
}

// Changes is what an incremental plan reads.
type Changes struct {
	// Pods are the Pods changed, each as it is now (nil when gone).
	Pods []reconcile.PodChange
	// Nodes holds at least the Nodes of those the selector matches.
	Nodes reconcile.Nodes
	// Slices are the Service's live slices, of every manager.
	Slices []*discovery.EndpointSlice
}

// planIncremental is a first attempt through Options.Incremental: false
// (with no error) when it could not plan, and the attempt plans in full.
// The trigger time is Options.Changed's, recorded once the plan is taken;
// a retry after a conflict stamps it too, since the tracker now holds the
// change as synced.
func (r *run) planIncremental(ctx context.Context, po reconcile.Options) (bool, error) {
	out, inc := &r.out, r.opts.Incremental
	ch, ok, err := inc.Changes(ctx, out.Service)
	if err != nil {
		out.Incremental, out.Input = true, reconcile.Input{Service: out.Service}
		return false, err
	}
	if !ok || r.opts.Changed == nil {
		return false, nil
	}
	sel := labels.SelectorFromSet(out.Service.Spec.Selector)
	members := make(map[string]*corev1.Pod, len(ch.Pods))
	for _, pc := range ch.Pods {
		members[pc.Name] = nil
		if pc.Pod != nil && sel.Matches(labels.Set(pc.Pod.Labels)) {
			members[pc.Name] = pc.Pod
		}
	}
	at, commit, known := r.opts.Changed(out.Service, members)
	if !known {
		return false, nil
	}
	po.TriggerTime = at
	plan, ok := inc.Plan(out.Service, ch, po)
	if !ok {
		return false, nil
	}
	commit()
	r.changed = &at
	out.Incremental, out.Plan = true, plan
	out.Input = reconcile.Input{Service: out.Service, Slices: ch.Slices}
	writes := r.opts.Write != nil && !plan.InSync()
	res, err := r.write(ctx)
	if writes {
		inc.Written(res, err)
	}
	return true, err
}
