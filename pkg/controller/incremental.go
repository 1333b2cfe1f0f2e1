package controller

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// The incremental path. A readiness flip in a Service of 20,000 Pods
// changes one endpoint, yet planning it in full reads, sorts and plans all
// 20,000 Pods. Instead the handlers note which Pods changed, per Service,
// and a Service whose slices were last left in sync keeps a reconcile.Memo:
// the next sync plans from the noted Pods alone, with Compute's result
// (reconcile.TestMemoAgainstCompute). The memo plans through syncer.Sync
// (memoSync is its Incremental), so its plan is written, and a conflict
// retried, as any other. Anything the memo cannot vouch for (a Service,
// Node or slice change it does not expect, too many Pods at once, a
// conflict) drops the memo and plans in full, as before.

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

// memoSync is a sync's syncer.Incremental: the Service's memo and the
// Pods noted since its last sync.
type memoSync struct {
	c    *Controller
	key  string
	pods []string
	memo *reconcile.Memo
	step *reconcile.Step
}

// Changes reads the noted Pods and their Nodes from the cache; false when
// the Service has no memo, and the sync plans in full.
func (m *memoSync) Changes(_ context.Context, svc *corev1.Service) (syncer.Changes, bool, error) {
	if m.memo = m.c.memos.get(m.key); m.memo == nil {
		return syncer.Changes{}, false, nil
	}
	live := m.c.cache.SlicesOf(svc.Namespace, svc.Name)
	if m.c.slices.Stale(m.key, ours(live, m.c.opts.Plan.ManagedBy)) {
		// The cache has not yet shown our last writes: wait for it with
		// the memo and the noted Pods kept, rather than read and plan the
		// whole Service only for the guard to refuse it.
		m.c.notes.addAll(m.key, m.pods)
		return syncer.Changes{}, true, errStale
	}
	pods, nodes := m.c.cache.PodsAndNodes(svc.Namespace, m.pods, labels.SelectorFromSet(svc.Spec.Selector))
	return syncer.Changes{Pods: pods, Nodes: nodes, Slices: live}, true, nil
}

// Plan plans from the memo; a memo that cannot is dropped.
func (m *memoSync) Plan(svc *corev1.Service, ch syncer.Changes, po reconcile.Options) (*reconcile.Plan, bool) {
	plan, step, ok := m.memo.Plan(svc, ch.Pods, ch.Nodes, ch.Slices, po)
	if !ok {
		m.c.memos.set(m.key, nil)
		return nil, false
	}
	m.step = step
	return plan, true
}

// Written commits the plan to the memo once all of it is written.
func (m *memoSync) Written(res apply.Result, err error) {
	if err != nil {
		// Part written, or refused: the next sync plans in full from
		// what the cache then shows.
		m.c.memos.set(m.key, nil)
		return
	}
	m.memo.Commit(m.step, slices.Concat(res.Created, res.Updated))
}

// remember keeps the memo of a Service a full sync left in sync, or drops
// the one it had.
func (c *Controller) remember(key string, out syncer.Outcome) {
	var memo *reconcile.Memo
	if c.incremental() && out.Err == nil && out.Held == "" && out.Attempts == 1 && out.Plan != nil && out.Input.Service != nil {
		// The memo keeps only the names and versions of these slices
		// (the cache holds them), so the API server's responses,
		// managedFields and all, are not kept alive by it.
		final := slices.Concat(out.Plan.Unchanged, out.Result.Updated, out.Result.Created)
		memo, _ = reconcile.NewMemo(out.Input, c.planOptions(out.Input.Service), final)
	}
	c.memos.set(key, memo)
}
