package reconcile

import (
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The CPU-weighted allocator behind the topology-mode: Auto annotation
// (KEP-2433), after upstream's topologycache package. Upstream breaks ties by
// map order; here ties go to the zone that sorts first.

// overloadThreshold: a zone may get up to 20% fewer endpoints than its CPU
// share before the Service counts as overloaded.
const overloadThreshold = 0.2

// Upstream's event messages, reused so users can search for them.
const (
	msgNoZoneSpecified          = "One or more endpoints do not have a zone specified"
	msgNoAllocatedHintsForZones = "No hints allocated for zones"
	msgInsufficientNodeInfo     = "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes"
	msgNodesNotListed           = "Insufficient Node information: the Nodes could not all be read"
	msgNodesReadyInOneZoneOnly  = "Nodes only ready in one zone"
	msgInsufficientEndpoints    = "Insufficient number of endpoints"
	msgMinAllocationExceeds     = "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold"
)

type allocation struct {
	minimum, maximum int
	desired          float64
}

// zoneCPURatios is upstream TopologyCache.SetNodes: each zone's share of the
// allocatable CPU of ready, non-control-plane Nodes. It returns nil and a
// reason when hints cannot be computed.
func zoneCPURatios(nodes Nodes) (map[string]float64, string) {
	if !nodes.Complete {
		return nil, msgNodesNotListed
	}
	cpuByZone := map[string]*resource.Quantity{}
	total := resource.Quantity{}
	for _, node := range nodes.ByName {
		if hasExcludedLabels(node.Labels) || !isNodeReady(node) {
			continue
		}
		cpu := node.Status.Allocatable.Cpu()
		zone := node.Labels[corev1.LabelTopologyZone]
		if zone == "" || cpu.IsZero() {
			return nil, msgInsufficientNodeInfo
		}
		total.Add(*cpu)
		if q, ok := cpuByZone[zone]; ok {
			q.Add(*cpu)
		} else {
			c := cpu.DeepCopy()
			cpuByZone[zone] = &c
		}
	}
	if total.IsZero() {
		return nil, msgInsufficientNodeInfo
	}
	if len(cpuByZone) < 2 {
		return nil, msgNodesReadyInOneZoneOnly
	}
	ratios := make(map[string]float64, len(cpuByZone))
	for zone, cpu := range cpuByZone {
		ratios[zone] = float64(cpu.MilliValue()) / float64(total.MilliValue())
	}
	return ratios, ""
}

func hasExcludedLabels(labels map[string]string) bool {
	_, cp := labels["node-role.kubernetes.io/control-plane"]
	_, master := labels["node-role.kubernetes.io/master"]
	return cp || master
}

func isNodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// allocations is upstream getAllocations: per zone, the endpoints its CPU
// share asks for, and the minimum and maximum it may get.
func allocations(ratios map[string]float64, n int) (map[string]allocation, string) {
	if len(ratios) > n {
		return nil, fmt.Sprintf("%s (%d endpoints, %d zones)", msgInsufficientEndpoints, n, len(ratios))
	}
	out := make(map[string]allocation, len(ratios))
	minTotal := 0
	for zone, ratio := range ratios {
		desired := ratio * float64(n)
		minimum := int(math.Ceil(desired * (1 / (1 + overloadThreshold))))
		out[zone] = allocation{minimum: minimum, desired: math.Max(desired, float64(minimum))}
		minTotal += minimum
	}
	if minTotal > n {
		return nil, fmt.Sprintf("%s (%d endpoints, %d zones)", msgMinAllocationExceeds, n, len(ratios))
	}
	for zone, a := range out {
		a.maximum = a.minimum + n - minTotal
		out[zone] = a
	}
	return out, ""
}

// autoHints is upstream TopologyCache.AddHints.
func (pl *planner) autoHints(ss *sliceSet, addressType discovery.AddressType) {
	disable := func(msg string) {
		pl.warn(HintsDisabled, "service/"+pl.svc.Name, fmt.Sprintf("%s, addressType: %s", msg, addressType))
		removeHints(ss)
	}
	if pl.zoneRatios == nil {
		disable(pl.zoneRatiosMsg)
		return
	}
	ready := 0
	for _, list := range [][]*discovery.EndpointSlice{ss.create, ss.update, ss.unchanged} {
		for _, s := range list {
			for i := range s.Endpoints {
				if endpointReady(&s.Endpoints[i]) {
					ready++
				}
			}
		}
	}
	allocs, msg := allocations(pl.zoneRatios, ready)
	if msg != "" {
		disable(msg)
		return
	}

	// Unchanged slices keep their hints while those stay within bounds.
	allocated := map[string]int{}
	keep := ss.unchanged[:0:0]
	for _, s := range ss.unchanged {
		byZone := hintsByZone(s, allocated, allocs)
		if byZone == nil {
			ss.update = append(ss.update, s.DeepCopy())
			continue
		}
		keep = append(keep, s)
		for z, n := range byZone {
			allocated[z] += n
		}
	}
	ss.unchanged = keep

	// Every ready endpoint written starts hinted to its own zone.
	writable := append(append([]*discovery.EndpointSlice(nil), ss.create...), ss.update...)
	for _, s := range writable {
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			if !endpointReady(ep) {
				continue
			}
			if ep.Zone == nil || *ep.Zone == "" {
				disable(msgNoZoneSpecified)
				return
			}
			allocated[*ep.Zone]++
			ep.Hints = &discovery.EndpointHints{ForZones: []discovery.ForZone{{Name: *ep.Zone}}}
		}
	}

	// Then whole endpoints move from zones above their share to zones below.
	giving, receiving := givingAndReceivingZones(allocs, allocated)
	for zone, diff := range redistributeHints(writable, giving, receiving) {
		allocated[zone] += diff
	}
	if len(allocated) == 0 {
		disable(msgNoAllocatedHintsForZones)
	}
}

// hintsByZone is upstream getHintsByZone: the hints an unchanged slice
// holds per zone, or nil when they must be recomputed.
func hintsByZone(s *discovery.EndpointSlice, allocated map[string]int, allocs map[string]allocation) map[string]int {
	out := map[string]int{}
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if !endpointReady(ep) {
			continue
		}
		if ep.Hints == nil || len(ep.Hints.ForZones) == 0 {
			return nil
		}
		for _, fz := range ep.Hints.ForZones {
			if _, ok := allocs[fz.Name]; !ok {
				return nil
			}
			out[fz.Name]++
		}
	}
	for zone, n := range out {
		if n+allocated[zone] > allocs[zone].maximum {
			return nil
		}
	}
	return out
}

// givingAndReceivingZones is upstream getGivingAndReceivingZones.
func givingAndReceivingZones(allocs map[string]allocation, allocated map[string]int) (map[string]int, map[string]int) {
	givingWant, receivingWant := map[string]float64{}, map[string]float64{}
	for zone, a := range allocs {
		have := float64(allocated[zone])
		if have > a.desired {
			givingWant[zone] = have - a.desired
		} else if have < a.desired {
			receivingWant[zone] = a.desired - have
		}
	}
	giving, receiving := map[string]int{}, map[string]int{}
	for {
		gz, toGive := most(givingWant)
		rz, toReceive := most(receivingWant)
		if gz == "" || rz == "" || (toGive < 1.0 && toReceive < 1.0) || toGive < 0.5 || toReceive < 0.5 {
			break
		}
		giving[gz]++
		givingWant[gz]--
		receiving[rz]++
		receivingWant[rz]--
	}
	return giving, receiving
}

// most returns the zone with the largest positive value; ties go to the
// zone that sorts first.
func most(zones map[string]float64) (string, float64) {
	zone, num := "", 0.0
	for _, z := range slices.Sorted(maps.Keys(zones)) {
		if zones[z] > num {
			zone, num = z, zones[z]
		}
	}
	return zone, num
}

// redistributeHints is upstream redistributeHints: re-hint endpoints of
// giving zones to receiving zones, in slice order.
func redistributeHints(published []*discovery.EndpointSlice, giving, receiving map[string]int) map[string]int {
	moved := map[string]int{}
	for _, s := range published {
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			if !endpointReady(ep) {
				continue
			}
			if len(giving) == 0 || len(receiving) == 0 {
				return moved
			}
			if ep.Zone == nil || *ep.Zone == "" {
				continue
			}
			from := *ep.Zone
			if giving[from] <= 0 {
				continue
			}
			for _, to := range slices.Sorted(maps.Keys(receiving)) {
				if receiving[to] <= 0 {
					continue
				}
				ep.Hints = &discovery.EndpointHints{ForZones: []discovery.ForZone{{Name: to}}}
				decrementOrDelete(giving, from)
				decrementOrDelete(receiving, to)
				moved[to]++
				moved[from]--
				break
			}
		}
	}
	return moved
}

func decrementOrDelete(m map[string]int, k string) {
	if m[k] <= 1 {
		delete(m, k)
		return
	}
	m[k]--
}
