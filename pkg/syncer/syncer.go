package syncer

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Source gives the planner's inputs. cluster.Reader (targeted reads) and
// cluster.Cache (informer stores) implement it.
type Source interface {
	// Service reads one Service; a missing one is a NotFound API error.
	Service(ctx context.Context, namespace, name string) (*corev1.Service, error)
	// Load reads everything else the planner needs for svc.
	Load(ctx context.Context, svc *corev1.Service) (reconcile.Input, error)
}

// Planner plans one Service from its inputs. PlanService (through
// MirroringPlanner) is the one every command uses; nil in Options means
// PlanService offline (no Endpoints lookup).
type Planner func(ctx context.Context, in reconcile.Input, opts reconcile.Options) (*reconcile.Plan, error)

// Options tune Sync.
type Options struct {
	// Plan is handed to the planner with its ManagedBy made the kind's
	// (ManagedByOf) and its TriggerTime decided by Trigger (or Changed).
	Plan reconcile.Options
	// Planner plans; nil means PlanService offline (no Endpoints lookup).
	Planner Planner
	// Write is nil to plan only (diff, explain).
	Write *apply.Options
	// Trigger computes the trigger time of a write; nil means LatestChange.
	Trigger func(svc *corev1.Service, pods []*corev1.Pod) time.Time
	// Incremental, when set, plans the first attempt from the Pods changed
	// since the Service's last sync instead of a full read (the watch
	// loop's memo); Changed then gives that plan's trigger time
	// (Tracker.Changed). Not used with Hold, which judges a full read.
	Incremental Incremental
	Changed     func(svc *corev1.Service, members map[string]*corev1.Pod) (at time.Time, commit func(), known bool)
	// Retry is where inputs are re-read after a conflict. A cache that is not
	// watching would serve the same stale state again, so one-shot runs over
	// the cache re-read through targeted reads; nil means the first Source.
	Retry Source
	// Backoff spaces the attempts; the zero value means retry.DefaultBackoff
	// (4 attempts, 10 ms growing fivefold).
	Backoff wait.Backoff
	// DeleteUnplanned deletes our slices of a Service the planner leaves
	// alone (ExternalName, no selector). The controller leaves such slices
	// to the garbage collector or to their other writer; a process that keeps
	// its slices current removes what it wrote once it no longer applies.
	DeleteUnplanned bool
	// Hold, when set, is asked about each plan before anything is written;
	// a non-empty answer writes nothing for the Service and is kept in
	// Outcome.Held (sync holds back where kube-controller-manager already
	// publishes the Service correctly, and diff shows that it would).
	Hold func(in reconcile.Input, plan *reconcile.Plan) string
}

// Outcome is what happened to one Service (outcome.Outcome).
type Outcome = outcome.Outcome

// Sync plans svc from src and, with opts.Write, writes the plan through
// slices. A conflict (a slice changed or vanished since it was read) re-reads
// the Service and its inputs and plans again, up to the backoff's steps.
// With opts.Incremental the first attempt plans from what changed since the
// Service's last sync, if it can; every retry plans in full.
func Sync(ctx context.Context, src Source, slices discoveryclient.EndpointSlicesGetter, svc *corev1.Service, opts Options) Outcome {
	backoff := opts.Backoff
	if backoff.Steps == 0 {
		backoff = retry.DefaultBackoff
	}
	if opts.Trigger == nil {
		opts.Trigger = LatestChange
	}
	if opts.Planner == nil {
		opts.Planner = MirroringPlanner(nil)
	}
	r := &run{src: src, slices: slices, opts: opts, out: Outcome{Namespace: svc.Namespace, Name: svc.Name, Service: svc}}
	// The last attempt's error is kept here, not taken from OnError, which
	// reads a context.Canceled as its own wait being interrupted and returns
	// nil for it: an interrupted Service would be reported as synced.
	var last error
	_ = retry.OnError(backoff, func(err error) bool {
		return errors.Is(err, apply.ErrConflict) && ctx.Err() == nil
	}, func() error {
		last = r.attempt(ctx)
		return last
	})
	r.out.Err = last
	return r.out
}

// run is one Sync: its options and what it found so far.
type run struct {
	src    Source
	slices discoveryclient.EndpointSlicesGetter
	opts   Options
	out    Outcome
	// changed is the trigger time an incremental attempt took (and
	// recorded): a retry of its write stamps the same change.
	changed *time.Time
}

// attempt reads, plans and writes once.
func (r *run) attempt(ctx context.Context) error {
	out, opts := &r.out, r.opts
	out.Attempts++
	out.Incremental = false
	if out.Attempts > 1 {
		// Someone wrote in between: start again from a fresh read.
		if opts.Retry != nil {
			r.src = opts.Retry
		}
		s, err := r.src.Service(ctx, out.Service.Namespace, out.Service.Name)
		if err != nil {
			return err
		}
		out.Service = s
	}
	// Every plan is made under the kind's managed-by value (ManagedByOf).
	po := opts.Plan
	po.ManagedBy = judge.ManagedByOf(out.Service, po.ManagedBy)
	if out.Attempts == 1 && opts.Incremental != nil && opts.Hold == nil {
		planned, err := r.planIncremental(ctx, po)
		if err != nil || planned {
			return err
		}
	}
	in, err := r.src.Load(ctx, out.Service)
	if err != nil {
		return err
	}
	out.Input = in
	if r.changed != nil {
		po.TriggerTime = *r.changed
	} else {
		po.TriggerTime = opts.Trigger(out.Service, in.Pods)
	}
	if out.Plan, err = opts.Planner(ctx, in, po); err != nil {
		return err
	}
	if opts.DeleteUnplanned && !out.Plan.Service.Planned() {
		// Keep the planner's own deletions (the mirror planner deletes
		// its slices when the Endpoints object is gone).
		out.Plan.Delete, out.Plan.Unchanged = append(out.Plan.Delete, out.Plan.Unchanged...), nil
	}
	if opts.Hold != nil {
		if out.Held = opts.Hold(in, out.Plan); out.Held != "" {
			return nil
		}
	}
	_, err = r.write(ctx)
	return err
}

// write applies the attempt's plan: the one writer of a Service's slices.
func (r *run) write(ctx context.Context) (apply.Result, error) {
	if r.opts.Write == nil || r.out.Plan.InSync() {
		return apply.Result{}, nil
	}
	// The plan was made under the kind's value (ManagedByOf); apply
	// checks every slice it touches against that value.
	write := *r.opts.Write
	write.ManagedBy = judge.ManagedByOf(r.out.Service, write.ManagedBy)
	res, err := apply.Apply(ctx, r.slices.EndpointSlices(r.out.Service.Namespace), r.out.Plan, write)
	r.out.Result.Add(res)
	return res, err
}

// DeleteAll deletes our slices of a Service that no longer exists: the
// garbage collector may be as down as the controller manager. Under a
// controller's value, ours carry either controller's value
// (reconcile.OurValues); each is deleted under its own, so apply still
// refuses any other.
func DeleteAll(ctx context.Context, slices discoveryclient.EndpointSlicesGetter, namespace string, ours []*discovery.EndpointSlice, write apply.Options) (apply.Result, error) {
	var res apply.Result
	for _, mb := range reconcile.OurValues(write.ManagedBy) {
		var these []*discovery.EndpointSlice
		for _, s := range ours {
			if s.Labels[discovery.LabelManagedBy] == mb {
				these = append(these, s)
			}
		}
		if len(these) == 0 {
			continue
		}
		w := write
		w.ManagedBy = mb
		r, err := apply.Apply(ctx, slices.EndpointSlices(namespace), &reconcile.Plan{Delete: these}, w)
		res.Add(r)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}
