package endpoints

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Repack regroups subsets as upstream endpoints.RepackSubsets does: every
// address (keyed by IP and target UID, the first occurrence keeping its
// fields) is attached to each port of its subset, then ports that carry the
// same addresses with the same readiness form one subset. An address listed
// both ready and not ready for a port is not ready. A subset without ports
// keeps its addresses under no port unless they equal some port's addresses.
//
// Ports are compared as Go values, like upstream's map key: two ports whose
// appProtocol is set count as one only when they share the same pointer, as
// they do when built from one Service port.
//
// The result is in a fixed order: addresses by IP (byte order) then target
// UID, ready before not ready; ports by name, number, protocol; subsets by
// their ports, then their first address. The input is not modified.
func Repack(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	type addrKey struct {
		ip  string
		uid types.UID
	}
	index := map[addrKey]int{}
	var addrs []corev1.EndpointAddress
	byPort := map[corev1.EndpointPort]map[int]bool{}
	var portOrder []corev1.EndpointPort
	sentinel := corev1.EndpointPort{Port: -1}

	add := func(a *corev1.EndpointAddress, port corev1.EndpointPort, ready bool) {
		k := addrKey{ip: a.IP}
		if a.TargetRef != nil {
			k.uid = a.TargetRef.UID
		}
		i, ok := index[k]
		if !ok {
			i = len(addrs)
			index[k] = i
			addrs = append(addrs, *a.DeepCopy())
		}
		set, ok := byPort[port]
		if !ok {
			set = map[int]bool{}
			byPort[port] = set
			portOrder = append(portOrder, port)
		}
		if wasReady, found := set[i]; !found || wasReady {
			set[i] = ready
		}
	}
	for s := range subsets {
		ports := subsets[s].Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{sentinel}
		}
		for _, p := range ports {
			for a := range subsets[s].Addresses {
				add(&subsets[s].Addresses[a], p, true)
			}
			for a := range subsets[s].NotReadyAddresses {
				add(&subsets[s].NotReadyAddresses[a], p, false)
			}
		}
	}

	// Group ports by their address set.
	type group struct {
		set   map[int]bool
		ports []corev1.EndpointPort
		real  bool
	}
	groups := map[string]*group{}
	var keys []string
	for _, p := range portOrder {
		set := byPort[p]
		k := setKey(set)
		g, ok := groups[k]
		if !ok {
			g = &group{set: set}
			groups[k] = g
			keys = append(keys, k)
		}
		if p.Port > 0 { // the sentinel only keeps its addresses
			g.ports = append(g.ports, *p.DeepCopy())
		}
	}
	out := make([]corev1.EndpointSubset, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		var sub corev1.EndpointSubset
		for i, ready := range g.set {
			if ready {
				sub.Addresses = append(sub.Addresses, *addrs[i].DeepCopy())
			} else {
				sub.NotReadyAddresses = append(sub.NotReadyAddresses, *addrs[i].DeepCopy())
			}
		}
		sortAddresses(sub.Addresses)
		sortAddresses(sub.NotReadyAddresses)
		sortPorts(g.ports)
		sub.Ports = g.ports
		out = append(out, sub)
	}
	sort.SliceStable(out, func(i, j int) bool { return subsetLess(&out[i], &out[j]) })
	return out
}

func setKey(set map[int]bool) string {
	ids := make([]int, 0, len(set))
	for i := range set {
		ids = append(ids, i)
	}
	sort.Ints(ids)
	var b strings.Builder
	for _, i := range ids {
		b.WriteString(strconv.Itoa(i))
		if set[i] {
			b.WriteString("r,")
		} else {
			b.WriteString("n,")
		}
	}
	return b.String()
}

// LessAddress is upstream LessEndpointAddress: by IP (byte order), then an
// address without target first, then by target UID.
func LessAddress(a, b *corev1.EndpointAddress) bool {
	if a.IP != b.IP {
		return a.IP < b.IP
	}
	if b.TargetRef == nil {
		return false
	}
	if a.TargetRef == nil {
		return true
	}
	return a.TargetRef.UID < b.TargetRef.UID
}

func sortAddresses(a []corev1.EndpointAddress) {
	sort.SliceStable(a, func(i, j int) bool { return LessAddress(&a[i], &a[j]) })
}

func sortPorts(p []corev1.EndpointPort) {
	sort.SliceStable(p, func(i, j int) bool { return portString(&p[i]) < portString(&p[j]) })
}

func portString(p *corev1.EndpointPort) string {
	app := "-"
	if p.AppProtocol != nil {
		app = "=" + *p.AppProtocol
	}
	return p.Name + "\x00" + strconv.Itoa(int(p.Port)) + "\x00" + string(p.Protocol) + "\x00" + app
}

func subsetLess(a, b *corev1.EndpointSubset) bool {
	ka, kb := subsetPortsKey(a), subsetPortsKey(b)
	if ka != kb {
		return ka < kb
	}
	fa, fb := firstAddress(a), firstAddress(b)
	return fa < fb
}

func subsetPortsKey(s *corev1.EndpointSubset) string {
	parts := make([]string, len(s.Ports))
	for i := range s.Ports {
		parts[i] = portString(&s.Ports[i])
	}
	return strings.Join(parts, "\x01")
}

func firstAddress(s *corev1.EndpointSubset) string {
	switch {
	case len(s.Addresses) > 0:
		return "r" + s.Addresses[0].IP
	case len(s.NotReadyAddresses) > 0:
		return "n" + s.NotReadyAddresses[0].IP
	}
	return ""
}
