package judge

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Behind says how long a controller's slices have not published what the
// planner wants, dated from the change that caused the first difference
// still open (a Pod's Ready transition or creation, a Pod's deletion, the
// Service's creation), and that change in words.
type Behind struct {
	// Since is when that change happened (RFC 3339); empty when no
	// difference could be dated (an endpoint of a Pod already gone).
	Since string `json:"since,omitempty"`
	// For is Since to the time of the judgement, rounded to the second.
	For     string `json:"for,omitempty"`
	Because string `json:"because"`
}

// Text follows the controller's name: "has been behind for 2m13s: pod
// web-3 became not ready and is still published ready".
func (b Behind) Text() string {
	if b.For == "" {
		return "is behind: " + b.Because
	}
	return "has been behind for " + b.For + ": " + b.Because
}

// ControllerBehind judges the slices of controller (a managed-by value)
// against the plan's final slices at now; nil when they publish the same
// endpoints, or when now is zero (no clock: output stays deterministic).
func ControllerBehind(in reconcile.Input, plan *reconcile.Plan, controller string, now time.Time) *Behind {
	if now.IsZero() || in.Service == nil || !plan.Service.Planned() {
		return nil
	}
	var theirs []*discovery.EndpointSlice
	for _, s := range Live(in.Slices) {
		if s.Labels[discovery.LabelManagedBy] == controller && !ownedByAnother(s, in.Service) {
			theirs = append(theirs, s)
		}
	}
	desired := plan.Final()
	if len(theirs) > 0 && SameEndpoints(theirs, desired) {
		return nil
	}
	if len(theirs) == 0 {
		// No slices at all: the diagnosis says so already, and a
		// controller that is down is better told by its own health.
		return nil
	}
	pods := map[string]*corev1.Pod{}
	for _, p := range in.Pods {
		pods[p.Name] = p
	}
	want, have := endpointsByKey(desired), endpointsByKey(theirs)
	type cause struct {
		at  time.Time
		why string
	}
	var causes []cause
	for _, key := range slices.Sorted(maps.Keys(union(want, have))) {
		w, h := want[key], have[key]
		switch {
		case h == nil:
			at, why := podChange(pods[PodOf(w)], w, "is not published")
			causes = append(causes, cause{at, why})
		case w == nil:
			p := pods[PodOf(h)]
			var at time.Time
			if p != nil && p.DeletionTimestamp != nil {
				at = p.DeletionTimestamp.Time
			}
			causes = append(causes, cause{at, describe(h) + " is still published but no longer desired"})
		case endpointFields(w) != endpointFields(h):
			why := "is published with other conditions, node or zone"
			if ready(w) != ready(h) {
				why = fmt.Sprintf("is still published %s", ReadyWord(ready(h)))
			}
			at, text := podChange(pods[PodOf(w)], w, why)
			causes = append(causes, cause{at, text})
		}
	}
	if len(causes) == 0 {
		// Same endpoints but not SameEndpoints: duplicates only.
		return behind(now, time.Time{}, "it publishes some endpoints twice")
	}
	// The earliest dated change first; undated ones after.
	sort.SliceStable(causes, func(i, j int) bool {
		a, b := causes[i].at, causes[j].at
		if a.IsZero() != b.IsZero() {
			return !a.IsZero()
		}
		return a.Before(b)
	})
	why := causes[0].why
	if n := len(causes) - 1; n > 0 {
		why += fmt.Sprintf(" (and %s)", english.Plural(n, "other endpoint", "other endpoints"))
	}
	return behind(now, causes[0].at, why)
}

func behind(now, since time.Time, why string) *Behind {
	b := &Behind{Because: why}
	if !since.IsZero() {
		b.Since = since.UTC().Format(time.RFC3339)
		d := now.Sub(since)
		if d < 0 {
			d = 0
		}
		b.For = d.Round(time.Second).String()
	}
	return b
}

// podChange dates an endpoint's difference by its Pod's last Ready
// transition (its creation without one) and words it.
func podChange(p *corev1.Pod, e *discovery.Endpoint, why string) (time.Time, string) {
	if p == nil {
		return time.Time{}, describe(e) + " " + why
	}
	state := "is " + ReadyWord(ready(e))
	at := p.CreationTimestamp.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && !c.LastTransitionTime.IsZero() {
			at, state = c.LastTransitionTime.Time, "became "+ReadyWord(ready(e))
		}
	}
	return at, fmt.Sprintf("pod %s %s and %s", p.Name, state, why)
}

func describe(e *discovery.Endpoint) string {
	if p := PodOf(e); p != "" {
		return "pod " + p
	}
	return "endpoint " + strings.Join(e.Addresses, ",")
}

func ready(e *discovery.Endpoint) bool { return e.Conditions.Ready == nil || *e.Conditions.Ready }

func ReadyWord(r bool) string {
	if r {
		return "ready"
	}
	return "not ready"
}

// endpointsByKey keys each endpoint as endpointViews does (address type,
// addresses, ports); the first of duplicates is kept.
func endpointsByKey(slices []*discovery.EndpointSlice) map[string]*discovery.Endpoint {
	out := map[string]*discovery.Endpoint{}
	for _, s := range slices {
		ports := PortStrings(s.Ports)
		sort.Strings(ports)
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			key := fmt.Sprintf("%s %s ports=%s", s.AddressType, strings.Join(e.Addresses, ","), strings.Join(ports, ","))
			if out[key] == nil {
				out[key] = e
			}
		}
	}
	return out
}

// endpointFields is what endpointViews compares of one endpoint.
func endpointFields(e *discovery.Endpoint) string {
	return fmt.Sprintf("ready=%s serving=%s terminating=%s node=%s zone=%s", BoolOrUnset(e.Conditions.Ready),
		BoolOrUnset(e.Conditions.Serving), BoolOrUnset(e.Conditions.Terminating), StringOrUnset(e.NodeName), StringOrUnset(e.Zone))
}

// ownedByAnother: the slice belongs to a deleted Service of the same name
// and awaits the garbage collector.
func ownedByAnother(s *discovery.EndpointSlice, svc *corev1.Service) bool {
	for _, o := range s.OwnerReferences {
		if o.Kind == "Service" && svc.UID != "" && o.UID != svc.UID {
			return true
		}
	}
	return false
}
