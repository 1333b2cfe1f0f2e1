package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// PlanFlags tune planning; shared by sync, diff and explain.
type PlanFlags struct {
	ManagedBy    string
	MaxEndpoints int
}

// options are the planner's options; syncer.Sync sets the trigger time of
// each write.
func (p PlanFlags) options() reconcile.Options {
	o := reconcile.DefaultOptions()
	o.ManagedBy, o.MaxEndpointsPerSlice = p.ManagedBy, p.MaxEndpoints
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
	// Held says why nothing was written (see holdWhereCurrent).
	Held string
	// Input is what Plan was made from (the Pods feed --with-endpoints).
	Input reconcile.Input
}

// serviceWorkers bounds the Services synced at once by a one-shot run over
// many; each has up to --write-concurrency writes in flight, and the client's
// QPS bounds the total.
const serviceWorkers = 8

// runServices reads, plans and, unless write is nil, writes every target
// through syncer.Sync, several Services at once. step is called as each
// Service finishes; the runs come back in target order.
//
// Where inputs come from was decided by measurement (make bench-cache: 500
// Services x 10 Pods in 20 namespaces on the test API server): through the
// cache, a first `sync --all -A` takes 1.25 s with 6 reads plus one write per
// slice, and a no-op resync 0.48 s with 6 requests, where targeted reads took
// about a dozen requests per Service (50 s and 28 s, throttled by QPS). For
// a single named Service the targeted reads stay: they fetch that Service's
// Pods, slices and few Nodes (3-5 requests, 210 ms for a 5,000-Pod Service
// in make bench-e2e), while the cache would list every Pod and slice of the
// namespace, which costs more as soon as the namespace holds anything else.
func runServices(ctx context.Context, client kubernetes.Interface, targets []resolved, allNamespaces bool, pf PlanFlags, write *apply.Options, hold holdFunc, step func(done int, what string)) []serviceRun {
	runs := make([]serviceRun, len(targets))
	reader := cluster.Reader{Client: client}
	var src syncer.Source = reader
	if len(targets) > 1 {
		c := cluster.NewCache(client, cacheNamespace(targets, allNamespaces))
		if err := c.Fill(ctx); err != nil {
			for i, t := range targets {
				runs[i] = serviceRun{resolved: t}
				runs[i].Err = describe(t.Namespace, t.Name, err)
			}
			return runs
		}
		src = c
	}
	opts := syncer.Options{Plan: pf.options(), Write: write, Retry: reader, Hold: hold, Planner: mirroringPlanner(client)}
	var mu sync.Mutex
	finished := 0
	var g errgroup.Group
	g.SetLimit(serviceWorkers)
	for i, t := range targets {
		g.Go(func() error {
			run := serviceRun{resolved: t}
			if t.Err != nil {
				run.Err = describe(t.Namespace, t.Name, t.Err)
			} else {
				out := syncer.Sync(ctx, src, client.DiscoveryV1(), t.Service, opts)
				run.Plan, run.Result, run.Held, run.Input = out.Plan, out.Result, out.Held, out.Input
				if out.Err != nil {
					run.Err = describe(t.Namespace, t.Name, out.Err)
				}
			}
			runs[i] = run
			mu.Lock()
			finished++
			step(finished, t.Namespace+"/"+t.Name)
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	return runs
}

// cacheNamespace scopes the cache to the targets' one namespace, so that a
// namespace Role suffices, or to every namespace.
func cacheNamespace(targets []resolved, allNamespaces bool) string {
	if allNamespaces {
		return metav1.NamespaceAll
	}
	for _, t := range targets[1:] {
		if t.Namespace != targets[0].Namespace {
			return metav1.NamespaceAll
		}
	}
	return targets[0].Namespace
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
