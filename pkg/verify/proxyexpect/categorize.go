package proxyexpect

// categorize fills p's endpoint lists from the port's endpoints (sorted by
// String), as upstream's CategorizeEndpoints (pkg/proxy/topology.go):
//
//   - Cluster: the ready endpoints the topology mode allows; if there are
//     none, every serving terminating endpoint, hints ignored.
//   - Local: the local ready endpoints; if there are none, the local
//     serving terminating ones. The fallback is decided for Local on its
//     own, not from Cluster's.
//   - HasEndpoints: Cluster is not empty, or (for a port using Local) any
//     endpoint anywhere is ready or serving and terminating.
//
// A list of a policy the port uses is never nil, only empty.
func categorize(p *Port, eps []Endpoint, node Node) {
	if len(eps) == 0 {
		p.Cluster, p.Local, p.Reachable = emptyIf(p.UsesCluster), emptyIf(p.UsesLocal), []Endpoint{}
		return
	}
	if p.UsesCluster {
		p.Topology = topologyMode(eps, node)
		p.Cluster = filter(eps, func(ep Endpoint) bool {
			return ep.Ready && availableForTopology(ep, p.Topology, node)
		})
		// No ready endpoint in the chosen topology means none at all:
		// topologyMode would have ignored hints otherwise.
		if len(p.Cluster) == 0 {
			p.Cluster = filter(eps, servingTerminating)
		}
		p.HasEndpoints = len(p.Cluster) > 0
	}
	if !p.UsesLocal {
		p.Reachable = p.Cluster
		return
	}
	localTerminating := false
	p.Local = filter(eps, func(ep Endpoint) bool { return ep.Local && ep.Ready })
	if len(p.Local) == 0 {
		p.Local = filter(eps, func(ep Endpoint) bool { return ep.Local && servingTerminating(ep) })
		localTerminating = len(p.Local) > 0
	}
	for _, ep := range eps {
		if ep.Ready || servingTerminating(ep) {
			p.HasEndpoints = true
		}
	}
	switch {
	case !p.UsesCluster:
		p.Reachable = p.Local
	case p.Topology == TopologyNone && !localTerminating:
		// Cluster then holds every ready endpoint, the local ones among them.
		p.Reachable = p.Cluster
	default:
		p.Reachable = union(p.Cluster, p.Local)
	}
}

func emptyIf(uses bool) []Endpoint {
	if uses {
		return []Endpoint{}
	}
	return nil
}

func servingTerminating(ep Endpoint) bool { return ep.Serving && ep.Terminating }

// topologyMode chooses how hints narrow the cluster endpoints, from the
// ready endpoints only (upstream's topologyModeFromHints):
// PreferSameNode when every ready endpoint has a forNodes hint and one
// names this node; else PreferSameZone when every ready endpoint has a
// forZones hint and one names this node's zone; else none. Hints are thus
// ignored when any ready endpoint lacks them, or when none is meant for
// this node (or zone, or the node has no zone label), so that a node is
// never left without endpoints by them. The forNodes half is the
// PreferSameTrafficDistribution gate's, locked on since 1.35. The mode is
// read from the hints alone, whatever the Service's trafficDistribution.
func topologyMode(eps []Endpoint, node Node) string {
	anyReady, allNode, forNode, allZone, forZone := false, true, false, true, false
	for _, ep := range eps {
		if !ep.Ready {
			continue
		}
		anyReady = true
		if len(ep.NodeHints) == 0 {
			allNode = false
		} else if has(ep.NodeHints, node.Name) {
			forNode = true
		}
		if len(ep.ZoneHints) == 0 {
			allZone = false
		} else if has(ep.ZoneHints, node.Zone) {
			forZone = true
		}
	}
	switch {
	case !anyReady:
		return TopologyNone
	case allNode && forNode:
		return TopologyPreferSameNode
	case allZone && forZone:
		return TopologyPreferSameZone
	}
	return TopologyNone
}

func availableForTopology(ep Endpoint, mode string, node Node) bool {
	switch mode {
	case TopologyPreferSameNode:
		return has(ep.NodeHints, node.Name)
	case TopologyPreferSameZone:
		return has(ep.ZoneHints, node.Zone)
	}
	return true
}

// filter returns the endpoints keep accepts, in order, never nil: a port
// that uses a policy has a (maybe empty) list for it.
func filter(eps []Endpoint, keep func(Endpoint) bool) []Endpoint {
	out := make([]Endpoint, 0, len(eps))
	for _, ep := range eps {
		if keep(ep) {
			out = append(out, ep)
		}
	}
	return out
}

// union merges two lists by String, sorted; an endpoint in both comes
// once.
func union(a, b []Endpoint) []Endpoint {
	seen := make(map[string]bool, len(a)+len(b))
	out := make([]Endpoint, 0, len(a)+len(b))
	for _, list := range [][]Endpoint{a, b} {
		for _, ep := range list {
			if k := ep.String(); !seen[k] {
				seen[k] = true
				out = append(out, ep)
			}
		}
	}
	sortEndpoints(out)
	return out
}
