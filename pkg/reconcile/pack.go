package reconcile

import (
	"sort"

	discovery "k8s.io/api/discovery/v1"
)

// desiredEP is one endpoint the plan wants, and the Pod decision it came from.
type desiredEP struct {
	key   epKey
	ep    discovery.Endpoint
	pod   int
	taken bool
}

// portGroup is the desired state of one set of ports within one address
// type: upstream's desiredEndpointsByPortMap entry and its endpointMeta.
type portGroup struct {
	key   string
	ports []discovery.EndpointPort
	// eps keeps insertion order (Pods sorted by namespace and name), which is
	// the order endpoints are placed in: upstream pops them in map order.
	eps   []*desiredEP
	index map[epKey]*desiredEP
	left  int
	next  int
}

func newPortGroup(key string, ports []discovery.EndpointPort, sizeHint int) *portGroup {
	return &portGroup{key: key, ports: ports, index: make(map[epKey]*desiredEP, sizeHint)}
}

// insert adds an endpoint; a second endpoint with the same key replaces the
// first, as in upstream's EndpointSet.
func (g *portGroup) insert(d *desiredEP) {
	if old, ok := g.index[d.key]; ok {
		*old = *d
		return
	}
	g.index[d.key] = d
	g.eps = append(g.eps, d)
	g.left++
}

// take removes and returns the desired version of a live endpoint, if wanted.
func (g *portGroup) take(k epKey) *desiredEP {
	d, ok := g.index[k]
	if !ok || d.taken {
		return nil
	}
	d.taken = true
	g.left--
	return d
}

// pop removes and returns the next endpoint not yet placed.
func (g *portGroup) pop() *desiredEP {
	for ; g.next < len(g.eps); g.next++ {
		if d := g.eps[g.next]; !d.taken {
			d.taken = true
			g.left--
			g.next++
			return d
		}
	}
	return nil
}

// groupResult is what packing one port group decides.
type groupResult struct {
	create, update, delete []*discovery.EndpointSlice
}

// packGroup is upstream reconcileByPortMapping for one port group; existing
// are the live slices of that group, sorted by name. It never moves an
// endpoint between slices only to compact them: every write it plans is
// needed by a change, and the remainder goes into one slice if it fits.
func (pl *planner) packGroup(existing []*discovery.EndpointSlice, g *portGroup, addressType discovery.AddressType) groupResult {
	var res groupResult
	var unchanged []*discovery.EndpointSlice

	// 1. Keep the live endpoints that are still desired, in their order and
	//    in their desired version; drop the others. A slice whose endpoints
	//    changed is updated (or deleted when emptied); one whose labels
	//    drifted is updated; the rest are candidates for step 3.
	for _, live := range existing {
		kept := make([]discovery.Endpoint, 0, len(live.Endpoints))
		changed := false
		for i := range live.Endpoints {
			old := &live.Endpoints[i]
			if d := g.take(keyOf(old)); d != nil {
				kept = append(kept, d.ep)
				if !endpointsEqualBeyondKey(&d.ep, old) {
					changed = true
				}
			}
		}
		switch {
		case changed || len(kept) != len(live.Endpoints):
			if len(kept) == 0 {
				res.delete = append(res.delete, live)
				continue
			}
			s := live.DeepCopy()
			s.Endpoints = kept
			s.Labels = pl.labels.labels()
			res.update = append(res.update, s)
		case pl.labels.changed(live):
			s := live.DeepCopy()
			s.Labels = pl.labels.labels()
			res.update = append(res.update, s)
		default:
			unchanged = append(unchanged, live)
		}
	}

	// 2.-3. Place the endpoints not yet placed (place).
	res.update, res.create = pl.place(g.left, func() discovery.Endpoint { return g.pop().ep },
		res.update, func() []*discovery.EndpointSlice { return unchanged }, g.ports, addressType)
	return res
}

// place is steps 2 and 3 of packing one port group, shared by packGroup and
// the memo's planType (memo_plan.go) so that both place endpoints alike: n
// endpoints not yet placed, taken in order by next, go
//
//  2. into the slices already being updated, fullest first, so new
//     endpoints ride on writes that happen anyway;
//  3. then, while less than a full slice is left, into the unchanged slice
//     that it fills closest to full (all of it or none); otherwise into new
//     slices.
//
// unchanged lists the group's unchanged slices, by name; it is asked once,
// and only when step 3 has endpoints to place. It returns update with the
// unchanged slices filled appended, and the slices to create.
func (pl *planner) place(n int, next func() discovery.Endpoint, update []*discovery.EndpointSlice, unchanged func() []*discovery.EndpointSlice,
	ports []discovery.EndpointPort, at discovery.AddressType) (updated, created []*discovery.EndpointSlice) {
	max := pl.opts.MaxEndpointsPerSlice
	if n > 0 && len(update) > 0 {
		byLen := append([]*discovery.EndpointSlice(nil), update...)
		sort.SliceStable(byLen, func(i, j int) bool { return len(byLen[i].Endpoints) > len(byLen[j].Endpoints) })
		for _, s := range byLen {
			for n > 0 && len(s.Endpoints) < max {
				s.Endpoints = append(s.Endpoints, next())
				n--
			}
		}
	}
	var spare []*discovery.EndpointSlice
	if n > 0 {
		spare = unchanged()
	}
	for n > 0 {
		var fill *discovery.EndpointSlice
		if n < max && len(spare) > 0 {
			if i := sliceToFill(spare, n, max, pl.hintsRewrite); i >= 0 {
				fill = spare[i].DeepCopy()
				spare = append(spare[:i:i], spare[i+1:]...)
			}
		}
		if fill == nil {
			fill = newSlice(pl.svc, pl.labels, ports, at)
		}
		for n > 0 && len(fill.Endpoints) < max {
			fill.Endpoints = append(fill.Endpoints, next())
			n--
		}
		if fill.Name != "" {
			update = append(update, fill)
		} else {
			created = append(created, fill)
		}
	}
	return update, created
}

// sliceToFill is upstream getSliceToFill: the slice left closest to full
// after taking n endpoints, or -1. Upstream breaks ties at random; here a tie
// goes to a slice the hint pass would rewrite anyway (so the fill costs no
// extra write), then to the first in name order.
func sliceToFill(slices []*discovery.EndpointSlice, n, max int, rewritten func(*discovery.EndpointSlice) bool) int {
	best, bestDiff, bestRewritten := -1, max, false
	for i, s := range slices {
		diff := max - (n + len(s.Endpoints))
		if diff < 0 || diff > bestDiff || (diff == bestDiff && (best < 0 || bestRewritten)) {
			continue
		}
		r := rewritten(s)
		if diff < bestDiff || r {
			best, bestDiff, bestRewritten = i, diff, r
		}
	}
	return best
}
