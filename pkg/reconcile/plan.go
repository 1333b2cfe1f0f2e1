package reconcile

import (
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// planner carries the state of one Compute call.
type planner struct {
	svc           *corev1.Service
	opts          Options
	labels        labeler
	plan          *Plan
	zoneRatios    map[string]float64
	zoneRatiosMsg string
}

// Validate checks options the way kube-controller-manager checks its flags.
func (o Options) Validate() error {
	if o.ManagedBy == "" {
		return errors.New("managed-by value must not be empty")
	}
	if o.MaxEndpointsPerSlice < 1 || o.MaxEndpointsPerSlice > MaxEndpointsPerSliceLimit {
		return fmt.Errorf("max endpoints per slice must be between 1 and %d, got %d", MaxEndpointsPerSliceLimit, o.MaxEndpointsPerSlice)
	}
	return nil
}

// Compute plans the EndpointSlices of one Service. It is deterministic and
// never modifies its input. Created and updated slices are new objects;
// Delete, Unchanged and Foreign hold the live objects as given, which the
// caller must treat as read-only.
func Compute(in Input, opts Options) (*Plan, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	svc := in.Service
	if svc == nil {
		return nil, errors.New("no Service given")
	}
	pl := &planner{svc: svc, opts: opts, labels: newLabeler(svc, opts.ManagedBy), plan: &Plan{
		Service: ServiceDecision{Namespace: svc.Namespace, Name: svc.Name, Reason: ServicePlanned,
			Message: "endpoints are planned from the Pods the selector matches"},
	}}
	ours, byType := pl.partitionSlices(in.Slices)

	// 1. Services the controller leaves alone: their slices, if any, stay.
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		pl.plan.Service.Reason, pl.plan.Service.Message = ServiceExternalName,
			"ExternalName Services have no endpoints: DNS answers with a CNAME to "+svc.Spec.ExternalName
		pl.plan.Unchanged = ours
		return pl.plan, nil
	case len(svc.Spec.Selector) == 0:
		// The API turns an empty selector into none, so both mean "selectorless".
		pl.plan.Service.Reason, pl.plan.Service.Message = ServiceNoSelector,
			"the Service has no selector: its endpoints come from a hand-written Endpoints object (mirrored) or EndpointSlices"
		pl.plan.Unchanged = ours
		return pl.plan, nil
	case svc.DeletionTimestamp != nil:
		pl.plan.Service.Reason, pl.plan.Service.Message = ServiceTerminating,
			"the Service is being deleted: slices are updated and deleted, none created"
	}

	// 2. Per-Pod facts that do not depend on the address type.
	facts := pl.podFacts(in.Pods, in.Nodes)
	if hintsEnabled(svc.Annotations) {
		pl.zoneRatios, pl.zoneRatiosMsg = zoneCPURatios(in.Nodes)
	}
	var liveZone func(epKey) *string
	if in.Nodes.Unreadable {
		liveZone = liveZones(ours)
		pl.warn(NodeUnreadable, "nodes", "the Nodes could not be read: no Pod is dropped for its Node, and zones are kept from the live slices")
	}

	// 3. Each served address type is planned on its own; slices of a type
	//    the Service no longer serves are deleted and never recycled.
	pl.plan.AddressTypes = addressTypes(svc)
	served := map[discovery.AddressType]bool{}
	for _, at := range pl.plan.AddressTypes {
		served[at] = true
		pl.planAddressType(byType[at], facts, at, liveZone)
	}
	for _, at := range sortedTypes(byType) {
		if !served[at] {
			pl.plan.Delete = append(pl.plan.Delete, byType[at]...)
		}
	}
	pl.finish(facts)
	return pl.plan, nil
}

// partitionSlices keeps the live slices this plan owns (our managed-by value,
// this Service's name label, not being deleted) grouped by address type and
// sorted by name, and reports the Service's other slices as foreign.
func (pl *planner) partitionSlices(slices []*discovery.EndpointSlice) ([]*discovery.EndpointSlice, map[discovery.AddressType][]*discovery.EndpointSlice) {
	var ours []*discovery.EndpointSlice
	byType := map[discovery.AddressType][]*discovery.EndpointSlice{}
	for _, s := range slices {
		if s == nil || s.Namespace != pl.svc.Namespace || s.Labels[discovery.LabelServiceName] != pl.svc.Name {
			continue
		}
		if s.Labels[discovery.LabelManagedBy] != pl.opts.ManagedBy {
			pl.plan.Foreign = append(pl.plan.Foreign, s)
			continue
		}
		if s.DeletionTimestamp != nil {
			continue
		}
		ours = append(ours, s)
	}
	sortByName(pl.plan.Foreign)
	sortByName(ours)
	pl.plan.live = make(map[string]*discovery.EndpointSlice, len(ours))
	for _, s := range ours {
		byType[s.AddressType] = append(byType[s.AddressType], s)
		pl.plan.live[s.Name] = s
	}
	return ours, byType
}

// podFacts sorts the Pods, records a decision for each and derives what the
// address-type passes need: ports, port group and Node.
func (pl *planner) podFacts(pods []*corev1.Pod, nodes Nodes) []*podFacts {
	sorted := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if p != nil {
			sorted = append(sorted, p)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})
	selector := labels.SelectorFromValidatedSet(pl.svc.Spec.Selector)
	cache := newPortCache(pl.svc)
	decisions := make([]PodDecision, len(sorted))
	facts := make([]*podFacts, 0, len(sorted))
	for i, pod := range sorted {
		d := &decisions[i]
		d.Namespace, d.Name = pod.Namespace, pod.Name
		switch {
		case pod.Namespace != pl.svc.Namespace:
			d.Reason, d.Message = WrongNamespace, "pod is in namespace "+pod.Namespace+", not the Service's"
			continue
		case !selector.Matches(labels.Set(pod.Labels)):
			d.Reason, d.Message = SelectorMismatch, "pod labels do not match the Service selector "+selector.String()
			continue
		}
		if r, msg := podExclusion(pod); r != "" {
			d.Reason, d.Message = r, msg
			continue
		}
		f := &podFacts{pod: pod, decision: i}
		f.v4, f.v6 = podAddresses(pod)
		var notes []Note
		f.ports, f.portKey, notes = cache.resolve(pod)
		d.Notes = append(d.Notes, notes...)
		switch node, ok := nodes.ByName[pod.Spec.NodeName]; {
		case ok && node != nil:
			f.node = node
		case nodes.Unreadable:
			f.zoneFromLive = true
			d.Notes = append(d.Notes, Note{Reason: NodeUnreadable, Message: "node " + pod.Spec.NodeName + " could not be read: zone kept from the live endpoint"})
		case pl.svc.Spec.PublishNotReadyAddresses:
			d.Notes = append(d.Notes, Note{Reason: NodeNotFound, Message: "node " + pod.Spec.NodeName + " not found: published anyway (publishNotReadyAddresses), without a zone"})
		default:
			f.nodeMissing = true
			d.Reason, d.Message = NodeNotFound, "node "+pod.Spec.NodeName+" not found: pod skipped until it exists or the pod is deleted"
			pl.warn(NodeNotFound, "pod/"+pod.Name, fmt.Sprintf("skipping Pod %s for Service %s/%s: Node %s Not Found",
				pod.Name, pl.svc.Namespace, pl.svc.Name, pod.Spec.NodeName))
		}
		facts = append(facts, f)
	}
	pl.plan.Pods = decisions
	return facts
}

// liveZones indexes the zones of our live endpoints, for Pods whose Node
// could not be read.
func liveZones(ours []*discovery.EndpointSlice) func(epKey) *string {
	zones := map[epKey]*string{}
	for _, s := range ours {
		for i := range s.Endpoints {
			if z := s.Endpoints[i].Zone; z != nil {
				zones[keyOf(&s.Endpoints[i])] = z
			}
		}
	}
	return func(k epKey) *string { return zones[k] }
}

func (pl *planner) warn(r Reason, object, msg string) {
	pl.plan.Warnings = append(pl.plan.Warnings, Warning{Reason: r, Object: object, Message: msg})
}

func sortByName(slices []*discovery.EndpointSlice) {
	sort.SliceStable(slices, func(i, j int) bool { return slices[i].Name < slices[j].Name })
}

func sortedTypes(m map[discovery.AddressType][]*discovery.EndpointSlice) []discovery.AddressType {
	out := make([]discovery.AddressType, 0, len(m))
	for at := range m {
		out = append(out, at)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
