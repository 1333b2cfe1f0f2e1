package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// planAddressType is upstream reconcileByAddressType and finalize for one
// address type; existing are our live slices of that type, sorted by name.
func (pl *planner) planAddressType(existing []*discovery.EndpointSlice, facts []*podFacts, at discovery.AddressType, liveZone func(epKey) *string) {
	svc := pl.svc
	var toDelete []*discovery.EndpointSlice

	// 1. Live slices by port group; a slice owned by another Service UID (an
	//    old Service of the same name) is deleted, never adopted.
	existingByKey := map[string][]*discovery.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) {
			k := portKey(s.Ports)
			existingByKey[k] = append(existingByKey[k], s)
		} else {
			toDelete = append(toDelete, s)
		}
	}

	// 2. Desired endpoints by port group. As upstream, a Pod's group exists
	//    even when the Pod is then skipped (missing Node, no address of this
	//    type), so that group's stale slices are emptied like any other.
	groups := map[string]*portGroup{}
	var order []string
	for _, f := range facts {
		g := groups[f.portKey]
		if g == nil {
			// Most Services have one port group: size for all Pods.
			g = newPortGroup(f.portKey, f.ports, len(facts))
			groups[f.portKey] = g
			order = append(order, f.portKey)
		}
		if f.nodeMissing {
			continue
		}
		if ep, ok := buildEndpoint(svc, f, at, liveZone); ok {
			g.insert(&desiredEP{key: keyOf(&ep), ep: ep, pod: f.decision})
		}
	}
	sort.Strings(order)

	// 3. Pack each group; groups no longer desired lose their slices.
	var ss sliceSet
	for _, k := range order {
		res := pl.packGroup(existingByKey[k], groups[k], at)
		ss.create = append(ss.create, res.create...)
		ss.update = append(ss.update, res.update...)
		toDelete = append(toDelete, res.delete...)
	}
	for _, k := range slices.Sorted(maps.Keys(existingByKey)) {
		if groups[k] == nil {
			toDelete = append(toDelete, existingByKey[k]...)
		}
	}

	// 4. A served address type always has at least one slice: keep an
	//    identical placeholder rather than delete and recreate it.
	if len(existing) == len(toDelete) && len(ss.create) == 0 {
		ph := newSlice(svc, pl.labels, nil, at)
		if len(toDelete) == 1 && isSamePlaceholder(toDelete[0], ph) {
			toDelete = nil
		} else {
			ss.create = append(ss.create, ph)
		}
	}

	// 5. Hints, on the slices as they will be written.
	ss.unchanged = unchangedSlices(existing, ss.update, toDelete)
	pl.applyHints(&ss, at)

	// 6. Recycle: a create becomes an update of a slice about to be deleted,
	//    saving a write and a name. The update is conditional on the
	//    resourceVersion of the slice it replaces.
	toDelete = recycle(svc, &ss, toDelete)

	// 7. No creates while the Service is being deleted: the garbage
	//    collector would race them.
	if svc.DeletionTimestamp != nil {
		pl.plan.SuppressedCreates += len(ss.create)
		ss.create = nil
	}
	stampWrites(ss.create, ss.update, pl.opts.TriggerTime)
	pl.plan.Create = append(pl.plan.Create, ss.create...)
	pl.plan.Update = append(pl.plan.Update, ss.update...)
	pl.plan.Delete = append(pl.plan.Delete, toDelete...)
	pl.plan.Unchanged = append(pl.plan.Unchanged, ss.unchanged...)
	pl.recordEndpoints(groups, &ss, at)
}

// recycle turns creates into updates of slices about to be deleted (of
// the same address type and owned by svc), in name order, and returns the
// deletions left.
func recycle(svc *corev1.Service, ss *sliceSet, toDelete []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	sortByName(toDelete)
	for i := 0; i < len(toDelete) && len(ss.create) > 0; {
		del, c := toDelete[i], ss.create[len(ss.create)-1]
		if del.AddressType != c.AddressType || !ownedBy(del, svc) {
			i++
			continue
		}
		c.Name, c.ResourceVersion = del.Name, del.ResourceVersion
		ss.create = ss.create[:len(ss.create)-1]
		ss.update = append(ss.update, c)
		toDelete = append(toDelete[:i:i], toDelete[i+1:]...)
	}
	return toDelete
}

// stampWrites stamps the trigger time on an address type's writes and
// sorts its updates by name, as both planners hand them on.
func stampWrites(create, update []*discovery.EndpointSlice, t time.Time) {
	for _, s := range create {
		stampTriggerTime(s, t)
	}
	for _, s := range update {
		stampTriggerTime(s, t)
	}
	sortByName(update)
}

// unchangedSlices are the live slices neither updated nor deleted.
func unchangedSlices(existing, update, del []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	changed := map[string]bool{}
	for _, s := range update {
		changed[s.Name] = true
	}
	for _, s := range del {
		changed[s.Name] = true
	}
	var out []*discovery.EndpointSlice
	for _, s := range existing {
		if !changed[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// recordEndpoints copies each endpoint, as it will stand after the plan
// (hints included), into its Pod's decision.
func (pl *planner) recordEndpoints(groups map[string]*portGroup, ss *sliceSet, at discovery.AddressType) {
	for _, list := range [][]*discovery.EndpointSlice{ss.create, ss.update, ss.unchanged} {
		for _, s := range list {
			g := groups[portKey(s.Ports)]
			if g == nil {
				continue
			}
			for i := range s.Endpoints {
				ep := &s.Endpoints[i]
				if d, ok := g.index[keyOf(ep)]; ok {
					pd := &pl.plan.Pods[d.pod]
					pd.Endpoints = append(pd.Endpoints, PlannedEndpoint{AddressType: at, Endpoint: *ep, Ports: s.Ports})
				}
			}
		}
	}
}

// finish settles each Pod's inclusion once every address type is planned,
// and sorts the plan's lists.
func (pl *planner) finish(facts []*podFacts) {
	for _, f := range facts {
		d := &pl.plan.Pods[f.decision]
		if f.nodeMissing {
			continue
		}
		var missing []string
		for _, at := range pl.plan.AddressTypes {
			if (at == discovery.AddressTypeIPv4 && len(f.v4) == 0) || (at == discovery.AddressTypeIPv6 && len(f.v6) == 0) {
				missing = append(missing, string(at))
			}
		}
		d.Included = len(d.Endpoints) > 0
		switch {
		case !d.Included && len(missing) > 0:
			d.Reason, d.Message = AddressFamilyMismatch, fmt.Sprintf("pod has no %s address; the Service serves %s",
				strings.Join(missing, " or "), joinTypes(pl.plan.AddressTypes))
		case !d.Included && pl.plan.SuppressedCreates > 0:
			d.Reason, d.Message = ServiceTerminating, "not published: the Service is being deleted, so no new slices are created"
		case len(missing) > 0:
			d.Notes = append(d.Notes, Note{Reason: AddressFamilyMismatch, Message: "pod has no " + strings.Join(missing, " or ") + " address"})
		}
		sort.SliceStable(d.Endpoints, func(i, j int) bool { return d.Endpoints[i].AddressType < d.Endpoints[j].AddressType })
	}
	sortByName(pl.plan.Delete)
	sortByName(pl.plan.Unchanged)
}

func joinTypes(types []discovery.AddressType) string {
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = string(t)
	}
	return strings.Join(s, " and ")
}
