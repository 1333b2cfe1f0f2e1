package controller

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// The incremental path. A readiness flip in a Service of 20,000 Pods
// changes one endpoint, yet planning it in full reads, sorts and plans all
// 20,000 Pods. Instead the handlers note which Pods changed, per Service,
// and a Service whose slices were last left in sync keeps a reconcile.Memo:
// the next sync plans from the noted Pods alone, with Compute's result
// (reconcile.TestMemoAgainstCompute). Anything the memo cannot vouch for
// (a Service, Node or slice change it does not expect, too many Pods at
// once, a conflict) drops the memo and plans in full, as before.

// maxNoted bounds the Pods noted for one Service between syncs: past it
// the Service is planned in full (a rollout, a Node going away).
const maxNoted = 512

// notes holds, per Service key, the Pods changed since its last sync.
type notes struct {
	mu   sync.Mutex
	pods map[string]map[string]bool // nil value: too many, plan in full
}

func newNotes() *notes { return &notes{pods: map[string]map[string]bool{}} }

func (n *notes) add(key, pod string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	set, ok := n.pods[key]
	switch {
	case !ok:
		n.pods[key] = map[string]bool{pod: true}
	case set == nil:
	case len(set) >= maxNoted:
		n.pods[key] = nil
	default:
		set[pod] = true
	}
}

// addAll notes Pods again (a sync that waits for the cache puts back
// what it took).
func (n *notes) addAll(key string, pods []string) {
	for _, p := range pods {
		n.add(key, p)
	}
}

// take returns and forgets the Pods noted for a Service; all is true when
// they were too many to keep.
func (n *notes) take(key string) (pods []string, all bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	set, ok := n.pods[key]
	delete(n.pods, key)
	if ok && set == nil {
		return nil, true
	}
	for p := range set {
		pods = append(pods, p)
	}
	return pods, false
}

// memos holds the memo of each Service left in sync.
type memos struct {
	mu sync.Mutex
	m  map[string]*reconcile.Memo
}

func (m *memos) get(key string) *reconcile.Memo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key]
}

func (m *memos) set(key string, memo *reconcile.Memo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if memo == nil {
		delete(m.m, key)
		return
	}
	m.m[key] = memo
}

// incremental reports whether this run may plan from memos: not beside a
// controller (standby compares with its slices) and not when it also keeps
// Endpoints objects, which are written from all the Service's Pods.
func (c *Controller) incremental() bool {
	return c.opts.Standby == nil && !c.opts.WithEndpoints
}

// planOptions are the options the Service's slices are planned under.
func (c *Controller) planOptions(svc *corev1.Service) reconcile.Options {
	po := c.opts.Plan
	po.ManagedBy = judge.ManagedByOf(svc, po.ManagedBy)
	return po
}

// syncNoted plans a Service from its memo and the noted Pods, and writes
// the plan; false means it could not, and the caller syncs in full.
func (c *Controller) syncNoted(ctx context.Context, key string, svc *corev1.Service, pods []string) (syncer.Outcome, bool) {
	memo := c.memos.get(key)
	if memo == nil || !c.incremental() {
		return syncer.Outcome{}, false
	}
	live := c.cache.SlicesOf(svc.Namespace, svc.Name)
	if c.slices.Stale(key, ours(live, c.opts.Plan.ManagedBy)) {
		// The cache has not yet shown our last writes: wait for it with
		// the memo and the noted Pods kept, rather than read and plan the
		// whole Service only for the guard to refuse it.
		c.notes.addAll(key, pods)
		return syncer.Outcome{Namespace: svc.Namespace, Name: svc.Name, Service: svc, Err: errStale}, true
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	changes := make([]reconcile.PodChange, 0, len(pods))
	members := make(map[string]*corev1.Pod, len(pods))
	nodes := reconcile.Nodes{ByName: map[string]*corev1.Node{}}
	for _, name := range pods {
		var pod *corev1.Pod
		if o, ok, _ := c.cache.Pods.GetByKey(svc.Namespace + "/" + name); ok {
			pod = cluster.PodOf(o)
		}
		changes = append(changes, reconcile.PodChange{Name: name, Pod: pod})
		members[name] = nil
		if pod == nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		members[name] = pod
		if n := pod.Spec.NodeName; n != "" && c.cache.Nodes != nil {
			if o, ok, _ := c.cache.Nodes.GetByKey(n); ok {
				nodes.ByName[n] = o.(*corev1.Node)
			}
		}
	}
	po := c.planOptions(svc)
	trigger, commit, known := c.trigger.Changed(svc, members)
	if !known {
		return syncer.Outcome{}, false
	}
	po.TriggerTime = trigger
	plan, step, ok := memo.Plan(svc, changes, nodes, live, po)
	if !ok {
		c.memos.set(key, nil)
		return syncer.Outcome{}, false
	}
	commit()
	c.opts.Metrics.PlannedBy("memo")
	out := syncer.Outcome{Namespace: svc.Namespace, Name: svc.Name, Service: svc, Plan: plan,
		Input: reconcile.Input{Service: svc}, Attempts: 1}
	if plan.InSync() {
		return out, true
	}
	write := c.opts.Write
	write.ManagedBy = po.ManagedBy
	out.Result, out.Err = apply.Apply(ctx, c.client.DiscoveryV1().EndpointSlices(svc.Namespace), plan, write)
	if out.Err != nil {
		// Part written, or refused: the next sync plans in full from
		// what the cache then shows.
		c.memos.set(key, nil)
		return out, true
	}
	memo.Commit(step, slim(out.Result.Created, out.Result.Updated))
	return out, true
}

// slim gives the memo the written slices as the cache would hold them
// (cluster.Transform): the API server's responses carry managedFields and
// unshared endpoint values the memo need not keep alive.
func slim(lists ...[]*discovery.EndpointSlice) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, l := range lists {
		for _, s := range l {
			c := s.DeepCopy()
			_, _ = cluster.Transform(c)
			out = append(out, c)
		}
	}
	return out
}

// remember keeps the memo of a Service a full sync left in sync, or drops
// the one it had.
func (c *Controller) remember(key string, out syncer.Outcome) {
	var memo *reconcile.Memo
	if c.incremental() && out.Err == nil && out.Held == "" && out.Attempts == 1 && out.Plan != nil && out.Input.Service != nil {
		final := append(slices.Clone(out.Plan.Unchanged), slim(out.Result.Updated, out.Result.Created)...)
		memo, _ = reconcile.NewMemo(out.Input, c.planOptions(out.Input.Service), final)
	}
	c.memos.set(key, memo)
}
