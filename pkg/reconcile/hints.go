package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// sliceSet is the per-address-type state the hint logic works on, like
// upstream's topologycache.SliceInfo.
type sliceSet struct {
	create, update, unchanged []*discovery.EndpointSlice
}

// hintsEnabled is upstream's reading of the topology annotations: the
// deprecated topology-aware-hints key wins when present; only "Auto" and
// "auto" enable the CPU-weighted allocator.
func hintsEnabled(annotations map[string]string) bool {
	val, ok := annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	if !ok {
		if val, ok = annotations[corev1.AnnotationTopologyMode]; !ok {
			return false
		}
	}
	return val == "Auto" || val == "auto"
}

// validTrafficDistribution lists the spec.trafficDistribution values the
// controller acts on (PreferSameTrafficDistribution is GA and locked on in
// 1.35+).
func validTrafficDistribution(td *string) bool {
	if td == nil {
		return false
	}
	switch *td {
	case corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone,
		corev1.ServiceTrafficDistributionPreferSameNode:
		return true
	}
	return false
}

// applyHints is the hint branch of upstream reconcileByAddressType: the
// topology annotation, when enabled, wins over spec.trafficDistribution;
// without either, hints are stripped.
func (pl *planner) applyHints(ss *sliceSet, addressType discovery.AddressType) {
	svc := pl.svc
	auto := hintsEnabled(svc.Annotations)
	useTD := validTrafficDistribution(svc.Spec.TrafficDistribution) && !auto
	switch {
	case auto:
		pl.autoHints(ss, addressType)
	case useTD:
		reconcileTrafficHints(ss, *svc.Spec.TrafficDistribution == corev1.ServiceTrafficDistributionPreferSameNode)
	default:
		removeHints(ss)
	}
}

// hintsRewrite reports whether the hint pass will rewrite a slice left
// unchanged by packing. The topology-mode: Auto allocator depends on every
// slice at once, so it is not predicted here.
func (pl *planner) hintsRewrite(s *discovery.EndpointSlice) bool {
	svc := pl.svc
	switch {
	case hintsEnabled(svc.Annotations):
		return false
	case validTrafficDistribution(svc.Spec.TrafficDistribution):
		return trafficHintsStale(s, *svc.Spec.TrafficDistribution == corev1.ServiceTrafficDistributionPreferSameNode)
	default:
		return anyHints(s)
	}
}

func endpointReady(ep *discovery.Endpoint) bool {
	return ep.Conditions.Ready != nil && *ep.Conditions.Ready
}

// removeHints is upstream RemoveHintsFromSlices: clear hints on everything
// written, and write unchanged slices that still carry hints.
func removeHints(ss *sliceSet) {
	for _, list := range [][]*discovery.EndpointSlice{ss.create, ss.update} {
		for _, s := range list {
			for i := range s.Endpoints {
				s.Endpoints[i].Hints = nil
			}
		}
	}
	keep := ss.unchanged[:0:0]
	for _, s := range ss.unchanged {
		if !anyHints(s) {
			keep = append(keep, s)
			continue
		}
		c := s.DeepCopy()
		for i := range c.Endpoints {
			c.Endpoints[i].Hints = nil
		}
		ss.update = append(ss.update, c)
	}
	ss.unchanged = keep
}

func anyHints(s *discovery.EndpointSlice) bool {
	for i := range s.Endpoints {
		if s.Endpoints[i].Hints != nil {
			return true
		}
	}
	return false
}

// reconcileTrafficHints is upstream trafficdist.ReconcileHints for the
// PreferClose family: every ready endpoint is hinted to its own zone (and,
// for PreferSameNode, its own node). There is no capacity logic.
func reconcileTrafficHints(ss *sliceSet, nodeHints bool) {
	keep := ss.unchanged[:0:0]
	for _, s := range ss.unchanged {
		if trafficHintsStale(s, nodeHints) {
			ss.update = append(ss.update, s.DeepCopy())
		} else {
			keep = append(keep, s)
		}
	}
	ss.unchanged = keep
	for _, list := range [][]*discovery.EndpointSlice{ss.create, ss.update} {
		for _, s := range list {
			setTrafficHints(s, nodeHints)
		}
	}
}

func trafficHintsStale(s *discovery.EndpointSlice, nodeHints bool) bool {
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if !endpointReady(ep) {
			continue
		}
		h := ep.Hints
		if ep.Zone != nil {
			if h == nil || len(h.ForZones) != 1 || h.ForZones[0].Name != *ep.Zone {
				return true
			}
		} else if h != nil && len(h.ForZones) > 0 {
			return true
		}
		if ep.NodeName != nil && nodeHints {
			if h == nil || len(h.ForNodes) != 1 || h.ForNodes[0].Name != *ep.NodeName {
				return true
			}
		} else if h != nil && len(h.ForNodes) > 0 {
			return true
		}
	}
	return false
}

// setTrafficHints leaves endpoints that are not ready as they are, as
// upstream does.
func setTrafficHints(s *discovery.EndpointSlice, nodeHints bool) {
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if !endpointReady(ep) {
			continue
		}
		var zones []discovery.ForZone
		var nodes []discovery.ForNode
		if ep.Zone != nil {
			zones = []discovery.ForZone{{Name: *ep.Zone}}
		}
		if ep.NodeName != nil && nodeHints {
			nodes = []discovery.ForNode{{Name: *ep.NodeName}}
		}
		if zones == nil && nodes == nil {
			ep.Hints = nil
			continue
		}
		ep.Hints = &discovery.EndpointHints{ForZones: zones, ForNodes: nodes}
	}
}
