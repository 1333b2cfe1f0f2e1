package cmd

// The hooks in this file route selectorless Services to the mirror planner
// (syncer.PlanService, with Endpoints read by GET) and write legacy v1 Endpoints for sync --with-endpoints. They are kept
// apart from runService so that the one "plan a Service" call and the one
// "after the slices, the Endpoints" call are all the sync loop needs.

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// endpointsGetter reads a Service's Endpoints object with a GET: one-shot
// commands plan a few Services and need no Endpoints cache.
func endpointsGetter(client kubernetes.Interface) syncer.EndpointsLookup {
	return func(ctx context.Context, ns, name string) (*corev1.Endpoints, error) {
		return getEndpoints(ctx, client, ns, name)
	}
}

// mirroringPlanner is syncer.PlanService as syncer.Sync's planner, reading
// Endpoints with a GET.
func mirroringPlanner(client kubernetes.Interface) syncer.Planner {
	return syncer.MirroringPlanner(endpointsGetter(client))
}

// getEndpoints reads the Endpoints object of a Service; nil when absent.
func getEndpoints(ctx context.Context, client kubernetes.Interface, ns, name string) (*corev1.Endpoints, error) {
	ep, err := client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read endpoints %s/%s: %w", ns, name, err)
	}
	return ep, nil
}

// endpointsRun is the outcome of --with-endpoints for one Service.
type endpointsRun struct {
	Plan    *endpoints.Plan
	Written *corev1.Endpoints
	Err     error
}

// syncEndpoints plans and writes the legacy Endpoints object of a Service
// whose slices were synced, from the Pods that sync read. A conflict re-reads
// the Endpoints object and plans again.
func syncEndpoints(ctx context.Context, client kubernetes.Interface, run serviceRun, managedBy string, write apply.Options) endpointsRun {
	var er endpointsRun
	svc := run.Input.Service
	if run.Err != nil || svc == nil {
		return er
	}
	// The same trigger-time rule as the slices' (syncer.LatestChange).
	opts := endpoints.Options{ManagedBy: managedBy, TriggerTime: syncer.LatestChange(svc, run.Input.Pods)}
	// A conflict re-reads the Endpoints object and plans again, with backoff.
	err := retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return errors.Is(err, apply.ErrConflict) && ctx.Err() == nil
	}, func() error {
		live, err := getEndpoints(ctx, client, svc.Namespace, svc.Name)
		if err != nil {
			return err
		}
		if er.Plan, err = endpoints.Compute(endpoints.Input{Service: svc, Pods: run.Input.Pods, Live: live}, opts); err != nil {
			return err
		}
		er.Written, err = apply.Endpoints(ctx, client.CoreV1().Endpoints(svc.Namespace), er.Plan, write)
		return err
	})
	if err != nil {
		er.Err = describe(svc.Namespace, svc.Name, err)
	}
	return er
}

// printEndpoints writes one line per Service about its Endpoints object.
func printEndpoints(w io.Writer, st printers.Style, run serviceRun, er endpointsRun, dryRun apply.DryRun) {
	if er.Plan == nil {
		return
	}
	name := st.Bold(fmt.Sprintf("endpoints %s/%s", run.Namespace, run.Name))
	p := er.Plan
	switch p.Action {
	case endpoints.Skip:
		fmt.Fprintf(w, "%s %s: %s\n", name, st.Yellow("skipped"), p.Message)
	case endpoints.None:
		if p.Desired == nil {
			fmt.Fprintf(w, "%s %s: %s\n", name, st.Yellow("skipped"), p.Message)
			return
		}
		fmt.Fprintf(w, "%s %s: %d ready, %d not ready addresses\n", name, st.Green("in sync"), p.Ready, p.NotReady)
	default:
		verb := map[endpoints.Action]string{endpoints.Create: "created", endpoints.Update: "updated"}[p.Action]
		if dryRun != apply.DryRunNone {
			verb = "would be " + verb + " (dry run: " + string(dryRun) + ")"
		}
		extra := ""
		if p.Truncated {
			extra = fmt.Sprintf(" (truncated to %d: annotation %s=%s)", endpoints.MaxCapacity, corev1.EndpointsOverCapacity, endpoints.Truncated)
		}
		fmt.Fprintf(w, "%s %s: %d ready, %d not ready addresses%s\n", name, st.Green(verb), p.Ready, p.NotReady, extra)
	}
}

// endpointsOutcome prints the Endpoints lines and folds Endpoints failures
// into the Service runs, so they count for the exit code and the failure
// lines like any other.
func endpointsOutcome(w, errW io.Writer, st, errSt printers.Style, runs []serviceRun, epRuns []endpointsRun, dryRun apply.DryRun) []serviceRun {
	for i, er := range epRuns {
		printEndpoints(w, st, runs[i], er, dryRun)
		if er.Err != nil && runs[i].Err == nil {
			fmt.Fprintf(errW, "%s %v\n", errSt.Red("error:"), er.Err)
			runs[i].Err = er.Err
		}
	}
	return runs
}

// plan is explain's planning step: offline (--local) there is no Endpoints
// object to mirror from, so only pkg/reconcile plans.
func (o *ExplainOptions) plan(ctx context.Context, in reconcile.Input) (*reconcile.Plan, error) {
	if o.Local {
		return reconcile.Compute(in, o.Plan.options())
	}
	client, err := o.Clientset()
	if err != nil {
		return nil, err
	}
	return syncer.PlanService(ctx, endpointsGetter(client), in, o.Plan.options())
}
