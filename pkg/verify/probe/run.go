package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// Run is one verify run: what it reads with, and how. Report reads the
// cluster in rounds and has verdict.Judge judge each.
type Run struct {
	Options
	Settle     bool
	SyncPeriod time.Duration
	// Domain is the cluster domain the DNS replicas serve.
	Domain string
	// Target words the selection for the next command suggested.
	Target string
	// OnlyNodes names the nodes to read (--node); empty, every node.
	OnlyNodes []string
}

// ReadError is a read of the API a round needs that failed: a target not
// found, a Service's slices or what its plan is made from (Namespace and
// Name say which Service), or a read about no one Service (both empty):
// the Nodes, or what several Services are planned from. The command words
// it.
type ReadError struct {
	Namespace, Name string
	Err             error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Report reads a round (the Services' slices and plans, every node, every
// DNS replica) and judges it; with Settle and a DRIFT, it reads a second
// round after SyncPeriod and reports that one. The caller's rights are
// reviewed once for the run. An error is a ReadError or the run's context
// ending (its cause), never a node or a replica that could not be read nor
// a plan that could not be made.
func (r Run) Report(ctx context.Context, targets []syncer.Target, allNamespaces bool) (verdict.Report, error) {
	for _, t := range targets {
		if t.Err != nil {
			return verdict.Report{}, &ReadError{Namespace: t.Namespace, Name: t.Name, Err: t.Err}
		}
	}
	// The nodes before the Services: a name --node gives that is no node
	// fails the run before any Service is planned or any node read.
	nodes, err := Nodes(ctx, r.Client)
	if err != nil {
		return verdict.Report{}, &ReadError{Err: err}
	}
	if nodes, err = pick(nodes, r.OnlyNodes); err != nil {
		return verdict.Report{}, err
	}
	if len(targets) == 0 {
		// As sync: nothing selected is nothing wrong, and no node is read.
		return verdict.Report{Status: verdict.OK, Services: []verdict.ServiceRow{}, Nodes: []verdict.NodeRow{}, Diagnosis: "no Services selected: nothing to verify"}, nil
	}
	svcs, err := r.services(ctx, targets, allNamespaces)
	if err != nil {
		return verdict.Report{}, err
	}
	rights := preflight(ctx, r.Client, ProxyNamespace)
	first := r.round(ctx, rights, nodes, svcs)
	rep := verdict.Judge(first)
	if !r.Settle || rep.Status != verdict.Drift {
		return rep, nil
	}
	select {
	case <-ctx.Done():
		return rep, context.Cause(ctx)
	case <-time.After(r.SyncPeriod):
	}
	// Every node and replica is read again with the slices as they are
	// now: a reading judged against slices newer than it would be neither
	// a fresh verdict nor the first one.
	if svcs, err = r.services(ctx, targets, allNamespaces); err != nil {
		return verdict.Report{}, err
	}
	again := r.round(ctx, rights, nodes, svcs)
	return verdict.Judge(again), nil
}

// NodeNotFoundError is a node --node names that the cluster does not have.
type NodeNotFoundError struct{ Name string }

func (e *NodeNotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Name) }

// pick keeps of nodes those named, in nodes' order; no names keeps every
// node. A name that is no node is an error: verifying fewer nodes than
// asked would read as a verdict on the missing one.
func pick(nodes []*corev1.Node, names []string) ([]*corev1.Node, error) {
	if len(names) == 0 {
		return nodes, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []*corev1.Node
	for _, n := range nodes {
		if want[n.Name] {
			out = append(out, n)
			delete(want, n.Name)
		}
	}
	for _, n := range names {
		if want[n] {
			return nil, &NodeNotFoundError{Name: n}
		}
	}
	return out, nil
}

// Connect sets the client, the transport built from cfg and the rule
// readers.
func (r *Run) Connect(cfg *rest.Config, client kubernetes.Interface) error {
	t, err := NewREST(cfg, client)
	if err != nil {
		return err
	}
	r.Client, r.Transport, r.Readers = client, t, Readers(r.Limit)
	return nil
}

// round reads the nodes and the DNS replicas at once, for svcs: a node
// whose kubelet hangs holds its kube-proxy's reads and its replica's for
// the node timeout each, and the run then waits for one node timeout, not
// two.
func (r Run) round(ctx context.Context, rights rights, nodes []*corev1.Node, svcs []verdict.Service) verdict.Input {
	in := verdict.Input{Services: svcs, HealthTimeout: 2 * r.SyncPeriod, Target: r.Target, Domain: r.Domain, OnlyNodes: r.OnlyNodes}
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.DNS, in.DNSTiming = readDNS(ctx, r.Options, rights, r.Domain, svcs)
	}()
	states := readNodes(ctx, r.Options, rights, nodes, svcs)
	<-done
	in.Nodes, in.Now = states, time.Now()
	return in
}

// services reads each Service's slices and plans it as sync would, writing
// nothing (as diff does), from that one read: the slices judged are those
// the plan was made from, never a second list that may have changed in
// between. syncer.Many reads them as sync does: one Service's slices by
// its label, or one list per namespace for several.
func (r Run) services(ctx context.Context, targets []syncer.Target, allNamespaces bool) ([]verdict.Service, error) {
	outs := syncer.Many(ctx, r.Client, targets, allNamespaces, syncer.Options{Plan: reconcile.DefaultOptions()}, func(int, string, time.Duration) {})
	out := make([]verdict.Service, len(outs))
	for i, o := range outs {
		if o.Input.Service == nil {
			// The read failed: there are no slices to judge. For several
			// Services the read is one fill of a shared cache, whose
			// failure every outcome carries: it is not about the first
			// Service, and naming it would point at the wrong namespace.
			if len(targets) > 1 {
				return nil, &ReadError{Err: o.Err}
			}
			return nil, &ReadError{Namespace: o.Namespace, Name: o.Name, Err: o.Err}
		}
		out[i] = serviceOf(targets[i].Service, o)
	}
	return out, nil
}

// serviceOf is one Service as the judge takes it: its slices as read for
// its plan, and the plan or why there is none.
func serviceOf(svc *corev1.Service, o syncer.Outcome) verdict.Service {
	s := verdict.Service{Service: svc, Slices: byName(o.Input.Slices)}
	switch {
	case o.Err != nil:
		s.PlanUnknown, s.PlanFailed = "cannot plan: "+english.Clip(o.Err.Error(), english.ClipLen), true
	case o.Plan == nil:
		s.PlanUnknown, s.PlanFailed = "no plan", true
	case !o.Plan.Service.Planned():
		s.PlanUnknown = "not planned: " + string(o.Plan.Service.Reason)
	default:
		s.Planned = o.Plan.Final()
	}
	return s
}

// Access is the caller's rights (Review), for the rounds read with them.
type Access struct{ r rights }

// Review reviews the caller's rights for the tiers.
func (r Run) Review(ctx context.Context) Access {
	return Access{preflight(ctx, r.Client, ProxyNamespace)}
}

// Verify is one round of a long-running verifier: svcs planned from src
// (an informer cache, so nothing is listed for them) and its Endpoints
// lookup (the cache's: selectorless Services are mirrored from it), their
// slices as src holds them, nodes and every DNS replica read once with
// a's rights, and that round judged. A Service src cannot load is judged
// without a plan (PlanFailed: the round is UNKNOWN for it), not dropped.
func (r Run) Verify(ctx context.Context, src syncer.Source, endpoints syncer.EndpointsLookup, a Access, nodes []*corev1.Node, svcs []*corev1.Service) verdict.Report {
	in := make([]verdict.Service, len(svcs))
	opts := syncer.Options{Plan: reconcile.DefaultOptions(), Planner: syncer.MirroringPlanner(endpoints)}
	for i, svc := range svcs {
		in[i] = serviceOf(svc, syncer.Sync(ctx, src, r.Client.DiscoveryV1(), svc, opts))
	}
	return verdict.Judge(r.round(ctx, a.r, nodes, in))
}

// byName is the slices in name order, as the API lists them: a cache
// serves them in no order.
func byName(in []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Readers are the rule readers by kube-proxy mode, pkg/verify/proxyread's
// nftables and iptables readers, each exec's answer bounded by limit (the
// --max-answer-size); a mode without one leaves every node's rules tier
// UNKNOWN ("no rule reader").
func Readers(limit int64) map[proxyread.Mode]proxyread.Reader {
	out := map[proxyread.Mode]proxyread.Reader{}
	for _, m := range []proxyread.Mode{proxyread.ModeNftables, proxyread.ModeIptables} {
		lim := proxyread.DefaultLimits
		lim.ExecBytes = limit
		r, err := proxyread.For(m, lim)
		if err == nil {
			out[m] = r
		}
	}
	return out
}
