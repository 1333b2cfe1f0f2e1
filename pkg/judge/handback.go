package judge

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Handback is the judgement behind `sync` holding back and `release`
// handing back: do kube-controller-manager's own slices for a Service exist,
// and do they publish what ours publish (Same) and what the planner wants
// (Current)? It is judged on what consumers see: every endpoint with its
// addresses, conditions, node, zone and ports, wherever it is packed.
type Handback struct {
	// Ours and Controller are the live slices (not being deleted) of our
	// managed-by value and of the EndpointSlice controller.
	Ours, Controller []*discovery.EndpointSlice
	// Same: the controller has slices, and they publish exactly the
	// endpoints ours publish. Deleting ours then changes nothing a
	// consumer sees.
	Same bool
	// Current: the controller has slices, and they publish exactly the
	// desired endpoints (false when no desired state was given).
	Current bool
	// Differences between ours and the controller's, one readable line per
	// endpoint, sorted; empty when Same.
	Differences []string
}

// JudgeHandback sorts live slices by manager and compares ours with the
// controller's, and the controller's with desired (the plan's final slices;
// nil to skip that comparison, as release does).
func JudgeHandback(live []*discovery.EndpointSlice, managedBy string, desired []*discovery.EndpointSlice) Handback {
	return JudgeHandbackTo(live, managedBy, reconcile.ControllerManagedBy, desired)
}

// JudgeHandbackTo is JudgeHandback against the slices of another controller
// (the mirroring controller's, for slices mirrored from Endpoints).
func JudgeHandbackTo(live []*discovery.EndpointSlice, managedBy, controller string, desired []*discovery.EndpointSlice) Handback {
	var h Handback
	for _, s := range live {
		if s.DeletionTimestamp != nil {
			continue
		}
		switch s.Labels[discovery.LabelManagedBy] {
		case managedBy:
			h.Ours = append(h.Ours, s)
		case controller:
			h.Controller = append(h.Controller, s)
		}
	}
	if len(h.Controller) == 0 {
		return h
	}
	h.Differences = Differences(h.Ours, h.Controller, managedBy, "kube-controller-manager")
	h.Same = len(h.Differences) == 0
	h.Current = desired != nil && SameEndpoints(h.Controller, desired)
	return h
}

// SameEndpoints says whether two sets of slices publish the same endpoints.
func SameEndpoints(a, b []*discovery.EndpointSlice) bool {
	return Published(a) == Published(b)
}

// Published is what consumers see of a set of slices, as canonical text:
// one line per endpoint with its address type, addresses, ports,
// conditions, node and zone, sorted.
func Published(slices []*discovery.EndpointSlice) string {
	var lines []string
	for key, vals := range endpointViews(slices) {
		for _, v := range vals {
			lines = append(lines, key+" "+v.fields)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Differences lists, one line per endpoint, how what a publishes differs
// from what b publishes; aName and bName name the two sides.
func Differences(a, b []*discovery.EndpointSlice, aName, bName string) []string {
	va, vb := endpointViews(a), endpointViews(b)
	var out []string
	for _, key := range slices.Sorted(maps.Keys(union(va, vb))) {
		ea, eb := va[key], vb[key]
		switch {
		case len(eb) == 0:
			out = append(out, fmt.Sprintf("%s: published only by %s (%s)", ea[0].label, aName, ea[0].fields))
		case len(ea) == 0:
			out = append(out, fmt.Sprintf("%s: published only by %s (%s)", eb[0].label, bName, eb[0].fields))
		case joinFields(ea) != joinFields(eb):
			out = append(out, fmt.Sprintf("%s: %s has %s, %s has %s", ea[0].label, aName, joinFields(ea), bName, joinFields(eb)))
		}
	}
	return out
}

type endpointView struct {
	label  string // address and Pod, for people
	fields string // conditions, node, zone
}

// endpointViews keys each endpoint by address type, addresses and ports;
// an endpoint published twice keeps both views.
func endpointViews(slices []*discovery.EndpointSlice) map[string][]endpointView {
	out := map[string][]endpointView{}
	for _, s := range slices {
		ports := PortStrings(s.Ports)
		sort.Strings(ports)
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			addr := strings.Join(e.Addresses, ",")
			key := fmt.Sprintf("%s %s ports=%s", s.AddressType, addr, strings.Join(ports, ","))
			label := addr
			if pod := PodOf(e); pod != "" {
				label += " (pod " + pod + ")"
			}
			if len(ports) > 0 {
				label += " ports " + strings.Join(ports, ",")
			}
			out[key] = append(out[key], endpointView{label: label, fields: endpointFields(e)})
		}
	}
	for _, vs := range out {
		sort.Slice(vs, func(i, j int) bool { return vs[i].fields < vs[j].fields })
	}
	return out
}

func joinFields(vs []endpointView) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.fields
	}
	return strings.Join(parts, " + ")
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
