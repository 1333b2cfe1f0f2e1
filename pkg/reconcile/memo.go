package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Memo is what the planner knows of one Service whose slices are in sync
// with its Pods: which Pods are members (kept past the selector and the
// exclusions), under which port group, with which endpoints, and which of
// our live slices holds each endpoint. With it, a change to a few Pods is
// planned from those Pods alone (Memo.Plan), in time that does not grow
// with the Service, and with exactly Compute's result.
//
// The memo is the caller's to keep; Plan never modifies it and Commit
// records a plan once its writes are done. It holds only in the common case:
// a Service with a selector, not being deleted, without topology hints or
// a traffic distribution (their hints depend on every slice at once), with
// readable Nodes, and whose live slices are exactly what the planner wants.
// Everything else is planned by Compute.
type Memo struct {
	uid   types.UID
	rv    string
	opts  Options
	types []discovery.AddressType
	// pods are the members by name.
	pods map[string]memoPod
	// slices are the resourceVersions of our live slices by name; where
	// names the slice holding each endpoint. The slices themselves are the
	// cache's: Plan takes them from live once their versions match, so a
	// memo does not hold a second copy of every slice it stands for.
	slices map[string]string
	where  map[epKey]string
}

// memoPod is one member: its port group and the keys of its endpoints (of
// any address type; keys hold the addresses, so they never collide across
// types).
type memoPod struct {
	portKey string
	keys    []epKey
}

// memoable says whether a Service's plan can be kept incrementally.
func memoable(svc *corev1.Service, nodes Nodes) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName && len(svc.Spec.Selector) > 0 &&
		svc.DeletionTimestamp == nil && !hintsEnabled(svc.Annotations) &&
		!validTrafficDistribution(svc.Spec.TrafficDistribution) && !nodes.Unreadable
}

// NewMemo builds the memo of a Service from the inputs of a plan and the
// slices that plan left (its unchanged slices and the written ones, as the
// API server returned them). It checks, endpoint by endpoint, that Compute
// would write nothing more for these inputs, and returns false when it would
// or when the Service is not one a memo keeps: such a Service is planned in
// full.
func NewMemo(in Input, opts Options, final []*discovery.EndpointSlice) (*Memo, bool) {
	svc := in.Service
	if svc == nil || opts.Validate() != nil || !memoable(svc, in.Nodes) {
		return nil, false
	}
	pl := &planner{svc: svc, opts: opts, labels: newLabeler(svc, opts.ManagedBy), plan: &Plan{}}
	m := &Memo{
		uid: svc.UID, rv: svc.ResourceVersion, opts: opts, types: addressTypes(svc),
		pods:   map[string]memoPod{},
		slices: make(map[string]string, len(final)),
	}
	type wanted struct {
		ep      discovery.Endpoint
		portKey string
		at      discovery.AddressType
	}
	facts := pl.podFacts(in.Pods, in.Nodes)
	desired := make(map[epKey]wanted, len(facts)*len(m.types))
	for _, f := range facts {
		mp := memoPod{portKey: f.portKey}
		for _, at := range m.types {
			if f.nodeMissing {
				break
			}
			if ep, ok := buildEndpoint(svc, f, at, nil); ok {
				k := keyOf(&ep)
				desired[k] = wanted{ep: ep, portKey: f.portKey, at: at}
				mp.keys = append(mp.keys, k)
			}
		}
		m.pods[f.pod.Name] = mp
	}
	m.where = make(map[epKey]string, len(desired))
	perType := map[discovery.AddressType]int{}
	for _, s := range final {
		if !m.fits(pl, s) {
			return nil, false
		}
		pk := portKey(s.Ports)
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			k := keyOf(e)
			d, ok := desired[k]
			if _, twice := m.where[k]; twice || !ok || d.portKey != pk || d.at != s.AddressType || !endpointsIdentical(e, &d.ep) {
				return nil, false
			}
			m.where[k] = s.Name
		}
		m.slices[s.Name] = s.ResourceVersion
		perType[s.AddressType]++
	}
	if len(m.where) != len(desired) {
		return nil, false // a desired endpoint is in no slice
	}
	for _, at := range m.types {
		if perType[at] == 0 {
			return nil, false // Compute would create a placeholder
		}
	}
	return m, true
}

// fits says whether a slice left by a plan is one Compute leaves alone:
// ours, of this Service and owned by it, of a served type, not empty, not
// over the size, and with the labels it wants. (Its port group has members:
// NewMemo finds each of its endpoints desired in that group.)
func (m *Memo) fits(pl *planner, s *discovery.EndpointSlice) bool {
	served := false
	for _, at := range m.types {
		served = served || s.AddressType == at
	}
	return s != nil && s.Name != "" && served && s.Namespace == pl.svc.Namespace &&
		s.Labels[discovery.LabelServiceName] == pl.svc.Name && s.Labels[discovery.LabelManagedBy] == pl.opts.ManagedBy &&
		s.DeletionTimestamp == nil && ownedBy(s, pl.svc) && !pl.labels.changed(s) &&
		len(s.Endpoints) > 0 && len(s.Endpoints) <= pl.opts.MaxEndpointsPerSlice &&
		s.ResourceVersion != "" && !m.has(s.Name)
}

func (m *Memo) has(name string) bool { _, ok := m.slices[name]; return ok }

// endpointsIdentical compares every field of two endpoints: a memo may
// stand for a live endpoint only when Compute would write it unchanged.
// TestEndpointFieldsCompared fails when discovery.Endpoint grows a field.
func endpointsIdentical(a, b *discovery.Endpoint) bool {
	if len(a.Addresses) != len(b.Addresses) || len(a.DeprecatedTopology) != 0 || len(b.DeprecatedTopology) != 0 ||
		a.Hints != nil || b.Hints != nil || !strPtrEqual(a.Hostname, b.Hostname) {
		return false
	}
	for i := range a.Addresses {
		if a.Addresses[i] != b.Addresses[i] {
			return false
		}
	}
	if a.TargetRef == nil || b.TargetRef == nil {
		if a.TargetRef != b.TargetRef {
			return false
		}
	} else if *a.TargetRef != *b.TargetRef {
		return false
	}
	return strPtrEqual(a.NodeName, b.NodeName) && strPtrEqual(a.Zone, b.Zone) &&
		boolPtrEqual(a.Conditions.Ready, b.Conditions.Ready) &&
		boolPtrEqual(a.Conditions.Serving, b.Conditions.Serving) &&
		boolPtrEqual(a.Conditions.Terminating, b.Conditions.Terminating)
}

// Size is the number of members the memo holds.
func (m *Memo) Size() int { return len(m.pods) }

// Commit records a plan of Memo.Plan once all its writes are done: written
// are the created and updated slices as the API server returned them. After
// a failed or partial write the memo must be dropped instead.
func (m *Memo) Commit(step *Step, written []*discovery.EndpointSlice) {
	for _, c := range step.pods {
		if old, ok := m.pods[c.name]; ok {
			for _, k := range old.keys {
				delete(m.where, k)
			}
			delete(m.pods, c.name)
		}
		if c.member {
			m.pods[c.name] = c.now
		}
	}
	for k, name := range step.stayed {
		m.where[k] = name
	}
	for _, s := range written {
		m.slices[s.Name] = s.ResourceVersion
		for i := range s.Endpoints {
			m.where[keyOf(&s.Endpoints[i])] = s.Name
		}
	}
}
