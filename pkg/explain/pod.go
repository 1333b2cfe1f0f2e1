package explain

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// PodSchemaVersion is the schema of `explain pod/NAME -o json`, bumped on
// any incompatible change to PodReport.
const PodSchemaVersion = "kubectl-slices.explain-pod/v1"

// PodReport explains one Pod from its side: every Service of its namespace
// that selects it, and the Services one label away.
type PodReport struct {
	Schema string `json:"schema"`
	// Source is "cluster", or "local" for objects read from -f.
	Source     string            `json:"source"`
	Pod        PodInfo           `json:"pod"`
	Services   []PodService      `json:"services"`
	NearMisses []ServiceNearMiss `json:"nearMisses"`
	Warnings   []string          `json:"warnings"`
	// InSync: every Service that selects the Pod publishes it as the
	// planner would, and it is an endpoint on each of their ports.
	InSync    bool      `json:"inSync"`
	Diagnosis Diagnosis `json:"diagnosis"`
}

// PodInfo is what the Pod says of itself.
type PodInfo struct {
	Namespace   string            `json:"namespace"`
	Name        string            `json:"name"`
	Node        string            `json:"node,omitempty"`
	Phase       string            `json:"phase,omitempty"`
	IPs         []string          `json:"ips"`
	Ready       bool              `json:"ready"`
	Terminating bool              `json:"terminating"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// PodService is one Service that selects the Pod: the planner's decision
// for the Pod (the row explain svc shows), who publishes the Pod's
// addresses, and the drift on them.
type PodService struct {
	Service      ServiceInfo   `json:"service"`
	Decision     Pod           `json:"decision"`
	Publications []Publication `json:"publications"`
	Drift        []Drift       `json:"drift"`
	// Published: the Pod is an endpoint on every port, as published.
	Published bool      `json:"published"`
	Diagnosis Diagnosis `json:"diagnosis"`
}

// ServiceNearMiss is a Service whose selector misses the Pod by one label.
type ServiceNearMiss struct {
	Service string `json:"service"`
	Label   string `json:"label"`
	Want    string `json:"want"`
	Have    string `json:"have,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// Publication is one object that publishes an address: an EndpointSlice
// endpoint, or an address of a v1 Endpoints object.
type Publication struct {
	// Kind is EndpointSlice or Endpoints.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Service   string `json:"service"`
	ManagedBy string `json:"managedBy"`
	// Role is ours, controller, mirroring or other (Role); for Endpoints,
	// endpoints-controller or other.
	Role        string   `json:"role"`
	AddressType string   `json:"addressType,omitempty"`
	Addresses   []string `json:"addresses"`
	Ready       *bool    `json:"ready,omitempty"`
	Serving     *bool    `json:"serving,omitempty"`
	Terminating *bool    `json:"terminating,omitempty"`
	Node        string   `json:"node,omitempty"`
	// TargetRef is the Pod the publication names ("" for none).
	TargetRef string `json:"targetRef,omitempty"`
	// Stale: the target Pod no longer holds the address (gone, or another
	// Pod has it now).
	Stale bool `json:"stale"`
	// Desired: the planner would publish exactly this today.
	Desired bool `json:"desired"`
	// Problems say why it is not desired.
	Problems []string `json:"problems"`
}

// ServiceView is one Service planned with the Pods in question only: the
// planner decides each Pod on its own, so its decision for them is the one
// a plan of every selected Pod makes.
type ServiceView struct {
	Input reconcile.Input
	Plan  *reconcile.Plan
	// ManagedBy is ours for this Service (a per-Service override), ""
	// for Options.ManagedBy.
	ManagedBy string
}

func (v ServiceView) options(o Options) Options {
	if v.ManagedBy != "" {
		o.ManagedBy = v.ManagedBy
	}
	return o
}

// SelectingServices splits a namespace's Services into those whose
// selector matches the Pod and those one label away from it (the near-miss
// rule of explain svc, NearMisses, seen from the Pod), nearest first.
func SelectingServices(pod *corev1.Pod, services []*corev1.Service) ([]*corev1.Service, []ServiceNearMiss) {
	var matched []*corev1.Service
	type scored struct {
		m ServiceNearMiss
		d int
	}
	var near []scored
	podLabels := labels.Set(pod.Labels)
	for _, svc := range services {
		if svc.Namespace != pod.Namespace || len(svc.Spec.Selector) == 0 {
			continue
		}
		if labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
			matched = append(matched, svc)
			continue
		}
		if nm := NearMisses(svc.Spec.Selector, []*corev1.Pod{pod}); len(nm) == 1 {
			m := nm[0]
			near = append(near, scored{ServiceNearMiss{Service: svc.Name, Label: m.Label, Want: m.Want, Have: m.Have, Missing: m.Missing}, distance(m)})
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].Name < matched[j].Name })
	sort.Slice(near, func(i, j int) bool {
		if near[i].d != near[j].d {
			return near[i].d < near[j].d
		}
		return near[i].m.Service < near[j].m.Service
	})
	out := []ServiceNearMiss{}
	for i := 0; i < len(near) && i < maxNearMisses; i++ {
		out = append(out, near[i].m)
	}
	return matched, out
}

// BuildPod explains pod against each Service that selects it, each planned
// with the Pod (views), and lists the near misses.
func BuildPod(pod *corev1.Pod, views []ServiceView, near []ServiceNearMiss, o Options) PodReport {
	r := PodReport{Schema: PodSchemaVersion, Pod: podInfo(pod), Services: []PodService{}, NearMisses: nonNil(near), Warnings: []string{}, InSync: true}
	for _, v := range views {
		for _, w := range v.Plan.Warnings {
			r.Warnings = append(r.Warnings, "svc/"+v.Input.Service.Name+": "+w.Object+": "+w.Message)
		}
		ps := podService(pod, v, o)
		r.InSync = r.InSync && ps.Published && len(ps.Drift) == 0
		r.Services = append(r.Services, ps)
	}
	r.Diagnosis = podDiagnosis(pod, r)
	return r
}

func podInfo(pod *corev1.Pod) PodInfo {
	pi := PodInfo{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName, Phase: string(pod.Status.Phase), IPs: nonNil(podIPs(pod)),
		Terminating: pod.DeletionTimestamp != nil, Labels: pod.Labels}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			pi.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return pi
}

// podService is one Service's view of the Pod: the row of explain svc's
// Report (Build, the same planner and reasons), and the drift on the
// Pod's addresses or naming the Pod.
func podService(pod *corev1.Pod, v ServiceView, o Options) PodService {
	o = v.options(Options{ManagedBy: o.ManagedBy, MaxEndpointsPerSlice: o.MaxEndpointsPerSlice})
	rep := Build(v.Input, v.Plan, o)
	ps := PodService{Service: rep.Service, Publications: []Publication{}, Drift: []Drift{}}
	ps.Decision = Pod{Name: pod.Name, Reason: reconcile.SelectorMismatch, Endpoint: []EndpointSummary{}, Notes: []reconcile.Note{}, MissingPorts: []string{}}
	for _, p := range rep.Pods {
		if p.Name == pod.Name {
			ps.Decision = p
		}
	}
	ips := map[string]bool{}
	for _, ip := range podIPs(pod) {
		ips[ip] = true
	}
	for _, d := range rep.Drift {
		if d.Pod == pod.Name || holdsAny(d.Address, ips) {
			ps.Drift = append(ps.Drift, d)
		}
	}
	for _, s := range judge.Live(v.Input.Slices) {
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			if judge.PodOf(ep) == pod.Name || holdsAny(strings.Join(ep.Addresses, ","), ips) {
				ps.Publications = append(ps.Publications, slicePublication(s, ep, o.ManagedBy))
			}
		}
	}
	markPublications(ps.Publications, ps.Drift, func(Publication) string { return pod.Name })
	ps.Published = ps.Decision.Included && len(ps.Decision.MissingPorts) == 0
	ps.Diagnosis = podServiceDiagnosis(pod, ps)
	return ps
}

// holdsAny says whether a comma-joined address list holds one of ips.
func holdsAny(addresses string, ips map[string]bool) bool {
	for _, a := range strings.Split(addresses, ",") {
		if ips[a] {
			return true
		}
	}
	return false
}

func slicePublication(s *discovery.EndpointSlice, ep *discovery.Endpoint, ours string) Publication {
	mb := s.Labels[discovery.LabelManagedBy]
	p := Publication{Kind: "EndpointSlice", Namespace: s.Namespace, Name: s.Name, Service: s.Labels[discovery.LabelServiceName],
		ManagedBy: mb, Role: Role(mb, ours), AddressType: string(s.AddressType), Addresses: nonNil(ep.Addresses),
		Ready: ep.Conditions.Ready, Serving: ep.Conditions.Serving, Terminating: ep.Conditions.Terminating, TargetRef: judge.PodOf(ep), Problems: []string{}}
	if ep.NodeName != nil {
		p.Node = *ep.NodeName
	}
	return p
}

// markPublications marks each slice publication stale when its target is not the
// Pod that holds its address now (holder: "" for none), and desired when
// no drift names its manager and address.
func markPublications(pubs []Publication, drift []Drift, holder func(Publication) string) {
	for i := range pubs {
		p := &pubs[i]
		if h := holder(*p); p.TargetRef != h {
			p.Stale = true
			switch {
			case h == "":
				p.Problems = append(p.Problems, fmt.Sprintf("stale: targets pod %s, but no Pod holds the address now", orNone(p.TargetRef)))
			default:
				p.Problems = append(p.Problems, fmt.Sprintf("stale: targets pod %s, but pod %s holds the address now", orNone(p.TargetRef), h))
			}
		}
		for _, d := range drift {
			if d.Kind != Missing && holdsAny(d.Address, setOf(p.Addresses)) && contains(d.ManagedBy, p.ManagedBy) {
				p.Problems = append(p.Problems, string(d.Kind)+": "+d.Message)
			}
		}
		p.Desired = len(p.Problems) == 0
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func setOf(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// podServiceDiagnosis says in one line what the Service does with the Pod,
// and the command for it, as explain svc ends.
func podServiceDiagnosis(pod *corev1.Pod, ps PodService) Diagnosis {
	svc, d := ps.Service, ps.Decision
	syncCmd := fmt.Sprintf("kubectl slices sync svc/%s -n %s", svc.Name, svc.Namespace)
	describe := fmt.Sprintf("kubectl describe pod %s -n %s", pod.Name, pod.Namespace)
	switch {
	case svc.Verdict != reconcile.ServicePlanned:
		return Diagnosis{Summary: fmt.Sprintf("no endpoints are planned for svc/%s: %s", svc.Name, svc.Message)}
	case !d.Included && d.Reason == reconcile.NodeNotFound:
		return Diagnosis{Summary: fmt.Sprintf("not an endpoint of svc/%s: %s", svc.Name, d.Message), Command: "kubectl get node " + pod.Spec.NodeName}
	case !d.Included:
		return Diagnosis{Summary: fmt.Sprintf("not an endpoint of svc/%s: %s: %s", svc.Name, d.Reason, d.Message), Command: describe}
	case len(ps.Drift) > 0:
		return Diagnosis{Summary: fmt.Sprintf("svc/%s publishes the Pod out of date (%s)", svc.Name, countDrift(ps.Drift)), Command: syncCmd}
	case len(d.MissingPorts) > 0:
		return Diagnosis{Summary: fmt.Sprintf("an endpoint of svc/%s, but the Pod has no target port for %s and receives no traffic on it", svc.Name, strings.Join(d.MissingPorts, ", ")),
			Command: fmt.Sprintf("kubectl get pod %s -n %s -o jsonpath='{.spec.containers[*].ports}'", pod.Name, pod.Namespace)}
	case d.Ready != nil && !*d.Ready:
		return Diagnosis{Summary: fmt.Sprintf("published by svc/%s as desired, not ready: it receives no traffic until ready", svc.Name), Command: describe}
	}
	return Diagnosis{Summary: fmt.Sprintf("published by svc/%s as desired, ready", svc.Name)}
}

// podDiagnosis is the Pod's verdict over every Service: the first that
// does not publish it as desired, else how many do.
func podDiagnosis(pod *corev1.Pod, r PodReport) Diagnosis {
	if len(r.Services) == 0 {
		d := Diagnosis{Summary: fmt.Sprintf("no Service of namespace %s selects pod %s", pod.Namespace, pod.Name),
			Command: fmt.Sprintf("kubectl get services -n %s -o wide", pod.Namespace)}
		if len(r.NearMisses) > 0 {
			nm := r.NearMisses[0]
			have := nm.Label + "=" + nm.Have
			if nm.Missing {
				have = "no " + nm.Label + " label"
			}
			d.Summary += fmt.Sprintf("; nearest miss: svc/%s wants %s=%s, the Pod has %s", nm.Service, nm.Label, nm.Want, have)
		}
		return d
	}
	for _, ps := range r.Services {
		if !ps.Published || len(ps.Drift) > 0 {
			return ps.Diagnosis
		}
	}
	return Diagnosis{Summary: fmt.Sprintf("published as desired by %s", english.Plural(len(r.Services), "Service", "Services"))}
}
