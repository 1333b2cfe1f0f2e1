package reconcile

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// epKey is an endpoint's identity, as upstream's hashEndpoint: its sorted
// addresses, hostname and the namespace/name of its target. Conditions, node,
// zone and UID are not part of it, so a Pod recreated under the same name and
// IP is an in-place update rather than a remove and an add.
type epKey struct {
	namespace, name, hostname, addresses string
}

func keyOf(ep *discovery.Endpoint) epKey {
	k := epKey{}
	if ep.Hostname != nil {
		k.hostname = *ep.Hostname
	}
	if ep.TargetRef != nil {
		k.namespace, k.name = ep.TargetRef.Namespace, ep.TargetRef.Name
	}
	switch len(ep.Addresses) {
	case 0:
	case 1:
		k.addresses = ep.Addresses[0]
	default:
		// Sort a copy: upstream sorts the live slice in place, we must not.
		addrs := append([]string(nil), ep.Addresses...)
		sort.Strings(addrs)
		k.addresses = strings.Join(addrs, ",")
	}
	return k
}

// endpointStore holds everything an endpoint's pointers point at, so that
// building one endpoint costs one allocation instead of seven.
type endpointStore struct {
	ready, serving, terminating bool
	nodeName, zone, hostname    string
	addresses                   [1]string
	ref                         corev1.ObjectReference
}

// podFacts is what the planner derives from a Pod once, whatever the
// address type.
type podFacts struct {
	pod      *corev1.Pod
	decision int // index into Plan.Pods
	ports    []discovery.EndpointPort
	portKey  string
	// node is nil when the Node is missing or unreadable.
	node *corev1.Node
	// nodeMissing: the Node does not exist and the Pod is skipped for it.
	nodeMissing bool
	// zoneFromLive: the Node could not be read; keep the live zone.
	zoneFromLive bool
	// v4, v6 are the Pod's addresses by family, parsed once.
	v4, v6 []string
}

// isPodReady is upstream's IsPodReady: the first Ready condition is True.
func isPodReady(pod *corev1.Pod) bool {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return pod.Status.Conditions[i].Status == corev1.ConditionTrue
		}
	}
	return false
}

// podExclusion returns why a Pod can never be an endpoint (upstream
// ShouldPodBeInEndpoints with includeTerminating=true), or "".
func podExclusion(pod *corev1.Pod) (Reason, string) {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return PodTerminal, fmt.Sprintf("pod is in terminal phase %s", pod.Status.Phase)
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return NoPodIP, "pod has no IP address yet"
	}
	return "", ""
}

// podAddresses returns the Pod's addresses by family in canonical form.
// Like upstream it reads only status.podIPs, never status.podIP.
func podAddresses(pod *corev1.Pod) (v4, v6 []string) {
	for _, podIP := range pod.Status.PodIPs {
		ip, ok := parseIPSloppy(podIP.IP)
		switch {
		case !ok:
		case ip.Is6():
			v6 = append(v6, ip.String())
		default:
			v4 = append(v4, ip.String())
		}
	}
	return v4, v6
}

// parseIPSloppy parses like k8s.io/utils/net.ParseIPSloppy: IPv4 octets with
// leading zeros are accepted as decimal. An IPv4-mapped IPv6 address counts
// as IPv4, as net.IP.To4 would have it.
func parseIPSloppy(s string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(s); err == nil {
		if ip.Zone() != "" {
			return netip.Addr{}, false
		}
		return ip.Unmap(), true
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, p := range parts {
		if p == "" || len(p) > 3 {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return netip.Addr{}, false
		}
		b[i] = byte(n)
	}
	return netip.AddrFrom4(b), true
}

// buildEndpoint is upstream podToEndpoint for one address type. It returns
// false when the Pod has no address of that type.
func buildEndpoint(svc *corev1.Service, f *podFacts, addressType discovery.AddressType, liveZone func(epKey) *string) (discovery.Endpoint, bool) {
	pod := f.pod
	addrs := f.v4
	if addressType == discovery.AddressTypeIPv6 {
		addrs = f.v6
	}
	if len(addrs) == 0 {
		return discovery.Endpoint{}, false
	}
	st := &endpointStore{}
	st.serving = isPodReady(pod)
	st.terminating = pod.DeletionTimestamp != nil
	st.ready = svc.Spec.PublishNotReadyAddresses || (st.serving && !st.terminating)
	st.ref = corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	ep := discovery.Endpoint{
		Conditions: discovery.EndpointConditions{Ready: &st.ready, Serving: &st.serving, Terminating: &st.terminating},
		TargetRef:  &st.ref,
	}
	if len(addrs) == 1 {
		st.addresses[0] = addrs[0]
		ep.Addresses = st.addresses[:]
	} else {
		ep.Addresses = append([]string(nil), addrs...)
	}
	if pod.Spec.NodeName != "" {
		st.nodeName = pod.Spec.NodeName
		ep.NodeName = &st.nodeName
	}
	if len(pod.Spec.Hostname) > 0 && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace {
		st.hostname = pod.Spec.Hostname
		ep.Hostname = &st.hostname
	}
	switch {
	case f.node != nil:
		if z := f.node.Labels[labelZone]; z != "" {
			st.zone = z
			ep.Zone = &st.zone
		}
	case f.zoneFromLive && liveZone != nil:
		if z := liveZone(keyOf(&ep)); z != nil {
			st.zone = *z
			ep.Zone = &st.zone
		}
	}
	return ep, true
}

// endpointsEqualBeyondKey is upstream EndpointsEqualBeyondHash: node, zone,
// conditions (nil differs from a value) and the target reference without its
// resourceVersion. Hints are deliberately not compared.
func endpointsEqualBeyondKey(a, b *discovery.Endpoint) bool {
	return strPtrEqual(a.NodeName, b.NodeName) && strPtrEqual(a.Zone, b.Zone) &&
		boolPtrEqual(a.Conditions.Ready, b.Conditions.Ready) &&
		boolPtrEqual(a.Conditions.Serving, b.Conditions.Serving) &&
		boolPtrEqual(a.Conditions.Terminating, b.Conditions.Terminating) &&
		refEqualIgnoringRV(a.TargetRef, b.TargetRef)
}

func strPtrEqual(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func boolPtrEqual(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func refEqualIgnoringRV(a, b *corev1.ObjectReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.ResourceVersion, y.ResourceVersion = "", ""
	return x == y
}

// EndpointKey is an endpoint's identity as the planner matches it: its
// addresses, hostname and target. Callers use it to match live endpoints to
// desired ones the way a sync would.
func EndpointKey(ep *discovery.Endpoint) string {
	k := keyOf(ep)
	return k.namespace + "/" + k.name + "|" + k.hostname + "|" + k.addresses
}

// EndpointsEquivalent reports whether a sync would leave b as a (same key
// assumed): node, zone, conditions and target all equal. Hints are ignored.
func EndpointsEquivalent(a, b *discovery.Endpoint) bool { return endpointsEqualBeyondKey(a, b) }
