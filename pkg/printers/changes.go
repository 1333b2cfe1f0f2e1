package printers

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Changes says why a write of the loop happened, for its write line, per
// Pod (or, for an endpoint that names none, as a mirrored address, per
// address): what differs between the
// endpoints of the slices the plan rewrites or deletes, as they were, and of
// the slices it writes. Slices left unchanged cannot hold a change, so a
// readiness flip in a 20,000-Pod Service compares one slice, not two
// hundred. A write with no endpoint difference repaired the slices
// themselves (a hand edit, labels, a duplicate). A slice named in restored
// was changed by another writer since our last write: rewriting it undoes
// that edit, which is what is said, not the Pod changes the edit made.
func Changes(plan *reconcile.Plan, restored map[string]bool) []string {
	if plan == nil {
		return nil
	}
	return planChanges(plan.Update, plan.Create, plan.Delete, plan.Live, restored)
}

func planChanges(update, create, del []*discovery.EndpointSlice, liveOf func(string) *discovery.EndpointSlice, restored map[string]bool) []string {
	var live, written []*discovery.EndpointSlice
	var out []string
	for _, s := range update {
		if restored[s.Name] {
			out = append(out, "endpointslice "+s.Name+" restored")
			continue
		}
		if l := liveOf(s.Name); l != nil {
			live = append(live, l)
		}
		written = append(written, s)
	}
	live = append(live, del...)
	written = append(written, create...)
	if len(out) > 0 && len(live) == 0 && len(written) == 0 {
		return out
	}
	return append(out, changes(live, written)...)
}

// changes compares the endpoints of slices before and after, by Pod.
func changes(live, written []*discovery.EndpointSlice) []string {
	before, after := endpointsByTarget(live), endpointsByTarget(written)
	var out []string
	for _, who := range keysOfEither(before, after) {
		b, inBefore := before[who]
		a, inAfter := after[who]
		switch {
		case !inBefore:
			out = append(out, who+" added"+state(a))
		case !inAfter:
			out = append(out, who+" removed")
		case cond(b.Conditions.Terminating) != cond(a.Conditions.Terminating):
			out = append(out, who+" terminating")
		case cond(b.Conditions.Ready) != cond(a.Conditions.Ready):
			if cond(a.Conditions.Ready) {
				out = append(out, who+" ready")
			} else {
				out = append(out, who+" not ready")
			}
		case str(b.Zone) != str(a.Zone):
			out = append(out, fmt.Sprintf("%s zone %s→%s", who, orDash(str(b.Zone)), orDash(str(a.Zone))))
		case str(b.NodeName) != str(a.NodeName) || strings.Join(b.Addresses, ",") != strings.Join(a.Addresses, ","):
			out = append(out, who+" changed")
		}
	}
	if len(out) == 0 {
		out = append(out, "slices repaired")
	}
	return out
}

// endpointsByTarget keys endpoints by what they stand for, as the log
// names it: "pod NAME" (or another kind's, lower-cased, as a mirrored
// Endpoints object may reference), or "address IP" for an endpoint that
// references nothing, as mirrored addresses often do: an address is not a
// Pod.
func endpointsByTarget(slices []*discovery.EndpointSlice) map[string]discovery.Endpoint {
	out := map[string]discovery.Endpoint{}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			key := "address " + strings.Join(e.Addresses, ",")
			if ref := e.TargetRef; ref != nil && ref.Name != "" {
				key = strings.ToLower(cmp.Or(ref.Kind, "pod")) + " " + ref.Name
			}
			out[key] = e
		}
	}
	return out
}

// keysOfEither lists, sorted, the keys of a and of b.
func keysOfEither(a, b map[string]discovery.Endpoint) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]discovery.Endpoint{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func state(e discovery.Endpoint) string {
	if cond(e.Conditions.Ready) {
		return ""
	}
	return " (not ready)"
}

func cond(b *bool) bool { return b != nil && *b }

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
