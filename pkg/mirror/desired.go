package mirror

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// group is the desired content of one slice: an address type and a port set.
type group struct {
	key         string
	addressType discovery.AddressType
	ports       []discovery.EndpointPort
	// endpoints in insertion order; index by endpoint key, the later
	// insertion replacing the earlier one as upstream's EndpointSet does.
	endpoints []discovery.Endpoint
	index     map[string]int
}

type desired struct {
	groups                              map[string]*group
	subsets, mirrored, invalid, skipped int
}

func groupKey(at discovery.AddressType, ports []discovery.EndpointPort) string {
	return string(at) + "/" + reconcile.PortsKey(ports)
}

// sortedKeys returns the group keys, IPv4 before IPv6, then by ports.
func (d *desired) sortedKeys() []string {
	keys := make([]string, 0, len(d.groups))
	for k := range d.groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// desire is upstream reconcile's first half: repack, then per subset and
// address type the endpoints to mirror.
func desire(ep *corev1.Endpoints, maxPerSubset int) *desired {
	d := &desired{groups: map[string]*group{}}
	subsets := endpoints.Repack(ep.Subsets)
	d.subsets = len(subsets)
	for i := range subsets {
		sub := &subsets[i]
		ports := mirrorPorts(sub.Ports)
		byType := map[discovery.AddressType]*group{}
		for _, at := range []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6} {
			k := groupKey(at, ports)
			g := d.groups[k]
			if g == nil {
				g = &group{key: k, addressType: at, index: map[string]int{}}
				d.groups[k] = g
			}
			g.ports = ports
			byType[at] = g
		}
		total, added := len(sub.Addresses)+len(sub.NotReadyAddresses), 0
		for _, list := range []struct {
			addrs []corev1.EndpointAddress
			ready bool
		}{{sub.Addresses, true}, {sub.NotReadyAddresses, false}} {
			for j := range list.addrs {
				if added >= maxPerSubset {
					break
				}
				e, at, ok := toEndpoint(&list.addrs[j], list.ready)
				if !ok {
					d.invalid++
					continue
				}
				byType[at].insert(e)
				added++
			}
		}
		d.mirrored += added
		d.skipped += total - added
	}
	return d
}

func (g *group) insert(e discovery.Endpoint) {
	k := reconcile.EndpointKey(&e)
	if i, ok := g.index[k]; ok {
		g.endpoints[i] = e
		return
	}
	g.index[k] = len(g.endpoints)
	g.endpoints = append(g.endpoints, e)
}

// mirrorPorts is upstream epPortsToEpsPorts.
func mirrorPorts(in []corev1.EndpointPort) []discovery.EndpointPort {
	out := make([]discovery.EndpointPort, 0, len(in))
	for i := range in {
		p := in[i].DeepCopy()
		out = append(out, discovery.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
	}
	return out
}

// toEndpoint is upstream addressToEndpoint.
func toEndpoint(a *corev1.EndpointAddress, ready bool) (discovery.Endpoint, discovery.AddressType, bool) {
	ip, ok := reconcile.ParseIPSloppy(a.IP)
	if !ok {
		return discovery.Endpoint{}, "", false
	}
	at := discovery.AddressTypeIPv4
	if ip.Is6() {
		at = discovery.AddressTypeIPv6
	}
	a = a.DeepCopy()
	e := discovery.Endpoint{
		Addresses:  []string{ip.String()},
		Conditions: discovery.EndpointConditions{Ready: &ready},
		TargetRef:  a.TargetRef,
		NodeName:   a.NodeName,
	}
	if a.Hostname != "" {
		e.Hostname = &a.Hostname
	}
	return e, at, true
}
