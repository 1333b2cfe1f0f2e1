package proxyexpect

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	utilnet "k8s.io/utils/net"
)

// portKey names a service port as kube-proxy matches slice ports to it:
// by name and protocol, never by number.
type portKey struct {
	name     string
	protocol corev1.Protocol
}

// endpointsByPort is kube-proxy's endpoints map for the Service in one
// family (pkg/proxy/endpointslicecache.go): per slice port, the endpoints
// of every slice of the Service, one per "IP:port", sorted by it.
func endpointsByPort(svc *corev1.Service, fam corev1.IPFamily, slices []*discoveryv1.EndpointSlice, node Node) map[portKey][]Endpoint {
	sets := map[portKey]map[string]Endpoint{}
	for _, s := range slicesOf(svc, fam, slices) {
		for _, sp := range s.Ports {
			// Upstream skips a port without a name or number; an unnamed
			// port has the name "".
			if sp.Name == nil || sp.Port == nil || *sp.Port == 0 {
				continue
			}
			key := portKey{*sp.Name, corev1.ProtocolTCP}
			if sp.Protocol != nil {
				key.protocol = *sp.Protocol // the API server defaults it to TCP
			}
			if sets[key] == nil {
				sets[key] = map[string]Endpoint{}
			}
			addEndpoints(sets[key], *sp.Port, s.Endpoints, node)
		}
	}
	out := make(map[portKey][]Endpoint, len(sets))
	for key, set := range sets {
		list := make([]Endpoint, 0, len(set))
		for _, ep := range set {
			list = append(list, ep)
		}
		sortEndpoints(list)
		out[key] = list
	}
	return out
}

// slicesOf keeps the slices kube-proxy files under the Service in the
// family and orders them by name. kube-proxy's slice informer lists only
// slices without the service.kubernetes.io/headless label; its cache keys
// a slice by namespace and kubernetes.io/service-name label (managed-by is
// not read) and tracks one address type per family, so FQDN slices never
// count. Of two slices with one name (not possible in the API) the later
// replaces the earlier, as an update does in the cache.
func slicesOf(svc *corev1.Service, fam corev1.IPFamily, slices []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	at := discoveryv1.AddressTypeIPv4
	if fam == corev1.IPv6Protocol {
		at = discoveryv1.AddressTypeIPv6
	}
	byName := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range slices {
		if s == nil || s.AddressType != at || s.Namespace != svc.Namespace || s.Name == "" {
			continue
		}
		if name := s.Labels[discoveryv1.LabelServiceName]; name == "" || name != svc.Name {
			continue
		}
		if _, headless := s.Labels[corev1.IsHeadlessService]; headless {
			continue
		}
		byName[s.Name] = s
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// addEndpoints adds a slice's endpoints for one port to set, keyed by
// "IP:port". An endpoint seen twice (moving between slices, or an IP
// reused by a new Pod while the old one terminates) is replaced unless the
// newcomer is terminating: a running endpoint wins over a terminating one.
// Between two running, or two terminating, copies upstream's choice
// depends on its map order; here the slices come in name order, the last
// running copy or the first terminating one wins.
func addEndpoints(set map[string]Endpoint, port int32, eps []discoveryv1.Endpoint, node Node) {
	for i := range eps {
		e := &eps[i]
		if len(e.Addresses) == 0 {
			continue
		}
		ep := Endpoint{
			// ParseIPSloppy accepts leading zeros in IPv4, and an address
			// that is no IP becomes "<nil>", as upstream's key does.
			IP:          utilnet.ParseIPSloppy(e.Addresses[0]).String(),
			Port:        port,
			Local:       e.NodeName != nil && node.Name != "" && *e.NodeName == node.Name,
			Ready:       e.Conditions.Ready == nil || *e.Conditions.Ready,
			Serving:     e.Conditions.Serving == nil || *e.Conditions.Serving,
			Terminating: e.Conditions.Terminating != nil && *e.Conditions.Terminating,
		}
		if e.Hints != nil {
			for _, z := range e.Hints.ForZones {
				ep.ZoneHints = append(ep.ZoneHints, z.Name)
			}
			for _, n := range e.Hints.ForNodes {
				ep.NodeHints = append(ep.NodeHints, n.Name)
			}
			ep.ZoneHints, ep.NodeHints = uniqueSorted(ep.ZoneHints), uniqueSorted(ep.NodeHints)
		}
		key := ep.String()
		if _, exists := set[key]; !exists || !ep.Terminating {
			set[key] = ep
		}
	}
}

// localReady is kube-proxy's LocalReadyEndpoints for the Service: the
// distinct IPs of local ready endpoints over every slice port, so a Pod
// serving two ports counts once.
func localReady(byPort map[portKey][]Endpoint) int {
	ips := map[string]bool{}
	for _, eps := range byPort {
		for _, ep := range eps {
			if ep.Ready && ep.Local {
				ips[ep.IP] = true
			}
		}
	}
	return len(ips)
}

func sortEndpoints(eps []Endpoint) {
	sort.Slice(eps, func(i, j int) bool { return eps[i].String() < eps[j].String() })
}

// uniqueSorted returns the names sorted without duplicates, nil for none.
func uniqueSorted(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := append([]string(nil), names...)
	sort.Strings(out)
	n := 1
	for _, s := range out[1:] {
		if s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}

func has(names []string, name string) bool {
	i := sort.SearchStrings(names, name)
	return i < len(names) && names[i] == name
}
