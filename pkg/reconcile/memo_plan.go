package reconcile

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// PodChange names a Pod whose inputs may have changed since the memo was
// made or last committed: its labels, spec or status, or its Node. Pod is
// its state now, nil when it is gone. A Pod left out must not have changed.
type PodChange struct {
	Name string
	Pod  *corev1.Pod
}

// Step is what Commit needs of a plan made by Memo.Plan.
type Step struct {
	pods []stepPod
	// stayed: endpoints of changed Pods replaced in a slice that is not
	// written (equal as far as Compute compares).
	stayed map[epKey]string
}

type stepPod struct {
	name   string
	member bool
	now    memoPod
}

// change is one changed Pod as a memo plan sees it.
type change struct {
	name string
	was  bool
	old  memoPod
	f    *podFacts // nil when the Pod is no member now
	now  memoPod
	eps  map[discovery.AddressType]discovery.Endpoint
}

// inPlace returns the Pod's new endpoint of a type when it replaces the
// live one of key k in place: same key, same port group.
func (c *change) inPlace(at discovery.AddressType, k epKey) (discovery.Endpoint, bool) {
	if c.f == nil || !c.was || c.old.portKey != c.f.portKey {
		return discovery.Endpoint{}, false
	}
	ep, ok := c.eps[at]
	if !ok || keyOf(&ep) != k {
		return discovery.Endpoint{}, false
	}
	return ep, true
}

// Plan plans the Service after the given Pods changed, as Compute would
// from the same inputs: svc and live are the Service and its slices as they
// stand, nodes holds at least the Nodes of the changed Pods. It returns
// false, and the caller plans with Compute, when the Service, the options
// or our live slices are not those the memo was made for, or when the
// change leaves the cases the memo keeps: a slice would be emptied, a Pod's
// Node is missing, a changed Pod's endpoint stays although it differs. The
// plan carries no per-Pod decisions and no warnings; the Service, its
// slices and the writes are Compute's. As Compute's, its Unchanged and Live
// slices are live's own objects (the caller's cache's), not copies: the
// caller must not modify them.
func (m *Memo) Plan(svc *corev1.Service, changes []PodChange, nodes Nodes, live []*discovery.EndpointSlice, opts Options) (*Plan, *Step, bool) {
	if svc == nil || svc.UID != m.uid || svc.ResourceVersion != m.rv || opts.ManagedBy != m.opts.ManagedBy ||
		opts.MaxEndpointsPerSlice != m.opts.MaxEndpointsPerSlice || nodes.Unreadable {
		return nil, nil, false
	}
	plan := &Plan{
		Service: ServiceDecision{Namespace: svc.Namespace, Name: svc.Name, Reason: ServicePlanned,
			Message: "endpoints are planned from the Pods the selector matches"},
		AddressTypes: slices.Clone(m.types),
	}
	own, ok := m.liveMatches(svc, live, opts, plan)
	if !ok {
		return nil, nil, false
	}
	pl := &planner{svc: svc, opts: opts, labels: newLabeler(svc, opts.ManagedBy), plan: &Plan{}}
	cs, ok := m.changed(pl, changes, nodes)
	if !ok {
		return nil, nil, false
	}
	step := &Step{stayed: map[epKey]string{}}
	oldOwner := map[epKey]int{}
	touched := map[string]bool{}
	for i := range cs {
		for _, k := range cs[i].old.keys {
			oldOwner[k] = i
			touched[m.where[k]] = true
		}
	}
	for _, at := range m.types {
		create, update, ok := m.planType(pl, own, cs, oldOwner, touched, at, step)
		if !ok {
			return nil, nil, false
		}
		stampWrites(create, update, opts.TriggerTime)
		plan.Create = append(plan.Create, create...)
		plan.Update = append(plan.Update, update...)
	}
	written := map[string]bool{}
	for _, s := range plan.Update {
		written[s.Name] = true
	}
	for name, s := range own {
		if !written[name] {
			plan.Unchanged = append(plan.Unchanged, s)
		}
	}
	sortByName(plan.Unchanged)
	plan.live = own
	for _, c := range cs {
		step.pods = append(step.pods, stepPod{name: c.name, member: c.f != nil, now: c.now})
	}
	return plan, step, true
}

// liveMatches checks that our live slices are the memo's, by name and
// resourceVersion, and returns them by name (a resourceVersion names one
// state of a slice, so they hold what the memo was made from); it collects
// the Service's foreign slices.
func (m *Memo) liveMatches(svc *corev1.Service, live []*discovery.EndpointSlice, opts Options, plan *Plan) (map[string]*discovery.EndpointSlice, bool) {
	own := make(map[string]*discovery.EndpointSlice, len(m.slices))
	for _, s := range live {
		if s == nil || s.Namespace != svc.Namespace || s.Labels[discovery.LabelServiceName] != svc.Name {
			continue
		}
		if s.Labels[discovery.LabelManagedBy] != opts.ManagedBy {
			plan.Foreign = append(plan.Foreign, s)
			continue
		}
		if s.DeletionTimestamp != nil {
			continue // Compute ignores ours being deleted too
		}
		if rv, mine := m.slices[s.Name]; !mine || rv != s.ResourceVersion || own[s.Name] != nil {
			return nil, false
		}
		own[s.Name] = s
	}
	sortByName(plan.Foreign)
	return own, len(own) == len(m.slices)
}

// changed derives the facts of each changed Pod, sorted by name as Compute
// orders Pods. A port group that appears is planned like any other (its
// slices are created); one that empties has emptied its slices, which
// planType leaves to Compute.
func (m *Memo) changed(pl *planner, changes []PodChange, nodes Nodes) ([]change, bool) {
	sorted := slices.Clone(changes)
	slices.SortFunc(sorted, func(a, b PodChange) int { return strings.Compare(a.Name, b.Name) })
	var cs []change
	for i, pc := range sorted {
		if i > 0 && sorted[i-1].Name == pc.Name {
			return nil, false
		}
		c := change{name: pc.Name}
		c.old, c.was = m.pods[pc.Name]
		if p := pc.Pod; p != nil {
			if p.Name != pc.Name {
				return nil, false
			}
			if fs := pl.podFacts([]*corev1.Pod{p}, nodes); len(fs) == 1 {
				c.f = fs[0]
			}
		}
		if c.f != nil {
			if c.f.nodeMissing || c.f.zoneFromLive {
				return nil, false
			}
			c.now.portKey = c.f.portKey
			c.eps = map[discovery.AddressType]discovery.Endpoint{}
			for _, at := range m.types {
				if ep, ok := buildEndpoint(pl.svc, c.f, at, nil); ok {
					c.eps[at] = ep
					c.now.keys = append(c.now.keys, keyOf(&ep))
				}
			}
		}
		if c.was || c.f != nil {
			cs = append(cs, c)
		}
	}
	return cs, true
}

// typeGroup is the part of one port group of one address type that a
// change touches: the memo's slices holding a changed Pod's old endpoint,
// and the changed Pods' endpoints that are not replaced in place.
type typeGroup struct {
	touched []*discovery.EndpointSlice
	left    []discovery.Endpoint
	ports   []discovery.EndpointPort
}

// planType is packGroup for the groups of one address type that the change
// touches, knowing that every other slice stays as it is.
func (m *Memo) planType(pl *planner, own map[string]*discovery.EndpointSlice, cs []change, oldOwner map[epKey]int, touched map[string]bool, at discovery.AddressType, step *Step) (create, update []*discovery.EndpointSlice, ok bool) {
	groups := typeGroups(own, cs, oldOwner, touched, at)
	for _, pk := range slices.Sorted(maps.Keys(groups)) {
		w := groups[pk]
		sortByName(w.touched)
		// 1. The touched slices: changed Pods' endpoints replaced or dropped.
		upd, ok := m.replace(pl, cs, oldOwner, w.touched, at, step)
		if !ok {
			return nil, nil, false
		}
		// 2.-3. The rest, placed as packGroup places them.
		left := w.left
		upd, cr := pl.place(len(left), func() discovery.Endpoint {
			ep := left[0]
			left = left[1:]
			return ep
		}, upd, func() []*discovery.EndpointSlice { return unchangedOf(own, at, pk, upd) }, w.ports, at)
		create = append(create, cr...)
		update = append(update, upd...)
	}
	return create, update, true
}

// typeGroups sorts what a change touches of one address type by port
// group; own are our live slices by name.
func typeGroups(own map[string]*discovery.EndpointSlice, cs []change, oldOwner map[epKey]int, touched map[string]bool, at discovery.AddressType) map[string]*typeGroup {
	groups := map[string]*typeGroup{}
	get := func(k string) *typeGroup {
		if groups[k] == nil {
			groups[k] = &typeGroup{}
		}
		return groups[k]
	}
	for name := range touched {
		if s := own[name]; s.AddressType == at {
			w := get(portKey(s.Ports))
			w.touched = append(w.touched, s)
		}
	}
	for i := range cs {
		c := &cs[i]
		ep, has := c.eps[at]
		if c.f == nil || !has {
			continue
		}
		k := keyOf(&ep)
		if _, was := oldOwner[k]; was {
			if _, same := c.inPlace(at, k); same {
				continue // replaced in its slice by step 1
			}
		}
		w := get(c.f.portKey)
		w.left = append(w.left, ep)
		w.ports = c.f.ports
	}
	return groups
}

// replace is packGroup's step 1 for the touched slices of one group: each
// changed Pod's old endpoint is replaced in place by its new one, or
// dropped. A slice left as it was is not written (its replaced endpoints
// are recorded in step). False when the memo cannot follow: an endpoint
// kept although it differs, or a slice emptied (Compute deletes it, and may
// recycle it).
func (m *Memo) replace(pl *planner, cs []change, oldOwner map[epKey]int, touched []*discovery.EndpointSlice, at discovery.AddressType, step *Step) ([]*discovery.EndpointSlice, bool) {
	var upd []*discovery.EndpointSlice
	for _, live := range touched {
		kept := make([]discovery.Endpoint, 0, len(live.Endpoints))
		changed := false
		var stays []epKey
		for i := range live.Endpoints {
			e := &live.Endpoints[i]
			k := keyOf(e)
			ci, mine := oldOwner[k]
			if !mine {
				kept = append(kept, *e.DeepCopy())
				continue
			}
			nep, ok := cs[ci].inPlace(at, k)
			if !ok {
				continue
			}
			switch {
			case !endpointsEqualBeyondKey(&nep, e):
				changed = true
			case !endpointsIdentical(&nep, e):
				return nil, false // kept as is, so the memo would no longer hold
			}
			kept = append(kept, nep)
			stays = append(stays, k)
		}
		if !changed && len(kept) == len(live.Endpoints) {
			for _, k := range stays {
				step.stayed[k] = live.Name
			}
			continue
		}
		if len(kept) == 0 {
			return nil, false
		}
		s := live.DeepCopy()
		s.Endpoints = kept
		s.Labels = pl.labels.labels()
		upd = append(upd, s)
	}
	return upd, true
}

// unchangedOf lists our live slices (own) of a type and port group that
// are not being updated, by name.
func unchangedOf(own map[string]*discovery.EndpointSlice, at discovery.AddressType, pk string, upd []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	skip := map[string]bool{}
	for _, s := range upd {
		skip[s.Name] = true
	}
	var out []*discovery.EndpointSlice
	for name, s := range own {
		if s.AddressType == at && !skip[name] && portKey(s.Ports) == pk {
			out = append(out, s)
		}
	}
	sortByName(out)
	return out
}
