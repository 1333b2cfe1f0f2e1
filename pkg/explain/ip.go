package explain

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// IPSchemaVersion is the schema of `explain --ip ADDRESS -o json`, bumped
// on any incompatible change to IPReport.
const IPSchemaVersion = "kubectl-slices.explain-ip/v1"

// IPReport says who holds an address and who publishes it.
type IPReport struct {
	Schema string `json:"schema"`
	// Source is "cluster", or "local" for objects read from -f.
	Source  string `json:"source"`
	Address string `json:"address"`
	// Family is IPv4 or IPv6.
	Family string `json:"family"`
	// Namespace is the one looked in, "" for every namespace (-A).
	Namespace string `json:"namespace"`
	// Holders are the Pods whose status.podIPs hold the address now.
	Holders []PodRef `json:"holders"`
	// Publications are every EndpointSlice endpoint and v1 Endpoints
	// address that holds it, by namespace, Service, kind and name.
	Publications []Publication `json:"publications"`
	// Missing names the Services (namespace/name) that should publish a
	// holder at this address but where no manager does.
	Missing   []string  `json:"missing"`
	InSync    bool      `json:"inSync"`
	Found     bool      `json:"found"`
	Diagnosis Diagnosis `json:"diagnosis"`
}

// PodRef names a Pod.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// IPInput is what explain --ip judges.
type IPInput struct {
	Address netip.Addr
	// Namespace is the one looked in, "" for all.
	Namespace string
	// Holders are the Pods that hold the address now.
	Holders []*corev1.Pod
	// Slices and Endpoints are the objects that hold the address.
	Slices    []*discovery.EndpointSlice
	Endpoints []*corev1.Endpoints
	// Views are the Services of those objects and the Services selecting
	// a holder, each planned with the holders of its namespace.
	Views []ServiceView
}

// HoldsAddress says whether a slice has an endpoint at addr.
func HoldsAddress(s *discovery.EndpointSlice, addr netip.Addr) bool {
	for i := range s.Endpoints {
		if endpointHolds(s.Endpoints[i].Addresses, addr) {
			return true
		}
	}
	return false
}

// EndpointsHoldAddress says whether a v1 Endpoints object lists addr.
func EndpointsHoldAddress(ep *corev1.Endpoints, addr netip.Addr) bool {
	for _, s := range ep.Subsets {
		for _, list := range [][]corev1.EndpointAddress{s.Addresses, s.NotReadyAddresses} {
			for _, a := range list {
				if sameAddr(a.IP, addr) {
					return true
				}
			}
		}
	}
	return false
}

// PodHoldsAddress says whether a Pod's status.podIPs (or podIP) hold addr.
func PodHoldsAddress(pod *corev1.Pod, addr netip.Addr) bool {
	return endpointHolds(podIPs(pod), addr)
}

func endpointHolds(addresses []string, addr netip.Addr) bool {
	for _, a := range addresses {
		if sameAddr(a, addr) {
			return true
		}
	}
	return false
}

// sameAddr compares as addresses, so 2001:db8::1 is 2001:DB8:0::1.
func sameAddr(s string, addr netip.Addr) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a == addr
}

// BuildIP explains an address: each publication named and judged by the
// planner's view of its Service with the Pod that holds the address now.
func BuildIP(in IPInput, o Options) IPReport {
	r := IPReport{Schema: IPSchemaVersion, Address: in.Address.String(), Family: "IPv4", Namespace: in.Namespace,
		Holders: []PodRef{}, Publications: []Publication{}, Missing: []string{}}
	if in.Address.Is6() {
		r.Family = "IPv6"
	}
	holder := map[string]*corev1.Pod{}
	for _, p := range in.Holders {
		r.Holders = append(r.Holders, PodRef{Namespace: p.Namespace, Name: p.Name})
		holder[p.Namespace] = p
	}
	sort.Slice(r.Holders, func(i, j int) bool {
		return r.Holders[i].Namespace+"/"+r.Holders[i].Name < r.Holders[j].Namespace+"/"+r.Holders[j].Name
	})
	holderName := func(p Publication) string {
		if h := holder[p.Namespace]; h != nil {
			return h.Name
		}
		return ""
	}
	views := map[string]ServiceView{}
	for _, v := range in.Views {
		views[v.Input.Service.Namespace+"/"+v.Input.Service.Name] = v
	}
	addrs := map[string]bool{r.Address: true}
	for _, key := range slices.Sorted(maps.Keys(views)) {
		v := views[key]
		vo := v.options(Options{ManagedBy: o.ManagedBy, MaxEndpointsPerSlice: o.MaxEndpointsPerSlice})
		rep := Build(v.Input, v.Plan, vo)
		var drift []Drift
		for _, d := range rep.Drift {
			if holdsAny(d.Address, addrs) {
				drift = append(drift, d)
				if d.Kind == Missing {
					r.Missing = append(r.Missing, key)
				}
			}
		}
		var pubs []Publication
		for _, s := range judge.Live(v.Input.Slices) {
			for i := range s.Endpoints {
				if endpointHolds(s.Endpoints[i].Addresses, in.Address) {
					pubs = append(pubs, slicePublication(s, &s.Endpoints[i], vo.ManagedBy))
				}
			}
		}
		markPublications(pubs, drift, holderName)
		r.Publications = append(r.Publications, pubs...)
	}
	r.Publications = append(r.Publications, orphanPublications(in, views, o.ManagedBy, holderName)...)
	r.Publications = append(r.Publications, endpointsPublications(in, views, holderName)...)
	sortPublications(r.Publications)
	r.Found = len(r.Holders) > 0 || len(r.Publications) > 0
	r.InSync = len(r.Missing) == 0
	for _, p := range r.Publications {
		r.InSync = r.InSync && p.Desired
	}
	r.Diagnosis = ipDiagnosis(r)
	return r
}

// orphanPublications are the slices holding the address whose Service
// does not exist: nothing would publish them.
func orphanPublications(in IPInput, views map[string]ServiceView, ours string, holder func(Publication) string) []Publication {
	var out []Publication
	for _, s := range in.Slices {
		if s.DeletionTimestamp != nil {
			continue
		}
		if _, ok := views[s.Namespace+"/"+s.Labels[discovery.LabelServiceName]]; ok {
			continue
		}
		for i := range s.Endpoints {
			if endpointHolds(s.Endpoints[i].Addresses, in.Address) {
				out = append(out, slicePublication(s, &s.Endpoints[i], ours))
			}
		}
	}
	markPublications(out, nil, holder)
	for i := range out {
		out[i].Problems = append(out[i].Problems, "its Service "+orNone(out[i].Service)+" does not exist")
		out[i].Desired = false
	}
	return out
}

// endpointsPublications are the v1 Endpoints addresses at the address,
// judged against what the Endpoints controller would write (the endpoints
// planner) for the holder.
func endpointsPublications(in IPInput, views map[string]ServiceView, holder func(Publication) string) []Publication {
	var out []Publication
	for _, ep := range in.Endpoints {
		for _, pub := range endpointsAddresses(ep, in.Address) {
			pubs := []Publication{pub}
			markPublications(pubs, nil, holder)
			pub = pubs[0]
			v, ok := views[ep.Namespace+"/"+ep.Name]
			switch {
			case !ok:
				pub.Problems = append(pub.Problems, "its Service does not exist")
			case ep.Labels[endpoints.LabelManagedBy] == endpoints.ControllerManagedBy:
				if msg := endpointsAddressDrift(v, ep, in.Address, pub.Ready); msg != "" {
					pub.Problems = append(pub.Problems, msg)
				}
			}
			pub.Desired = len(pub.Problems) == 0
			out = append(out, pub)
		}
	}
	return out
}

func endpointsAddresses(ep *corev1.Endpoints, addr netip.Addr) []Publication {
	mb := ep.Labels[endpoints.LabelManagedBy]
	role := "other"
	if mb == endpoints.ControllerManagedBy {
		role = "endpoints-controller"
	}
	var out []Publication
	for _, s := range ep.Subsets {
		for _, l := range []struct {
			list  []corev1.EndpointAddress
			ready bool
		}{{s.Addresses, true}, {s.NotReadyAddresses, false}} {
			for _, a := range l.list {
				if !sameAddr(a.IP, addr) {
					continue
				}
				ready := l.ready
				p := Publication{Kind: "Endpoints", Namespace: ep.Namespace, Name: ep.Name, Service: ep.Name, ManagedBy: mb, Role: role,
					Addresses: []string{a.IP}, Ready: &ready, Problems: []string{}}
				if a.NodeName != nil {
					p.Node = *a.NodeName
				}
				if a.TargetRef != nil && a.TargetRef.Kind == "Pod" {
					p.TargetRef = a.TargetRef.Name
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// endpointsAddressDrift compares an address of the Endpoints controller's
// object with what the controller would write for the holders (the
// endpoints planner): "" when it agrees.
func endpointsAddressDrift(v ServiceView, live *corev1.Endpoints, addr netip.Addr, ready *bool) string {
	sel := labels.SelectorFromSet(v.Input.Service.Spec.Selector)
	var pods []*corev1.Pod
	for _, p := range v.Input.Pods {
		if len(v.Input.Service.Spec.Selector) > 0 && sel.Matches(labels.Set(p.Labels)) {
			pods = append(pods, p)
		}
	}
	plan, err := endpoints.Compute(endpoints.Input{Service: v.Input.Service, Pods: pods, Live: live}, endpoints.Options{ManagedBy: endpoints.ControllerManagedBy})
	if err != nil || plan.Desired == nil {
		return ""
	}
	w, ok := false, false
	for ip, r := range addressReadiness(plan.Desired) {
		if sameAddr(ip, addr) {
			w, ok = r, true
		}
	}
	switch {
	case !ok:
		return "Stale: the Endpoints controller would not list this address"
	case ready != nil && w != *ready:
		return fmt.Sprintf("Changed: listed ready=%v (want %v)", *ready, w)
	}
	return ""
}

func sortPublications(ps []Publication) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		for _, c := range [][2]string{{a.Namespace, b.Namespace}, {a.Service, b.Service}, {a.Kind, b.Kind}, {a.Name, b.Name}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return false
	})
}

func ipDiagnosis(r IPReport) Diagnosis {
	if !r.Found {
		where := "namespace " + r.Namespace
		if r.Namespace == "" {
			where = "any namespace"
		}
		return Diagnosis{Summary: fmt.Sprintf("no Pod holds %s and no EndpointSlice or Endpoints object of %s publishes it", r.Address, where)}
	}
	var stale, wrong []string
	for _, p := range r.Publications {
		switch {
		case p.Stale:
			stale = append(stale, fmt.Sprintf("%s %s/%s (%s)", strings.ToLower(p.Kind), p.Namespace, p.Name, ManagerName(p.ManagedBy)))
		case !p.Desired:
			wrong = append(wrong, fmt.Sprintf("%s %s/%s (%s)", strings.ToLower(p.Kind), p.Namespace, p.Name, ManagerName(p.ManagedBy)))
		}
	}
	holders := "no Pod holds it now"
	if len(r.Holders) > 0 {
		var hs []string
		for _, h := range r.Holders {
			hs = append(hs, "pod "+h.Namespace+"/"+h.Name)
		}
		holders = strings.Join(hs, ", ") + " holds it now"
	}
	switch {
	case len(stale) > 0:
		return Diagnosis{Summary: fmt.Sprintf("%s; stale publications name another Pod: %s", holders, strings.Join(stale, ", ")), Command: syncHint(r)}
	case len(wrong) > 0:
		return Diagnosis{Summary: fmt.Sprintf("%s; published other than the planner would: %s", holders, strings.Join(wrong, ", ")), Command: syncHint(r)}
	case len(r.Missing) > 0:
		return Diagnosis{Summary: fmt.Sprintf("%s; not published by %s although selected", holders, strings.Join(r.Missing, ", ")), Command: syncHint(r)}
	case len(r.Publications) == 0:
		return Diagnosis{Summary: holders + "; no Service publishes it"}
	}
	return Diagnosis{Summary: fmt.Sprintf("%s; published as desired (%d publications)", holders, len(r.Publications))}
}

// syncHint is the command that repairs the first Service whose
// publication of the address is not desired.
func syncHint(r IPReport) string {
	for _, p := range r.Publications {
		if !p.Desired && p.Service != "" {
			return fmt.Sprintf("kubectl slices sync svc/%s -n %s", p.Service, p.Namespace)
		}
	}
	for _, m := range r.Missing {
		ns, name, _ := strings.Cut(m, "/")
		return fmt.Sprintf("kubectl slices sync svc/%s -n %s", name, ns)
	}
	return ""
}

// IPView plans svc with the holders of its namespace: the planner's
// decision for them, whatever the other Pods.
func IPView(svc *corev1.Service, holders []*corev1.Pod, slices []*discovery.EndpointSlice, nodes reconcile.Nodes) reconcile.Input {
	in := reconcile.Input{Service: svc, Nodes: nodes}
	for _, p := range holders {
		if p.Namespace == svc.Namespace {
			in.Pods = append(in.Pods, p)
		}
	}
	for _, s := range slices {
		if s.Namespace == svc.Namespace && s.Labels[discovery.LabelServiceName] == svc.Name {
			in.Slices = append(in.Slices, s)
		}
	}
	return in
}
