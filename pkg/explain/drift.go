package explain

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// drift compares what every manager publishes with what the plan wants.
func drift(plan *reconcile.Plan, live []*discovery.EndpointSlice) []Drift {
	desired, desiredAnyPorts := map[string]*discovery.Endpoint{}, map[string]bool{}
	for _, s := range plan.Final() {
		pk := string(s.AddressType) + "|" + reconcile.PortsKey(s.Ports)
		for i := range s.Endpoints {
			ek := reconcile.EndpointKey(&s.Endpoints[i])
			desired[pk+"|"+ek] = &s.Endpoints[i]
			desiredAnyPorts[string(s.AddressType)+"|"+ek] = true
		}
	}
	published := map[string]map[string][]*discovery.Endpoint{}
	publishedAnyPorts := map[string]bool{}
	for _, s := range live {
		mb := s.Labels[discovery.LabelManagedBy]
		pk := string(s.AddressType) + "|" + reconcile.PortsKey(s.Ports)
		for i := range s.Endpoints {
			ek := reconcile.EndpointKey(&s.Endpoints[i])
			key := pk + "|" + ek
			if published[key] == nil {
				published[key] = map[string][]*discovery.Endpoint{}
			}
			published[key][mb] = append(published[key][mb], &s.Endpoints[i])
			publishedAnyPorts[string(s.AddressType)+"|"+ek] = true
		}
	}
	decisions := map[string]reconcile.PodDecision{}
	for _, d := range plan.Pods {
		decisions[d.Name] = d
	}

	var out []Drift
	for _, key := range slices.Sorted(maps.Keys(published)) {
		byMgr := published[key]
		mgrs := slices.Sorted(maps.Keys(byMgr))
		first := byMgr[mgrs[0]][0]
		at := key[:strings.Index(key, "|")]
		base := Drift{AddressType: at, Address: strings.Join(first.Addresses, ","), Pod: judge.PodOf(first)}
		for _, mb := range mgrs {
			if n := len(byMgr[mb]); n > 1 {
				d := base
				d.Kind, d.ManagedBy, d.Message = Duplicate, []string{mb}, fmt.Sprintf("published %d times by %s", n, mb)
				out = append(out, d)
			}
		}
		want, ok := desired[key]
		switch {
		case !ok && desiredAnyPorts[at+"|"+reconcile.EndpointKey(first)]:
			d := base
			d.Kind, d.ManagedBy, d.Message = Changed, mgrs, "published with ports the Pod no longer resolves to"
			out = append(out, d)
		case !ok:
			d := base
			d.Kind, d.ManagedBy, d.Message = Stale, mgrs, staleReason(first, decisions)
			out = append(out, d)
		default:
			for _, mb := range mgrs {
				if diff := fieldDiff(byMgr[mb][0], want); diff != "" {
					d := base
					d.Kind, d.ManagedBy, d.Message = Changed, []string{mb}, "published "+diff
					out = append(out, d)
				}
			}
		}
		if len(mgrs) > 1 {
			if msg := readinessConflict(byMgr, mgrs); msg != "" {
				d := base
				d.Kind, d.ManagedBy, d.Message = Conflict, mgrs, msg
				out = append(out, d)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(desired)) {
		if published[key] != nil {
			continue
		}
		ep := desired[key]
		at := key[:strings.Index(key, "|")]
		if publishedAnyPorts[at+"|"+reconcile.EndpointKey(ep)] {
			continue // already reported as Changed
		}
		out = append(out, Drift{Kind: Missing, AddressType: at, Address: strings.Join(ep.Addresses, ","), Pod: judge.PodOf(ep),
			Message: "desired, but no manager publishes it"})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pod != out[j].Pod {
			return out[i].Pod < out[j].Pod
		}
		return out[i].Address < out[j].Address
	})
	return out
}

func staleReason(ep *discovery.Endpoint, decisions map[string]reconcile.PodDecision) string {
	name := judge.PodOf(ep)
	if name == "" {
		return "not a Pod the Service selects"
	}
	d, ok := decisions[name]
	switch {
	case !ok:
		return "pod " + name + " no longer exists or no longer matches the selector"
	case !d.Included:
		return "pod " + name + " is not an endpoint: " + d.Message
	}
	return "pod " + name + " now has other addresses or hostname"
}

// fieldDiff lists the fields of a published endpoint that differ from the
// desired one, as "ready=false (want true)".
func fieldDiff(got, want *discovery.Endpoint) string {
	if reconcile.EndpointsEquivalent(got, want) {
		return ""
	}
	var parts []string
	for _, f := range []struct {
		name    string
		got, wt string
	}{
		{"ready", judge.BoolOrUnset(got.Conditions.Ready), judge.BoolOrUnset(want.Conditions.Ready)},
		{"serving", judge.BoolOrUnset(got.Conditions.Serving), judge.BoolOrUnset(want.Conditions.Serving)},
		{"terminating", judge.BoolOrUnset(got.Conditions.Terminating), judge.BoolOrUnset(want.Conditions.Terminating)},
		{"nodeName", judge.StringOrUnset(got.NodeName), judge.StringOrUnset(want.NodeName)},
		{"zone", judge.StringOrUnset(got.Zone), judge.StringOrUnset(want.Zone)},
		{"targetRef", refStr(got), refStr(want)},
	} {
		if f.got != f.wt {
			parts = append(parts, fmt.Sprintf("%s=%s (want %s)", f.name, f.got, f.wt))
		}
	}
	return strings.Join(parts, ", ")
}

func readinessConflict(byMgr map[string][]*discovery.Endpoint, mgrs []string) string {
	var parts []string
	seen := map[string]bool{}
	for _, mb := range mgrs {
		r := judge.BoolOrUnset(byMgr[mb][0].Conditions.Ready)
		seen[r] = true
		parts = append(parts, mb+" ready="+r)
	}
	if len(seen) < 2 {
		return ""
	}
	return "managers disagree: " + strings.Join(parts, ", ")
}

func refStr(ep *discovery.Endpoint) string {
	if ep.TargetRef == nil {
		return "unset"
	}
	return fmt.Sprintf("%s/%s(%s)", ep.TargetRef.Kind, ep.TargetRef.Name, ep.TargetRef.UID)
}
