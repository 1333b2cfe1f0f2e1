package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// ReleaseOptions tune Release.
type ReleaseOptions struct {
	// Write carries our managed-by value and the dry-run mode; apply refuses
	// to delete any slice of another manager.
	Write apply.Options
	// Force deletes ours even when the controller's slices differ or are
	// missing.
	Force bool
	// Wait, when positive, re-reads every Poll until the controller's slices
	// publish what ours do, for at most this long.
	Wait, Poll time.Duration
}

// ReleaseOutcome is what happened to one Service.
type ReleaseOutcome struct {
	Service *corev1.Service
	// Judgement is the last comparison made.
	Judgement judge.Handback
	// Result lists the slices deleted (or, in a dry run, that would be).
	Result apply.Result
	// Refused says why ours were kept; empty when released or when there
	// was nothing to release.
	Refused string
	// Waited is how long --wait waited for the controller.
	Waited time.Duration
	Err    error
	// Endpoints is what happened to the Service's v1 Endpoints object.
	Endpoints EndpointsRelease
}

// maxConflicts bounds re-reads after a slice of ours changed under a delete.
const maxConflicts = 5

// Release hands a Service's slices back to kube-controller-manager: it
// deletes ours only once the controller's own slices exist and publish the
// same endpoints (addresses, conditions, node, zone, ports), so that no
// consumer sees the Service lose an endpoint, nor a ready one turn not
// ready, at any moment. Each delete carries the resourceVersion and UID read,
// so a slice of ours rewritten meanwhile is re-read and judged again.
//
// The Service's Endpoints object, when ours, is handed back at the same
// time (ReleaseEndpoints), within the same --wait.
func Release(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, opts ReleaseOptions) ReleaseOutcome {
	epc := make(chan EndpointsRelease, 1)
	go func() { epc <- ReleaseEndpoints(ctx, client, svc, opts) }()
	out := releaseSlices(ctx, client, svc, opts)
	out.Endpoints = <-epc
	return out
}

func releaseSlices(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, opts ReleaseOptions) ReleaseOutcome {
	out := ReleaseOutcome{Service: svc}
	reader := cluster.Reader{Client: client}
	start, conflicts := time.Now(), 0
	for {
		live, err := reader.Slices(ctx, svc.Namespace, svc.Name)
		if err != nil {
			out.Err = err
			return out
		}
		// Slices mirrored from a selector-less Service's Endpoints are handed
		// back to the mirroring controller, and only once its slices publish
		// the same endpoints.
		hb := judge.JudgeHandbackTo(live, opts.Write.ManagedBy, judge.ControllerOf(svc), nil)
		out.Judgement = hb
		if len(hb.Ours) == 0 {
			return out
		}
		mirrored := mirrors(svc, hb.Ours)
		if (len(hb.Controller) > 0 && hb.Same) || opts.Force {
			res, err := apply.Apply(ctx, client.DiscoveryV1().EndpointSlices(svc.Namespace), &reconcile.Plan{Delete: hb.Ours}, opts.Write)
			out.Result.Add(res)
			if errors.Is(err, apply.ErrConflict) && conflicts < maxConflicts {
				conflicts++
				continue
			}
			out.Err = err
			return out
		}
		// The controller never publishes a Service without selector or of
		// type ExternalName: there is nothing to wait for.
		if opts.Wait > 0 && time.Since(start) < opts.Wait && (mirrored || !unplanned(svc)) {
			select {
			case <-ctx.Done():
				out.Err = ctx.Err()
				return out
			case <-time.After(opts.Poll):
			}
			out.Waited = time.Since(start)
			continue
		}
		out.Refused = refusal(svc, hb, opts.Wait > 0, mirrored)
		return out
	}
}

// maxDifferences bounds the differences a refusal lists.
const maxDifferences = 20

func refusal(svc *corev1.Service, hb judge.Handback, waited, mirrored bool) string {
	hint := "wait for it with --wait, or pass --force to delete ours anyway"
	if waited {
		hint = "it did not catch up within --wait; wait longer, or pass --force to delete ours anyway"
	}
	if len(hb.Controller) == 0 && mirrored {
		return fmt.Sprintf("kube-controller-manager's mirroring controller publishes no slices for svc/%s: it is likely still down, and deleting ours would leave the Service without endpoints; %s", svc.Name, hint)
	}
	if len(hb.Controller) == 0 && unplanned(svc) {
		return fmt.Sprintf("svc/%s has no selector or is ExternalName: kube-controller-manager will publish nothing for it, and our slices are orphans; kubectl slices prune -n %s deletes them", svc.Name, svc.Namespace)
	}
	if len(hb.Controller) == 0 {
		return fmt.Sprintf("kube-controller-manager publishes no slices for svc/%s: its EndpointSlice controller is likely still down, and deleting ours would leave the Service without endpoints; %s", svc.Name, hint)
	}
	var b strings.Builder
	n := fmt.Sprintf("%d endpoints", len(hb.Differences))
	if len(hb.Differences) == 1 {
		n = "1 endpoint"
	}
	fmt.Fprintf(&b, "kube-controller-manager's slices for svc/%s differ from ours in %s; %s:", svc.Name, n, hint)
	for i, d := range hb.Differences {
		if i == maxDifferences {
			fmt.Fprintf(&b, "\n  ... and %d more", len(hb.Differences)-maxDifferences)
			break
		}
		b.WriteString("\n  " + d)
	}
	return b.String()
}

func unplanned(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Selector) == 0
}

// mirrors: some of ours are mirrored from the Service's Endpoints.
func mirrors(svc *corev1.Service, ours []*discovery.EndpointSlice) bool {
	for _, s := range ours {
		if explain.MirrorOf(s, svc) {
			return true
		}
	}
	return false
}

// releaseWorkers bounds the Services released at once; each has up to
// Write.Workers writes in flight.
const releaseWorkers = 8

// ReleaseAll releases several Services at once; a nil Service (one that
// was not found) gets a zero outcome. Outcomes come back in input order.
func ReleaseAll(ctx context.Context, client kubernetes.Interface, svcs []*corev1.Service, opts ReleaseOptions) []ReleaseOutcome {
	outs := make([]ReleaseOutcome, len(svcs))
	var g errgroup.Group
	g.SetLimit(releaseWorkers)
	for i, svc := range svcs {
		if svc == nil {
			continue
		}
		g.Go(func() error {
			outs[i] = Release(ctx, client, svc, opts)
			return nil
		})
	}
	_ = g.Wait()
	return outs
}
