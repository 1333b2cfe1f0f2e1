package explain

import (
	"fmt"
	"strings"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/mirror"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// checkMirrored judges a Service without selector from its mirror plan
// (pkg/mirror): the plan says what a sync would write, so a plan that is not
// in sync is a finding, as for any other Service.
//   - ours exist and a sync would change them: Stale (the Endpoints object
//     changed while nothing ran, or some of ours went missing);
//   - no slice of any manager although the Endpoints object lists
//     addresses: NoSlices (the mirroring controller is likely down); with
//     none of ours but another manager's, nothing is judged;
//   - the Endpoints object is gone (or asks not to be mirrored) and a sync
//     would delete ours: Orphaned. prune leaves mirrored slices to sync,
//     which deletes them as upstream's mirroring controller does.
func checkMirrored(in checkInput, o Options) []Finding {
	plan, svc := in.plan, in.in.Service
	if plan.InSync() {
		return nil
	}
	base := Finding{Namespace: svc.Namespace, Service: svc.Name, ManagedBy: []string{o.ManagedBy}, Slices: []string{}}
	at := fmt.Sprintf("svc/%s -n %s", svc.Name, svc.Namespace)
	f := base
	f.Command = "kubectl slices sync " + at
	ours := oursOf(plan)
	switch {
	case plan.Service.Reason == mirror.NoEndpoints || plan.Service.Reason == mirror.SkipMirror:
		if len(plan.Delete) == 0 {
			return nil
		}
		f.Kind, f.Slices = FindingOrphaned, names(plan.Delete)
		f.Message = "our mirrored slices outlive what they mirror: " + plan.Service.Message
	case plan.Service.Reason != reconcile.ServiceMirrored:
		return nil
	case len(judge.Live(in.in.Slices)) == 0:
		f.Kind, f.ManagedBy = FindingNoSlices, []string{}
		f.Message = fmt.Sprintf("no EndpointSlices at all although %s: kube-controller-manager's mirroring controller is likely down",
			strings.TrimPrefix(plan.Service.Message, "endpoints are mirrored from "))
	case len(ours) == 0:
		// Another manager (the mirroring controller) publishes it: only
		// our own slices are judged against the Endpoints object.
		return nil
	default:
		f.Kind, f.Slices = FindingStale, ours
		f.Message = fmt.Sprintf("our mirrored slices are stale against their Endpoints object (%s to create, %s to update, %s to delete): %s",
			english.Plural(len(plan.Create), "slice", "slices"), english.Plural(len(plan.Update), "slice", "slices"), english.Plural(len(plan.Delete), "slice", "slices"), plan.Service.Message)
	}
	return []Finding{f}
}

// checkInput is what checkMirrored judges.
type checkInput struct {
	in   reconcile.Input
	plan *reconcile.Plan
}

// oursOf names our live slices a plan touches or keeps.
func oursOf(plan *reconcile.Plan) []string {
	var all []*discovery.EndpointSlice
	all = append(all, plan.Unchanged...)
	all = append(all, plan.Update...)
	all = append(all, plan.Delete...)
	return names(all)
}

// checkLeftovers finds the mirrored slices a Service with a selector still
// has (mirror.Leftovers): upstream's mirroring controller deletes them once
// the Service has a selector, so they publish addresses nothing vouches for
// any more. It returns the input without them, and an Orphaned finding. The
// repair: a sync under a controller's value deletes them (such a run
// stands in for the mirroring controller); under any other value they are
// not ours, and only a delete by hand removes them.
func checkLeftovers(in reconcile.Input, o Options) (reconcile.Input, []Finding) {
	left := mirror.Leftovers(in.Service, in.Slices)
	if len(left) == 0 {
		return in, nil
	}
	svc := in.Service
	gone := map[*discovery.EndpointSlice]bool{}
	for _, s := range left {
		gone[s] = true
	}
	rest := in
	rest.Slices = nil
	for _, s := range in.Slices {
		if !gone[s] {
			rest.Slices = append(rest.Slices, s)
		}
	}
	f := Finding{Namespace: svc.Namespace, Service: svc.Name, Kind: FindingOrphaned, ManagedBy: []string{reconcile.MirroringManagedBy}, Slices: names(left),
		Message: fmt.Sprintf("%s mirrored from Endpoints %s/%s outlive%s the Service's selector: the mirroring controller deletes mirrored slices once a Service has a selector, and until then they still publish their addresses",
			english.Plural(len(left), "slice", "slices"), svc.Namespace, svc.Name, map[bool]string{true: "s"}[len(left) == 1])}
	if reconcile.IsOurs(reconcile.MirroringManagedBy, o.ManagedBy) {
		f.Command = fmt.Sprintf("kubectl slices sync svc/%s -n %s --managed-by %s --force", svc.Name, svc.Namespace, o.ManagedBy)
	} else {
		f.Command = fmt.Sprintf("kubectl delete endpointslice %s -n %s", strings.Join(f.Slices, " "), svc.Namespace)
	}
	return rest, []Finding{f}
}
