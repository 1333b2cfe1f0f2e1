package proxyprobe

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/proxyread"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify"
)

// Run is one verify: it reads the Services' slices and the Nodes, probes
// every node and judges them; with Settle, nodes that drift are read
// again, once, after SyncPeriod, with the slices as they are then.
type Run struct {
	Options
	Settle     bool
	SyncPeriod time.Duration
	// Domain is the cluster domain the DNS replicas serve.
	Domain string
	// Target words the selection for the next command suggested.
	Target string
}

// Verify runs it over the resolved targets; an error is a target not
// found or a read of the API that failed (the slices, the Nodes), not a
// node that could not be verified nor a plan that could not be made.
func (r Run) Verify(ctx context.Context, targets []syncer.Target, allNamespaces bool) (verify.Report, error) {
	if len(targets) == 0 {
		// As sync: nothing selected is nothing wrong, and no node is read.
		return verify.Report{Status: verify.OK, Services: []verify.ServiceRow{}, Nodes: []verify.NodeRow{}, Diagnosis: "no Services selected: nothing to verify"}, nil
	}
	in, err := r.input(ctx, targets, allNamespaces)
	if err != nil {
		return verify.Report{}, err
	}
	nodes, err := Nodes(ctx, r.Client)
	if err != nil {
		return verify.Report{}, exit.Describe("", "", err)
	}
	in.Nodes, in.DNS = r.readAll(ctx, nodes, in.Services)
	in.Now = time.Now()
	rep := verify.Verify(in)
	if !r.Settle || rep.Status != verify.Drift {
		return rep, nil
	}
	select {
	case <-ctx.Done():
		return rep, exit.FromSignal(ctx)
	case <-time.After(r.SyncPeriod):
	}
	// Every node and replica is read again with the slices as they are
	// now: a reading judged against slices newer than it would be neither
	// a fresh verdict nor the first one.
	again, err := r.input(ctx, targets, allNamespaces)
	if err != nil {
		return verify.Report{}, err
	}
	again.Nodes, again.DNS = r.readAll(ctx, nodes, again.Services)
	again.Now = time.Now()
	return verify.Verify(again), nil
}

// readAll reads the nodes and the DNS replicas at once: a node whose
// kubelet hangs holds its kube-proxy's reads and its replica's for the node
// timeout each, and the run then waits for one node timeout, not two.
func (r Run) readAll(ctx context.Context, nodes []*corev1.Node, svcs []verify.Service) ([]verify.NodeState, []verify.DNSRow) {
	var dns []verify.DNSRow
	done := make(chan struct{})
	go func() {
		defer close(done)
		dns = DNS(ctx, r.Options, r.Domain, svcs)
	}()
	states := Probe(ctx, r.Options, nodes, svcs)
	<-done
	return states, dns
}

// input reads the slices of the Services, one list per namespace, and
// plans them as sync would, without writing.
func (r Run) input(ctx context.Context, targets []syncer.Target, allNamespaces bool) (verify.Input, error) {
	in := verify.Input{HealthTimeout: 2 * r.SyncPeriod, Target: r.Target}
	svcs, err := Services(targets)
	if err != nil {
		return in, err
	}
	plans := plan(ctx, r.Client, targets, allNamespaces)
	byNS := map[string]map[string][]*discoveryv1.EndpointSlice{}
	for _, svc := range svcs {
		if _, ok := byNS[svc.Namespace]; !ok {
			var err error
			if byNS[svc.Namespace], err = slicesByService(ctx, r.Client, svc.Namespace); err != nil {
				return in, exit.Describe(svc.Namespace, "", err)
			}
		}
		in.Services = append(in.Services, verify.Service{Service: svc, Slices: byNS[svc.Namespace][svc.Name]})
	}
	for i := range in.Services {
		in.Services[i].Planned, in.Services[i].PlanUnknown, in.Services[i].PlanFailed = plans[i].slices, plans[i].unknown, plans[i].failed
	}
	return in, nil
}

type planned struct {
	slices  []*discoveryv1.EndpointSlice
	unknown string
	// failed: the plan could not be made, as opposed to a Service the
	// controller does not plan.
	failed bool
}

// plan plans each Service as sync would, writing nothing (as diff does):
// the slices the plan leaves, or why there is none to hold the API's
// against.
func plan(ctx context.Context, client kubernetes.Interface, targets []syncer.Target, allNamespaces bool) []planned {
	outs := syncer.Many(ctx, client, targets, allNamespaces, syncer.Options{Plan: reconcile.DefaultOptions()}, func(int, string, time.Duration) {})
	out := make([]planned, len(outs))
	for i, o := range outs {
		switch {
		case o.Err != nil:
			out[i].unknown, out[i].failed = "cannot plan: "+oneLine(o.Err.Error()), true
		case o.Plan == nil:
			out[i].unknown, out[i].failed = "no plan", true
		case !o.Plan.Service.Planned():
			out[i].unknown = "not planned: " + string(o.Plan.Service.Reason)
		default:
			out[i].slices = o.Plan.Final()
		}
	}
	return out
}

func slicesByService(ctx context.Context, client kubernetes.Interface, ns string) (map[string][]*discoveryv1.EndpointSlice, error) {
	list, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName})
	if err != nil {
		return nil, err
	}
	out := map[string][]*discoveryv1.EndpointSlice{}
	for i := range list.Items {
		s := &list.Items[i]
		name := s.Labels[discoveryv1.LabelServiceName]
		out[name] = append(out[name], s)
	}
	return out, nil
}

// Readers are the rule readers by kube-proxy mode, pkg/proxyread's
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

// Exit is the run's exit code: agree 0, drift exit.Changes, could not
// verify (UNKNOWN or PENDING) exit.NotVerified.
func Exit(s verify.Status) error {
	switch s {
	case verify.OK:
		return nil
	case verify.Drift:
		return &exit.Error{Code: exit.Changes, Err: exit.ErrPrinted}
	}
	return &exit.Error{Code: exit.NotVerified, Err: exit.ErrPrinted}
}

// Services are the resolved targets' Services; a target not found is the
// run's error, worded as every command words it.
func Services(targets []syncer.Target) ([]*corev1.Service, error) {
	for _, t := range targets {
		if t.Err != nil {
			return nil, exit.Describe(t.Namespace, t.Name, t.Err)
		}
	}
	return syncer.Services(targets), nil
}

// Words is the selection as the user would type it again, for the next
// command a report suggests.
func Words(argv []string, sel syncer.Selection) string {
	w := append([]string(nil), argv...)
	if sel.Selector != "" {
		w = append(w, "-l", sel.Selector)
	}
	if sel.All {
		w = append(w, "--all")
	}
	if sel.AllNamespaces {
		return strings.Join(append(w, "-A"), " ")
	}
	return strings.Join(append(w, "-n", sel.Namespace), " ")
}
