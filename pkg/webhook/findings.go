package webhook

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Kind names a finding about a Service; the values are stable, --deny-on
// takes them.
type Kind string

const (
	// NoPods: the selector matches no Pods of the namespace (with the near
	// misses, e.g. app=Web against Pods labelled app=web).
	NoPods Kind = "NoPods"
	// PortNotFound: a named targetPort that some selected Pods do not
	// declare; they receive no traffic on that port.
	PortNotFound Kind = "PortNotFound"
	// MixedOwners: the selector matches Pods of several owners that declare
	// different ports, e.g. a second workload that does not serve the
	// Service's numeric targetPort (half the connections refused).
	MixedOwners Kind = "MixedOwners"
	// AddressFamily: selected Pods have no address of a family the Service
	// serves (a single-stack IPv6 Service over IPv4-only Pods).
	AddressFamily Kind = "AddressFamily"
	// NoEndpoints: a Service without selector has neither Endpoints nor
	// EndpointSlices, so nothing ever receives its traffic.
	NoEndpoints Kind = "NoEndpoints"
)

// Kinds lists every Kind, for flag validation and help.
var Kinds = []Kind{NoPods, PortNotFound, MixedOwners, AddressFamily, NoEndpoints}

// Finding is one likely mistake in a Service.
type Finding struct {
	Kind Kind
	// Message names the Pods, labels, owners and ports behind the finding.
	Message string
	// Hidden is the same finding without them, for a writer who may not
	// list the namespace's Pods (a Service write would otherwise be an
	// oracle on them); empty when Message holds no Pod data.
	Hidden string
}

// Text is the finding as a writer may read it: with the Pod data only if
// mayListPods.
func (f Finding) Text(mayListPods bool) string {
	if mayListPods || f.Hidden == "" {
		return f.Message
	}
	return f.Hidden
}

// HasPodData says whether the finding reads differently for a writer who
// may not list Pods.
func (f Finding) HasPodData() bool { return f.Hidden != "" }

// hiddenNote ends a finding whose details are hidden.
func hiddenNote(ns string) string {
	return "(details hidden: you may not list pods in " + ns + ")"
}

// Facts are what the cache knows around a Service under admission.
type Facts struct {
	// Unknown: the cache does not cover the Service's namespace; nothing is
	// judged.
	Unknown bool
	// Pods the Service's selector matches in its namespace.
	Pods []*corev1.Pod
	// NamespacePods are all Pods of the namespace, read only when Pods is
	// empty, for near misses.
	NamespacePods []*corev1.Pod
	// groups and nsGroups stand for Pods and NamespacePods when CacheSource
	// has grouped them already, from its index; nsGroups holds one group
	// per label set and shape.
	groups, nsGroups []*group
	// HasEndpoints: an Endpoints object or an EndpointSlice exists for it
	// (consulted only for Services without selector).
	HasEndpoints bool
}

// maxNames bounds the Pods or owners a message names.
const maxNames = 3

// ServiceFindings judges a Service as the planner and the explain engine see
// it: the plan's per-Pod decisions and explain's report (near misses, ports
// a Pod lacks) are the only judges of "is this Pod an endpoint". Pure; the
// findings come in a stable order.
func ServiceFindings(svc *corev1.Service, f Facts, o reconcile.Options) ([]Finding, error) {
	if f.Unknown || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, nil
	}
	if len(svc.Spec.Selector) == 0 {
		if f.HasEndpoints {
			return nil, nil
		}
		return []Finding{{Kind: NoEndpoints, Message: fmt.Sprintf("service %s has no selector and no Endpoints or EndpointSlices: nothing receives its traffic until you create them (or add a selector)", svc.Name)}}, nil
	}
	// Live slices are left out: the warnings are about the Service and its
	// Pods, not about drift, and diffing them would only cost time.
	groups := f.groups
	if groups == nil {
		groups = shapes(f.Pods)
	}
	selected := 0
	for _, g := range groups {
		selected += g.members.len()
	}
	reps := make([]*corev1.Pod, len(groups))
	for i, g := range groups {
		reps[i] = g.rep
	}
	in := reconcile.Input{Service: svc, Pods: reps, Nodes: reconcile.Nodes{Unreadable: true}}
	// syncer's one planner choice; offline (no Endpoints lookup), which for
	// a Service with a selector is pkg/reconcile, and does no I/O.
	plan, err := judge.PlanService(context.Background(), nil, in, o)
	if err != nil {
		return nil, err
	}
	var nsPods []*corev1.Pod
	size := map[string]int{} // Pods a near miss stands for
	if len(plan.Pods) == 0 {
		nsPods = f.NamespacePods
		if f.nsGroups != nil {
			nsPods = make([]*corev1.Pod, 0, len(f.nsGroups))
			for _, g := range f.nsGroups {
				nsPods = append(nsPods, g.rep)
				size[g.rep.Name] = g.members.len()
			}
		}
	}
	r := explain.Build(in, plan, explain.Options{ManagedBy: o.ManagedBy, MaxEndpointsPerSlice: o.MaxEndpointsPerSlice, NamespacePods: nsPods})
	if r.Selector.Matched == 0 {
		return []Finding{noPods(svc, r.Selector.NearMisses, size)}, nil
	}
	members := map[string]names{}
	for _, g := range groups {
		members[g.rep.Name] = g.members
	}
	var out []Finding
	out = append(out, portsNotFound(svc, r, members)...)
	out = append(out, mixedOwners(svc, reps)...)
	if fd, ok := addressFamily(r, members, selected); ok {
		out = append(out, fd)
	}
	return out, nil
}

// noPods names the nearest miss; size counts the Pods a near miss stands
// for when it represents a group (absent: itself alone).
func noPods(svc *corev1.Service, misses []explain.NearMiss, size map[string]int) Finding {
	msg := fmt.Sprintf("service %s: selector %s matches no Pods in namespace %s", svc.Name,
		labels.SelectorFromSet(svc.Spec.Selector).String(), svc.Namespace)
	hidden := ""
	if len(misses) > 0 {
		nm := misses[0]
		// explain bounds the near misses it lists, so only one or
		// several is known alike over grouped and single Pods.
		several := len(misses) > 1 || size[nm.Pod] > 1
		hidden = msg + "; 1 Pod differs by one label " + hiddenNote(svc.Namespace)
		if several {
			hidden = msg + "; several Pods differ by one label " + hiddenNote(svc.Namespace)
		}
		have := nm.Label + "=" + nm.Have
		if nm.Missing {
			have = "no " + nm.Label + " label"
		}
		msg += fmt.Sprintf("; nearest miss: pod %s has %s (the selector wants %s=%s)", nm.Pod, have, nm.Label, nm.Want)
		if several {
			msg += ", among others"
		}
	}
	return Finding{Kind: NoPods, Message: msg, Hidden: hidden}
}

// portsNotFound reports, per Service port, the selected Pods explain says
// lack its target port.
func portsNotFound(svc *corev1.Service, r explain.Report, members map[string]names) []Finding {
	missing := map[string]names{}
	matched := 0
	for _, p := range r.Pods {
		if !p.Included {
			continue
		}
		matched += members[p.Name].len()
		for _, port := range p.MissingPorts {
			missing[port] = append(missing[port], members[p.Name]...)
		}
	}
	var out []Finding
	for _, sp := range svc.Spec.Ports {
		label := sp.Name
		if label == "" {
			label = fmt.Sprint(sp.Port)
		}
		pods := missing[label]
		if pods.len() == 0 {
			continue
		}
		out = append(out, Finding{Kind: PortNotFound,
			Message: fmt.Sprintf("service %s: targetPort %s of port %s is not declared by %d of %d Pods (%s): they receive no traffic on it",
				svc.Name, quoteTarget(sp.TargetPort), label, pods.len(), matched, nameList(pods...)),
			Hidden: fmt.Sprintf("service %s: targetPort %s of port %s is not declared by %d of %d Pods: they receive no traffic on it %s",
				svc.Name, quoteTarget(sp.TargetPort), label, pods.len(), matched, hiddenNote(svc.Namespace))})
	}
	return out
}

func quoteTarget(t intstr.IntOrString) string {
	if t.Type == intstr.String {
		return fmt.Sprintf("%q", t.StrVal)
	}
	return t.String()
}

// addressFamily reports selected Pods the planner left out because they
// have no address of a family the Service serves.
func addressFamily(r explain.Report, members map[string]names, selected int) (Finding, bool) {
	var pods names
	msg := ""
	for _, p := range r.Pods {
		if p.Reason == reconcile.AddressFamilyMismatch {
			pods = append(pods, members[p.Name]...)
			msg = p.Message
		}
	}
	if pods.len() == 0 {
		return Finding{}, false
	}
	return Finding{Kind: AddressFamily,
		Message: fmt.Sprintf("service %s: %d of %d selected Pods get no endpoint (%s): %s",
			r.Service.Name, pods.len(), selected, nameList(pods...), msg),
		Hidden: fmt.Sprintf("service %s: %d of %d selected Pods get no endpoint: they have no address of a family the Service serves %s",
			r.Service.Name, pods.len(), selected, hiddenNote(r.Service.Namespace))}, true
}

// nameList names the first maxNames names by name, of all parts, and
// counts the rest. They are picked in one pass rather than by sorting: a
// finding may be about 5,000 Pods, and sorting them all was most of an
// admission.
func nameList(parts ...[]string) string {
	var first []string
	n := 0
	for _, part := range parts {
		n += len(part)
		for _, name := range part {
			i := sort.SearchStrings(first, name)
			if i >= maxNames {
				continue
			}
			first = slices.Insert(first, i, name)
			if len(first) > maxNames {
				first = first[:maxNames]
			}
		}
	}
	if n <= maxNames {
		return strings.Join(first, ", ")
	}
	return strings.Join(first, ", ") + fmt.Sprintf(" and %d more", n-maxNames)
}
