package explain

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// VersionNote is one way the cluster's kube-controller-manager, older than
// the release kubectl-slices plans as, publishes this Service's endpoints
// differently from the plan. Such a difference is not drift to repair: it is
// the older controller's rule, and its slices show it.
type VersionNote struct {
	// Difference is SidecarPort, AddressNotCanonical or ZonelessHint.
	Difference VersionDifference `json:"difference"`
	// Since is the first release whose controller does as the plan does.
	Since   string   `json:"since"`
	Pods    []string `json:"pods"`
	Message string   `json:"message"`
}

// VersionDifference names a controller rule that changed between releases.
type VersionDifference string

const (
	// SidecarPort: a named targetPort that only a sidecar (an init
	// container with restartPolicy Always) declares is left out.
	SidecarPort VersionDifference = "SidecarPort"
	// AddressNotCanonical: a Pod IP is published as written, not canonical.
	AddressNotCanonical VersionDifference = "AddressNotCanonical"
	// ZonelessHint: under trafficDistribution, a ready endpoint without a
	// zone is hinted to the zone "" instead of left unhinted.
	ZonelessHint VersionDifference = "ZonelessHint"
)

// The first minor release of kube-controller-manager whose EndpointSlice
// controller follows each rule as kubectl-slices does (found by `make
// compat` against v1.31 to v1.36).
const (
	sidecarPortsSince = 33
	canonicalSince    = 33
	zonelessSince     = 33
)

// maxNotePods bounds the Pods a note's message names; Pods lists them all.
const maxNotePods = 3

// VersionNotes says where kube-controller-manager v1.<serverMinor> would
// publish this Service's endpoints differently from plan, one note per
// difference (per Service port for sidecar ports). serverMinor 0 (unknown, or no server: explain --local) gives
// none, as does a release at or after every rule's change.
func VersionNotes(in reconcile.Input, plan *reconcile.Plan, serverMinor int) []VersionNote {
	notes := []VersionNote{}
	if serverMinor <= 0 || plan == nil || !plan.Service.Planned() || in.Service == nil {
		return notes
	}
	pods := map[string]*corev1.Pod{}
	for _, p := range in.Pods {
		pods[p.Namespace+"/"+p.Name] = p
	}
	var included []*corev1.Pod
	var decisions []reconcile.PodDecision
	for _, d := range plan.Pods {
		if p := pods[d.Namespace+"/"+d.Name]; p != nil && d.Included {
			included, decisions = append(included, p), append(decisions, d)
		}
	}
	svc := in.Service
	if serverMinor < sidecarPortsSince {
		notes = append(notes, sidecarNotes(svc, included)...)
	}
	if serverMinor < canonicalSince {
		if n := addressNote(included, decisions); n != nil {
			notes = append(notes, *n)
		}
	}
	if serverMinor < zonelessSince {
		if n := zonelessNote(svc, decisions); n != nil {
			notes = append(notes, *n)
		}
	}
	return notes
}

// sidecarNotes: one note per Service port whose named targetPort, for some
// included Pods, only a restartable init container declares; controllers
// before v1.33 look in the regular containers only.
func sidecarNotes(svc *corev1.Service, pods []*corev1.Pod) []VersionNote {
	var notes []VersionNote
	for _, sp := range svc.Spec.Ports {
		if sp.TargetPort.Type != intstr.String {
			continue
		}
		var names []string
		for _, p := range pods {
			if !declares(p.Spec.Containers, sp, false) && declares(p.Spec.InitContainers, sp, true) {
				names = append(names, p.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		notes = append(notes, VersionNote{Difference: SidecarPort, Since: release(sidecarPortsSince), Pods: names,
			Message: fmt.Sprintf("service port %s: targetPort %q is declared only by a sidecar (an init container with restartPolicy Always) in %s; "+
				"kube-controller-manager before %s leaves the port out of those endpoints, kubectl-slices includes it",
				portName(sp), sp.TargetPort.StrVal, podList(names), release(sidecarPortsSince))})
	}
	return notes
}

// declares says whether a container (with sidecarsOnly, a restartable init
// container) declares sp's named targetPort with its protocol.
func declares(containers []corev1.Container, sp corev1.ServicePort, sidecarsOnly bool) bool {
	for _, c := range containers {
		if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
			continue
		}
		for _, cp := range c.Ports {
			if cp.Name == sp.TargetPort.StrVal && cp.Protocol == sp.Protocol {
				return true
			}
		}
	}
	return false
}

// addressNote names the included Pods with an IP not in canonical form
// among those planned (an address family the Service does not serve is not
// published at all): controllers before v1.33 copy it as written.
func addressNote(pods []*corev1.Pod, decisions []reconcile.PodDecision) *VersionNote {
	var names, pairs []string
	for i, p := range pods {
		planned := map[string]bool{}
		for _, e := range decisions[i].Endpoints {
			for _, a := range e.Endpoint.Addresses {
				planned[a] = true
			}
		}
		found := false
		for _, ip := range podIPs(p) {
			a, err := netip.ParseAddr(ip)
			if err != nil || a.String() == ip || !planned[a.String()] {
				continue
			}
			pairs = append(pairs, fmt.Sprintf("%s %s (canonical %s)", p.Name, ip, a))
			found = true
		}
		if found {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	shown := pairs
	if len(shown) > maxNotePods {
		shown = append(shown[:maxNotePods:maxNotePods], fmt.Sprintf("and %d more", len(pairs)-maxNotePods))
	}
	return &VersionNote{Difference: AddressNotCanonical, Since: release(canonicalSince), Pods: names,
		Message: fmt.Sprintf("Pod IPs not in canonical form: %s; kube-controller-manager before %s publishes them as written, "+
			"kubectl-slices in canonical form", strings.Join(shown, ", "), release(canonicalSince))}
}

// podIPs are the Pod's IPs as written, status.podIP first, each once.
func podIPs(p *corev1.Pod) []string {
	seen := map[string]bool{}
	var out []string
	for _, ip := range append([]string{p.Status.PodIP}, ipStrings(p.Status.PodIPs)...) {
		if ip != "" && !seen[ip] {
			seen[ip] = true
			out = append(out, ip)
		}
	}
	return out
}

func ipStrings(ips []corev1.PodIP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.IP)
	}
	return out
}

// zonelessNote: under trafficDistribution PreferClose (the one value those
// releases know; the topology annotation overrides it), controllers before
// v1.33 hint every ready endpoint to its zone, "" when it has none;
// kubectl-slices leaves those unhinted.
func zonelessNote(svc *corev1.Service, decisions []reconcile.PodDecision) *VersionNote {
	td := svc.Spec.TrafficDistribution
	if td == nil || *td != corev1.ServiceTrafficDistributionPreferClose || autoTopology(svc.Annotations) {
		return nil
	}
	var names []string
	for _, d := range decisions {
		for _, e := range d.Endpoints {
			ep := e.Endpoint
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready && (ep.Zone == nil || *ep.Zone == "") {
				names = append(names, d.Name)
				break
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &VersionNote{Difference: ZonelessHint, Since: release(zonelessSince), Pods: names,
		Message: fmt.Sprintf("ready endpoints without a zone (the Node has no %s label, or is gone) in %s; under trafficDistribution "+
			"kube-controller-manager before %s hints them to the zone \"\", kubectl-slices leaves them unhinted",
			corev1.LabelTopologyZone, podList(names), release(zonelessSince))}
}

// autoTopology is upstream's reading of the topology annotations: Auto
// hints take precedence over trafficDistribution.
func autoTopology(annotations map[string]string) bool {
	v, ok := annotations[corev1.AnnotationTopologyMode]
	if !ok {
		v = annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	}
	return v == "Auto" || v == "auto"
}

func release(minor int) string { return fmt.Sprintf("v1.%d", minor) }

// podList names the Pods, the first few of them when there are many.
func podList(names []string) string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	word := "Pod "
	if len(sorted) > 1 {
		word = "Pods "
	}
	if len(sorted) > maxNotePods {
		return word + strings.Join(sorted[:maxNotePods], ", ") + fmt.Sprintf(" and %d more", len(sorted)-maxNotePods)
	}
	return word + strings.Join(sorted, ", ")
}

func portName(sp corev1.ServicePort) string {
	if sp.Name != "" {
		return sp.Name
	}
	return fmt.Sprint(sp.Port)
}
