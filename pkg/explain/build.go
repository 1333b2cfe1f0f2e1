package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Options tune Build.
type Options struct {
	ManagedBy            string
	MaxEndpointsPerSlice int
	// NamespacePods are all Pods of the namespace, read only when the
	// selector matched none, for near misses.
	NamespacePods []*corev1.Pod
	// Defaulted lists what was filled in on input read offline, as the
	// API server would have (explain --local).
	Defaulted []string
	// Now, when set, is the time of the judgement: how long the
	// controller has been behind is reported (ControllerBehind).
	Now time.Time
	// Endpoints is the Service's v1 Endpoints object, when read: one
	// written by the Endpoints controller is judged (EndpointsDrift).
	Endpoints *corev1.Endpoints
	// ServerMinor is the API server's minor release (32 for v1.32.13), 0
	// when unknown or offline: an older kube-controller-manager's
	// differences from the plan are noted (VersionNotes).
	ServerMinor int
}

// Build explains a plan against the live slices it was made from.
func Build(in reconcile.Input, plan *reconcile.Plan, o Options) Report {
	svc := in.Service
	r := Report{Schema: SchemaVersion, Service: serviceInfo(svc, plan), Pods: []Pod{}, Managers: []Manager{}, Drift: []Drift{},
		Warnings: []string{}, Defaulted: append([]string{}, o.Defaulted...)}
	for _, w := range plan.Warnings {
		r.Warnings = append(r.Warnings, w.Object+": "+w.Message)
	}
	r.Selector.Matched = len(plan.Pods)
	if r.Selector.Matched == 0 && plan.Service.Planned() {
		r.Selector.NearMisses = NearMisses(svc.Spec.Selector, o.NamespacePods)
	}
	for _, d := range plan.Pods {
		r.Pods = append(r.Pods, podReport(svc, d))
	}
	live := judge.Live(in.Slices)
	r.Managers = managers(live, o)
	if plan.Service.Planned() {
		r.Drift = drift(plan, live)
	}
	r.InSync = len(r.Drift) == 0
	r.Diagnosis = diagnose(svc, plan, r)
	if b := judge.ControllerBehind(in, plan, judge.ControllerOf(svc), o.Now); b != nil && !r.InSync {
		r.ControllerBehind = b
		r.Diagnosis.Summary = strings.TrimSuffix(r.Diagnosis.Summary, ".") + "; kube-controller-manager " + b.Text()
	}
	r.EndpointsDrift = controllerEndpointsDrift(in, o.Endpoints)
	if o.ServerMinor > 0 {
		r.ClusterRelease = release(o.ServerMinor)
	}
	r.VersionNotes = VersionNotes(in, plan, o.ServerMinor)
	r.emptyLists()
	return r
}

// emptyLists makes every list field of the report a list in JSON, [] rather
// than null when empty, as the schema says.
func (r *Report) emptyLists() {
	if r.Drift == nil {
		r.Drift = []Drift{}
	}
	if r.Selector.NearMisses == nil {
		r.Selector.NearMisses = []NearMiss{}
	}
	for i := range r.Pods {
		p := &r.Pods[i]
		p.Endpoint = nonNil(p.Endpoint)
		p.Notes = nonNil(p.Notes)
		p.MissingPorts = nonNil(p.MissingPorts)
		for j := range p.Endpoint {
			e := &p.Endpoint[j]
			e.Addresses, e.Ports, e.Hints = nonNil(e.Addresses), nonNil(e.Ports), nonNil(e.Hints)
		}
	}
	for i := range r.Managers {
		r.Managers[i].OverLimit = nonNil(r.Managers[i].OverLimit)
	}
	for i := range r.Drift {
		r.Drift[i].ManagedBy = nonNil(r.Drift[i].ManagedBy)
	}
	r.VersionNotes = nonNil(r.VersionNotes)
	for i := range r.VersionNotes {
		r.VersionNotes[i].Pods = nonNil(r.VersionNotes[i].Pods)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func serviceInfo(svc *corev1.Service, plan *reconcile.Plan) ServiceInfo {
	si := ServiceInfo{Namespace: svc.Namespace, Name: svc.Name, Type: string(svc.Spec.Type), Selector: svc.Spec.Selector,
		Headless: svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP == corev1.ClusterIPNone,
		Ports:    []Port{}, PublishNotReadyAddresses: svc.Spec.PublishNotReadyAddresses,
		Verdict: plan.Service.Reason, Message: plan.Service.Message, AddressTypes: []string{}}
	if si.Type == "" {
		si.Type = string(corev1.ServiceTypeClusterIP)
	}
	for _, p := range svc.Spec.Ports {
		si.Ports = append(si.Ports, Port{Name: p.Name, Port: p.Port, TargetPort: p.TargetPort.String(), Protocol: string(p.Protocol)})
	}
	for _, at := range plan.AddressTypes {
		si.AddressTypes = append(si.AddressTypes, string(at))
	}
	if td := svc.Spec.TrafficDistribution; td != nil {
		si.TrafficDistribution = *td
	}
	if v, ok := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		si.TopologyMode = v
	} else {
		si.TopologyMode = svc.Annotations[corev1.AnnotationTopologyMode]
	}
	return si
}

func podReport(svc *corev1.Service, d reconcile.PodDecision) Pod {
	p := Pod{Name: d.Name, Included: d.Included, Reason: d.Reason, Message: d.Message}
	for _, n := range d.Notes {
		if n.Reason == reconcile.PortNotFound {
			n.Message += "; the Pod receives no traffic on that port"
		}
		p.Notes = append(p.Notes, n)
	}
	if len(d.Endpoints) > 0 {
		p.MissingPorts = missingPorts(svc, d.Endpoints[0].Ports)
	}
	for _, e := range d.Endpoints {
		ep := e.Endpoint
		if p.Node == "" && ep.NodeName != nil {
			p.Node = *ep.NodeName
		}
		if p.Zone == "" && ep.Zone != nil {
			p.Zone = *ep.Zone
		}
		p.Ready, p.Serving, p.Term = ep.Conditions.Ready, ep.Conditions.Serving, ep.Conditions.Terminating
		s := EndpointSummary{AddressType: string(e.AddressType), Addresses: ep.Addresses, Ports: judge.PortStrings(e.Ports)}
		if ep.Hostname != nil {
			s.Hostname = *ep.Hostname
		}
		if h := ep.Hints; h != nil {
			for _, z := range h.ForZones {
				s.Hints = append(s.Hints, "zone:"+z.Name)
			}
			for _, n := range h.ForNodes {
				s.Hints = append(s.Hints, "node:"+n.Name)
			}
		}
		p.Endpoint = append(p.Endpoint, s)
	}
	return p
}

// missingPorts lists the Service ports an endpoint did not resolve: the
// planner drops a port whose named target port the Pod lacks, so no traffic
// for that port reaches the Pod.
func missingPorts(svc *corev1.Service, resolved []discovery.EndpointPort) []string {
	have := map[string]bool{}
	for _, p := range resolved {
		if p.Name != nil {
			have[*p.Name] = true
		}
	}
	var out []string
	for _, sp := range svc.Spec.Ports {
		if !have[sp.Name] {
			label := sp.Name
			if label == "" {
				label = fmt.Sprint(sp.Port)
			}
			out = append(out, label)
		}
	}
	return out
}

// Role names who a managed-by value belongs to.
func Role(managedBy, ours string) string {
	switch managedBy {
	case ours:
		return "ours"
	case reconcile.ControllerManagedBy:
		return "controller"
	case reconcile.MirroringManagedBy:
		return "mirroring"
	}
	return "other"
}

func managers(live []*discovery.EndpointSlice, o Options) []Manager {
	byName := map[string]*Manager{}
	for _, want := range []string{o.ManagedBy, reconcile.ControllerManagedBy} {
		byName[want] = &Manager{ManagedBy: want, Role: Role(want, o.ManagedBy)}
	}
	for _, s := range live {
		mb := s.Labels[discovery.LabelManagedBy]
		m := byName[mb]
		if m == nil {
			m = &Manager{ManagedBy: mb, Role: Role(mb, o.ManagedBy)}
			byName[mb] = m
		}
		m.Slices++
		m.Endpoints += len(s.Endpoints)
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				m.Ready++
			}
		}
		if o.MaxEndpointsPerSlice > 0 && len(s.Endpoints) > o.MaxEndpointsPerSlice {
			m.OverLimit = append(m.OverLimit, fmt.Sprintf("%s (%d endpoints)", s.Name, len(s.Endpoints)))
		}
	}
	out := make([]Manager, 0, len(byName))
	for _, m := range byName {
		out = append(out, *m)
	}
	order := map[string]int{"ours": 0, "controller": 1, "mirroring": 2, "other": 3}
	sort.Slice(out, func(i, j int) bool {
		if order[out[i].Role] != order[out[j].Role] {
			return order[out[i].Role] < order[out[j].Role]
		}
		return out[i].ManagedBy < out[j].ManagedBy
	})
	return out
}
