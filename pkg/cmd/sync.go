package cmd

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// maxAttempts bounds re-planning after a write conflict.
const maxAttempts = 4

// PlanFlags tune planning; shared by sync, diff and explain.
type PlanFlags struct {
	ManagedBy    string
	MaxEndpoints int
}

func (p PlanFlags) options(svc *corev1.Service) reconcile.Options {
	o := reconcile.DefaultOptions()
	o.ManagedBy, o.MaxEndpointsPerSlice = p.ManagedBy, p.MaxEndpoints
	// A one-shot run has no event history; upstream stamps the Service's
	// creation time on its first sync of a Service, and so do we.
	o.TriggerTime = svc.CreationTimestamp.Time
	return o
}

func (p PlanFlags) validate() error {
	if p.MaxEndpoints < 1 || p.MaxEndpoints > reconcile.MaxEndpointsPerSliceLimit {
		return usageError("--max-endpoints-per-slice must be between 1 and %d, got %d", reconcile.MaxEndpointsPerSliceLimit, p.MaxEndpoints)
	}
	if p.ManagedBy == "" {
		return usageError("--managed-by must not be empty")
	}
	return nil
}

// serviceRun is the outcome of planning (and maybe writing) one Service.
type serviceRun struct {
	resolved
	Plan   *reconcile.Plan
	Result apply.Result
	// Input is what Plan was made from (the Pods feed --with-endpoints).
	Input reconcile.Input
}

// runService reads, plans and, unless write is nil, writes one Service. A
// conflict re-reads the Service and everything else and plans again.
func runService(ctx context.Context, client kubernetes.Interface, r resolved, pf PlanFlags, write *apply.Options) serviceRun {
	run := serviceRun{resolved: r}
	if r.Err != nil {
		run.Err = describe(r.Namespace, r.Name, r.Err)
		return run
	}
	svc := r.Service
	reader := cluster.Reader{Client: client}
	for attempt := 1; ; attempt++ {
		in, err := reader.Load(ctx, svc)
		if err != nil {
			run.Err = describe(r.Namespace, r.Name, err)
			return run
		}
		run.Input = in
		run.Plan, err = planService(ctx, client, in, pf)
		if err != nil {
			run.Err = describe(r.Namespace, r.Name, err)
			return run
		}
		if write == nil || run.Plan.InSync() {
			return run
		}
		run.Result, err = apply.Apply(ctx, client.DiscoveryV1().EndpointSlices(svc.Namespace), run.Plan, *write)
		if err == nil {
			return run
		}
		if !errors.Is(err, apply.ErrConflict) || attempt >= maxAttempts {
			run.Err = describe(r.Namespace, r.Name, err)
			return run
		}
		// Someone wrote in between: start again from a fresh read.
		if svc, err = client.CoreV1().Services(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{}); err != nil {
			run.Err = describe(r.Namespace, r.Name, err)
			return run
		}
	}
}

// forceNeeded explains why writing under the controllers' own managed-by
// values needs --force.
func forceNeeded(managedBy string) error {
	who := map[string]string{
		reconcile.ControllerManagedBy: "kube-controller-manager's EndpointSlice controller",
		reconcile.MirroringManagedBy:  "kube-controller-manager's EndpointSlice mirroring controller",
	}[managedBy]
	if who == "" {
		return nil
	}
	return usageError("refusing to write under managed-by %q: %s owns that value and would fight kubectl-slices over the slices; use the default (%s), or pass --force if that controller is off for good",
		managedBy, who, reconcile.DefaultManagedBy)
}

func countOutcome(runs []serviceRun) (ok, failed int) {
	for _, r := range runs {
		if r.Err != nil {
			failed++
		} else {
			ok++
		}
	}
	return ok, failed
}

// exitFor: all good → 0; some failed, some synced → 1; all failed → the
// first failure's own code.
func exitFor(runs []serviceRun) error {
	ok, failed := countOutcome(runs)
	if failed == 0 {
		return nil
	}
	for _, r := range runs {
		if r.Err != nil {
			if ok > 0 {
				return &ExitError{Code: ExitChanges, Err: fmt.Errorf("%d of %d Services failed", failed, len(runs))}
			}
			return &ExitError{Code: ExitCode(r.Err), Err: errAlreadyPrinted}
		}
	}
	return nil
}

// errAlreadyPrinted marks an error whose message was already shown.
var errAlreadyPrinted = errors.New("")
