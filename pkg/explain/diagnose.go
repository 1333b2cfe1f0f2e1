package explain

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/mirror"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// diagnose picks the one finding that matters most and the command for it.
func diagnose(svc *corev1.Service, plan *reconcile.Plan, r Report) Diagnosis {
	syncCmd := fmt.Sprintf("kubectl slices sync svc/%s -n %s", svc.Name, svc.Namespace)
	mgr := map[string]Manager{}
	for _, m := range r.Managers {
		mgr[m.Role+"/"+m.ManagedBy] = m
	}
	ours, ctrl := mgr["ours/"+r.managedBy()], mgr["controller/"+reconcile.ControllerManagedBy]
	switch plan.Service.Reason {
	case reconcile.ServiceExternalName:
		return Diagnosis{Summary: "no EndpointSlices are expected: " + plan.Service.Message + "."}
	case reconcile.ServiceNoSelector:
		return Diagnosis{Summary: "no EndpointSlices are planned: " + plan.Service.Message + "; " + publishers(r.Managers) + "."}
	case mirror.NoEndpoints, mirror.SkipMirror:
		return Diagnosis{Summary: "no EndpointSlices are mirrored: " + plan.Service.Message + "; " + publishers(r.Managers) + "."}
	case reconcile.ServiceMirrored:
		if r.InSync {
			return Diagnosis{Summary: "in sync: " + plan.Service.Message + "; " + publishers(r.Managers) + "."}
		}
		return Diagnosis{Summary: fmt.Sprintf("the mirrored slices are out of date (%s): %s; kube-controller-manager's EndpointSlice mirroring controller may be down, and kubectl slices sync mirrors them", countDrift(r.Drift), plan.Service.Message), Command: syncCmd}
	}
	// A ready Pod that lacks a target port is published but receives no
	// traffic on that port: it does not count as a ready endpoint.
	readyPods, portless := 0, 0
	var portlessPorts []string
	for _, p := range r.Pods {
		if p.Included && p.Ready != nil && *p.Ready {
			if len(p.MissingPorts) > 0 {
				portless++
				portlessPorts = append(portlessPorts, p.MissingPorts...)
				continue
			}
			readyPods++
		}
	}
	portNote := ""
	if portless > 0 {
		portNote = fmt.Sprintf("; %s no target port for %s and receive%s no traffic on it",
			english.Plural(portless, "ready Pod has", "ready Pods have"), strings.Join(uniq(portlessPorts), ", "), map[bool]string{true: "s", false: ""}[portless == 1])
	}
	if r.Selector.Matched == 0 {
		sel := labels.SelectorFromSet(svc.Spec.Selector).String()
		d := Diagnosis{Summary: fmt.Sprintf("the selector %s matches no Pods in namespace %s", sel, svc.Namespace),
			Command: fmt.Sprintf("kubectl get pods -n %s --show-labels", svc.Namespace)}
		if len(r.Selector.NearMisses) > 0 {
			nm := r.Selector.NearMisses[0]
			have := nm.Label + "=" + nm.Have
			if nm.Missing {
				have = "no " + nm.Label + " label"
			}
			d.Summary += fmt.Sprintf("; nearest miss: pod %s has %s (the selector wants %s=%s)", nm.Pod, have, nm.Label, nm.Want)
		}
		if !r.InSync {
			d.Summary += "; and " + countDrift(r.Drift)
		}
		return d
	}
	if r.InSync {
		s := fmt.Sprintf("in sync: %d of %d matched Pods are ready endpoints%s; %s", readyPods, r.Selector.Matched, portNote, publishers(r.Managers))
		if ctrl.Slices == 0 && ours.Slices > 0 {
			s += "; kube-controller-manager has written none, so only kubectl-slices keeps them current: run sync --watch (or sync again after every change)"
		}
		return Diagnosis{Summary: s + "."}
	}
	counts := countDrift(r.Drift) + portNote
	switch {
	case ctrl.Slices == 0 && ours.Slices == 0:
		return Diagnosis{Summary: fmt.Sprintf("kube-controller-manager has written no slices for this Service although %s ready: its EndpointSlice controller is likely down (%s); kubectl slices sync repairs it", english.Plural(readyPods, "pod is", "pods are"), counts), Command: syncCmd}
	case driftBy(r.Drift, reconcile.ControllerManagedBy) && ours.Slices == 0:
		return Diagnosis{Summary: fmt.Sprintf("kube-controller-manager's slices are stale (%s): its EndpointSlice controller may be stuck or lagging; kubectl slices sync publishes current endpoints beside them", counts), Command: syncCmd}
	case driftBy(r.Drift, r.managedBy()) || missingOnly(r.Drift):
		return Diagnosis{Summary: fmt.Sprintf("kubectl-slices' slices are out of date (%s)", counts), Command: syncCmd}
	}
	var who []string
	for _, d := range r.Drift {
		for _, mb := range d.ManagedBy {
			who = append(who, ManagerName(mb))
		}
	}
	return Diagnosis{Summary: fmt.Sprintf("slices of other managers (%s) publish endpoints that are not desired (%s); kubectl-slices never modifies them: fix or delete them, or restart their controller",
		strings.Join(uniq(who), ", "), counts), Command: fmt.Sprintf("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s -L endpointslice.kubernetes.io/managed-by", svc.Namespace, svc.Name)}
}

// NoManagedBy names, for people, the slices that carry no managed-by label.
const NoManagedBy = "(no managed-by label)"

// ManagerName is a managed-by value as people read it: an unlabelled slice
// is named as such, not as an empty string.
func ManagerName(managedBy string) string {
	if managedBy == "" {
		return NoManagedBy
	}
	return managedBy
}

func (r Report) managedBy() string {
	for _, m := range r.Managers {
		if m.Role == "ours" {
			return m.ManagedBy
		}
	}
	return ""
}

func driftBy(ds []Drift, managedBy string) bool {
	for _, d := range ds {
		for _, mb := range d.ManagedBy {
			if mb == managedBy {
				return true
			}
		}
	}
	return false
}

func missingOnly(ds []Drift) bool {
	for _, d := range ds {
		if d.Kind != Missing {
			return false
		}
	}
	return true
}

func countDrift(ds []Drift) string {
	n := map[DriftKind]int{}
	for _, d := range ds {
		n[d.Kind]++
	}
	var parts []string
	for _, k := range []DriftKind{Missing, Stale, Changed, Duplicate, Conflict} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], strings.ToLower(string(k))))
		}
	}
	return strings.Join(parts, ", ")
}

func publishers(ms []Manager) string {
	var parts []string
	for _, m := range ms {
		if m.Slices > 0 {
			parts = append(parts, fmt.Sprintf("%s publishes %s in %s", ManagerName(m.ManagedBy), english.Plural(m.Endpoints, "endpoint", "endpoints"), english.Plural(m.Slices, "slice", "slices")))
		}
	}
	if len(parts) == 0 {
		return "no manager publishes slices for it"
	}
	return strings.Join(parts, ", ")
}

func uniq(s []string) []string {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	out := make([]string, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
