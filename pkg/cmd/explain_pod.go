package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// explain pod/NAME and explain --ip: the same planner, reasons and drift
// as explain svc (pkg/explain), seen from a Pod or an address.

// source is the report's source field: where the objects were read.
func (o *ExplainOptions) source() string {
	if o.Local {
		return "local"
	}
	return "cluster"
}

// runPods explains each Pod; the exit code says whether any Service that
// selects one does not publish it as desired.
func (o *ExplainOptions) runPods(ctx context.Context) error {
	in, err := o.readPods(ctx)
	if err != nil {
		return err
	}
	view := func(in reconcile.Input) (explain.ServiceView, error) { return o.view(ctx, in) }
	reports, inSync, err := explain.BuildPods(explain.PodsInput{Pods: in.Pods, Services: in.Services, Nodes: in.Nodes, SlicesOf: in.SlicesOf},
		view, o.source(), explain.Options{ManagedBy: o.Plan.ManagedBy, MaxEndpointsPerSlice: o.Plan.MaxEndpoints})
	if err != nil {
		return err
	}
	if o.Output != "" {
		err = printers.PodsData(o.Out, o.Output, reports)
	} else {
		err = printers.ExplainPods(o.Out, printers.StyleFor(o.Color, o.Out), reports)
	}
	if err != nil {
		return err
	}
	return exit.ChangesIf(!inSync)
}

// view plans one Service with the Pods in question, printing the
// planner's warnings on stderr as explain svc does.
func (o *ExplainOptions) view(ctx context.Context, in reconcile.Input) (explain.ServiceView, error) {
	plan, err := o.plan(ctx, in)
	if err != nil {
		return explain.ServiceView{}, exit.Describe(in.Service.Namespace, in.Service.Name, err)
	}
	printers.Warnings(o.ErrOut, printers.StyleFor(o.Color, o.ErrOut), plan)
	return explain.ServiceView{Input: in, Plan: plan, ManagedBy: judge.ManagedByOf(in.Service, o.Plan.ManagedBy)}, nil
}

// readPods reads the Pods and what judges them, from the cluster or -f.
func (o *ExplainOptions) readPods(ctx context.Context) (cluster.PodInputs, error) {
	var in cluster.PodInputs
	var err error
	if o.Local {
		m, rerr := o.readManifests(ctx)
		if rerr != nil {
			return in, rerr
		}
		in, err = m.LoadPods(o.namespace, o.Target.Pods, o.Target.Selector)
	} else {
		client, cerr := o.Clientset()
		if cerr != nil {
			return in, cerr
		}
		in, err = cluster.Reader{Client: client}.LoadPods(ctx, o.namespace, o.Target.Pods, o.Target.Selector)
	}
	var nf *cluster.PodNotFoundError
	switch {
	case errors.As(err, &nf):
		return in, &exit.Error{Code: exit.NotFound, Err: fmt.Errorf("%v: check the name and the namespace (-n; kubectl get pods -n %s lists them)", nf, nf.Namespace)}
	case err != nil && o.Local:
		return in, exit.Usagef("%v: the API server would refuse it", err)
	case err != nil:
		return in, exit.Cluster(err)
	}
	return in, nil
}

// readManifests reads -f as explain svc --local does.
func (o *ExplainOptions) readManifests(ctx context.Context) (*cluster.Manifests, error) {
	limit, _ := args.Size("--max-input-size", o.MaxInputSize)
	m, err := cluster.ReadManifests(ctx, o.Filenames, cluster.ReadOptions{MaxBytes: limit, Stdin: o.In})
	if ctx.Err() != nil {
		return nil, exit.FromSignal(ctx)
	}
	if err != nil {
		return nil, exit.Usagef("cannot read %v: %v", o.Filenames, err)
	}
	return m, nil
}

// runIP explains an address: 3 when nothing holds or publishes it, 1 when
// a publication is stale or not what the planner would publish, or a
// Service that selects its Pod does not publish it.
func (o *ExplainOptions) runIP(ctx context.Context) error {
	addr, _ := netip.ParseAddr(o.Target.IP)
	scope := o.namespace
	if o.AllNamespaces {
		scope = ""
	}
	var in cluster.IPInputs
	var err error
	if o.Local {
		m, rerr := o.readManifests(ctx)
		if rerr != nil {
			return rerr
		}
		if in, err = m.LoadIP(o.namespace, scope, addr); err != nil {
			return exit.Usagef("%v: the API server would refuse it", err)
		}
	} else {
		client, cerr := o.Clientset()
		if cerr != nil {
			return cerr
		}
		if in, err = (cluster.Reader{Client: client}).LoadIP(ctx, scope, addr); err != nil {
			return exit.Cluster(err)
		}
	}
	view := func(in reconcile.Input) (explain.ServiceView, error) { return o.view(ctx, in) }
	views, err := explain.IPViews(in.Services, in.Holders, in.Slices, in.Nodes, view)
	if err != nil {
		return err
	}
	r := explain.BuildIP(explain.IPInput{Address: addr, Namespace: scope, Holders: in.Holders, Slices: in.Holding, Endpoints: in.Endpoints, Views: views},
		explain.Options{ManagedBy: o.Plan.ManagedBy, MaxEndpointsPerSlice: o.Plan.MaxEndpoints})
	r.Source = o.source()
	if o.Output != "" {
		err = printers.Data(o.Out, o.Output, r)
	} else {
		err = printers.ExplainIP(o.Out, printers.StyleFor(o.Color, o.Out), r)
	}
	switch {
	case err != nil:
		return err
	case !r.Found:
		return &exit.Error{Code: exit.NotFound, Err: exit.ErrPrinted}
	}
	return exit.ChangesIf(!r.InSync)
}
