package explain

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Finding kinds about the v1 Endpoints objects sync --with-endpoints writes.
const (
	// FindingOrphanedEndpoints: an Endpoints object of ours whose Service is gone,
	// has no selector or is ExternalName (see EndpointsOrphans).
	FindingOrphanedEndpoints FindingKind = "OrphanedEndpoints"
	// FindingStaleEndpoints: an Endpoints object of ours that no longer carries
	// what the Endpoints controller would write for the Service's Pods.
	FindingStaleEndpoints FindingKind = "StaleEndpoints"
)

// EndpointsOrphan is an Endpoints object of ours that should not exist.
type EndpointsOrphan struct {
	Endpoints *corev1.Endpoints
	Reason    OrphanReason
	Message   string
}

// EndpointsOrphans finds, among eps, the objects marked as ours
// (endpoints.kubernetes.io/managed-by: managedBy) that should not exist:
//
//   - the Service is gone: upstream's Endpoints controller deletes the
//     object then (syncService on a missing Service, and at start-up for
//     every object without a Service);
//   - the Service has no selector or is ExternalName: the controller
//     writes nothing for it, and an object we wrote while it had a
//     selector keeps the addresses of Pods it no longer selects (which the
//     mirroring controller would go on publishing as slices).
//
// An object without our exact mark (hand-written, the controller's,
// anyone's) is never returned, whatever its Service; neither is one being
// deleted or a leader-election record. service looks a Service up (nil
// when there is none). The result is sorted by namespace and name.
func EndpointsOrphans(eps []*corev1.Endpoints, managedBy string, service func(namespace, name string) *corev1.Service) []EndpointsOrphan {
	var out []EndpointsOrphan
	for _, ep := range eps {
		if !OursEndpoints(ep, managedBy) || ep.DeletionTimestamp != nil {
			continue
		}
		if _, leader := ep.Annotations["control-plane.alpha.kubernetes.io/leader"]; leader {
			continue
		}
		o := EndpointsOrphan{Endpoints: ep}
		svc := service(ep.Namespace, ep.Name)
		switch {
		case svc == nil:
			o.Reason, o.Message = ServiceGone, fmt.Sprintf("service %s/%s no longer exists", ep.Namespace, ep.Name)
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			o.Reason, o.Message = ExternalName, fmt.Sprintf("service %s/%s is ExternalName: it has no endpoints", ep.Namespace, ep.Name)
		case len(svc.Spec.Selector) == 0:
			o.Reason, o.Message = NoSelector, fmt.Sprintf("service %s/%s has no selector: its Endpoints object is written by hand, and ours lists Pods it no longer selects", ep.Namespace, ep.Name)
		default:
			continue
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Endpoints, out[j].Endpoints
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// OursEndpoints: the object carries our exact managed-by mark.
func OursEndpoints(ep *corev1.Endpoints, managedBy string) bool {
	return ep != nil && managedBy != "" && ep.Labels[endpoints.LabelManagedBy] == managedBy
}

// EndpointsOrphanFindings turns Endpoints orphans into findings.
func EndpointsOrphanFindings(orphans []EndpointsOrphan, managedBy string) []Finding {
	out := make([]Finding, 0, len(orphans))
	for _, o := range orphans {
		ep := o.Endpoints
		out = append(out, Finding{Namespace: ep.Namespace, Service: ep.Name, Kind: FindingOrphanedEndpoints, ManagedBy: []string{managedBy}, Slices: []string{},
			Message: fmt.Sprintf("our Endpoints object outlives its Service (%s): %s", o.Reason, o.Message), Command: "kubectl slices prune -n " + ep.Namespace})
	}
	return out
}

// EndpointsFinding judges an Endpoints object of ours against its plan
// (endpoints.Compute with the object as Live): stale when the plan would
// update it. nil when it is in sync or not ours.
func EndpointsFinding(plan *endpoints.Plan, managedBy string) *Finding {
	if plan == nil || plan.Action != endpoints.Update || !OursEndpoints(plan.Live, managedBy) {
		return nil
	}
	ep := plan.Live
	return &Finding{Namespace: ep.Namespace, Service: ep.Name, Kind: FindingStaleEndpoints, ManagedBy: []string{managedBy}, Slices: []string{},
		Message: fmt.Sprintf("our Endpoints object is stale against the Pods (%d ready, %d not ready addresses due)", plan.Ready, plan.NotReady),
		Command: fmt.Sprintf("kubectl slices sync svc/%s -n %s --with-endpoints", ep.Name, ep.Namespace)}
}

// EndpointsDrift: the Endpoints controller's own object lists addresses,
// or their readiness, other than the Pods call for (the "Endpoints stuck
// NotReady while the slices are right" reports). Reported only: the object
// is not ours.
const EndpointsDrift FindingKind = "EndpointsDrift"

// ControllerEndpointsFinding judges kube-controller-manager's Endpoints
// object against its plan (endpoints.Compute with the object as Live and
// the controller's managed-by value): a finding when an address is
// missing, extra or listed with the other readiness. Other differences
// (ports, annotations) are not reported. nil when not the controller's.
func ControllerEndpointsFinding(plan *endpoints.Plan) *Finding {
	if plan == nil || plan.Desired == nil || plan.Live == nil || plan.Live.Labels[endpoints.LabelManagedBy] != endpoints.ControllerManagedBy {
		return nil
	}
	have, want := addressReadiness(plan.Live), addressReadiness(plan.Desired)
	var diffs []string
	for _, ip := range slices.Sorted(maps.Keys(union(have, want))) {
		h, inHave := have[ip]
		w, inWant := want[ip]
		switch {
		case !inHave:
			diffs = append(diffs, fmt.Sprintf("%s (%s) is missing", ip, judge.ReadyWord(w)))
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("%s is listed %s but no Pod calls for it", ip, judge.ReadyWord(h)))
		case h != w:
			diffs = append(diffs, fmt.Sprintf("%s is listed %s, its Pod is %s", ip, judge.ReadyWord(h), judge.ReadyWord(w)))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	ep := plan.Live
	shown := diffs
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return &Finding{Namespace: ep.Namespace, Service: ep.Name, Kind: EndpointsDrift, ManagedBy: []string{endpoints.ControllerManagedBy}, Slices: []string{},
		Message: fmt.Sprintf("kube-controller-manager's Endpoints object disagrees with the Pods in %s: %s (reported only: the object is not ours; consumers of v1 Endpoints see it, EndpointSlice consumers do not)",
			english.Plural(len(diffs), "address", "addresses"), strings.Join(shown, "; ")),
		Command: fmt.Sprintf("kubectl get endpoints %s -n %s -o yaml", ep.Name, ep.Namespace)}
}

// addressReadiness maps each address IP of an Endpoints object to whether
// it is listed ready; an IP listed both ways counts as not ready.
func addressReadiness(ep *corev1.Endpoints) map[string]bool {
	out := map[string]bool{}
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			if _, seen := out[a.IP]; !seen {
				out[a.IP] = true
			}
		}
		for _, a := range s.NotReadyAddresses {
			out[a.IP] = false
		}
	}
	return out
}

// controllerEndpointsDrift is ControllerEndpointsFinding's message for
// explain: "" when ep is nil, not the controller's, or agrees.
func controllerEndpointsDrift(in reconcile.Input, ep *corev1.Endpoints) string {
	if ep == nil || in.Service == nil {
		return ""
	}
	plan, err := endpoints.Compute(endpoints.Input{Service: in.Service, Pods: in.Pods, Live: ep}, endpoints.Options{ManagedBy: endpoints.ControllerManagedBy})
	if err != nil {
		return ""
	}
	if f := ControllerEndpointsFinding(plan); f != nil {
		return f.Message
	}
	return ""
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
