package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// live builds the live slices of a case the way a cluster gets them: written
// by upstream's Reconciler (hash-ordered ports, random placement) for an
// earlier state of the cluster, then drifted.
func (g *gen) live(cur Input, nodes Nodes, o Options) []*discovery.EndpointSlice {
	switch g.n(8) {
	case 0:
		g.tag("live: none")
		return nil
	case 1, 2, 3:
		return g.transition(cur, nodes, o)
	default:
		return g.earlier(cur, nodes, o)
	}
}

// plannable is the Service as it was when upstream last planned it.
func plannable(s *corev1.Service) *corev1.Service {
	e := s.DeepCopy()
	e.DeletionTimestamp = nil
	e.Spec.Type = corev1.ServiceTypeClusterIP
	if len(e.Spec.Selector) == 0 {
		e.Spec.Selector = map[string]string{"app": s.Name}
	}
	return e
}

// transitionFields are the endpoint fields a transition changes, one at a
// time.
var transitionFields = []string{"ready", "serving", "terminating", "zone", "nodeName", "hostname", "targetRef UID", "addresses"}

// transition: upstream planned the current state, then one endpoint field
// changed on a few endpoints (so the live state is what upstream wrote when
// that field had another value). The plan must bring each back.
func (g *gen) transition(cur Input, nodes Nodes, o Options) []*discovery.EndpointSlice {
	live := runUpstream(Input{Service: plannable(cur.Service), Pods: cur.Pods, Nodes: nodes}, o).end
	var eps []*discovery.Endpoint
	for _, s := range live {
		for i := range s.Endpoints {
			eps = append(eps, &s.Endpoints[i])
		}
	}
	if len(eps) == 0 {
		g.tag("live: none")
		return live
	}
	field := pick(g.r, transitionFields...)
	g.tag("transition: %s changed alone", field)
	flip := func(b *bool) *bool { return ptrTo(b == nil || !*b) }
	for k := 0; k < 1+g.n(3); k++ {
		ep := eps[g.n(len(eps))]
		switch field {
		case "ready":
			ep.Conditions.Ready = flip(ep.Conditions.Ready)
		case "serving":
			ep.Conditions.Serving = flip(ep.Conditions.Serving)
		case "terminating":
			ep.Conditions.Terminating = flip(ep.Conditions.Terminating)
		case "zone":
			ep.Zone = pick(g.r, nil, ptrTo("zone-old"), ptrTo("zone-a"))
		case "nodeName":
			ep.NodeName = pick(g.r, nil, ptrTo("node-old"), ptrTo("node-0"))
		case "hostname":
			ep.Hostname = pick(g.r, nil, ptrTo("h-old"), ptrTo("h0"))
		case "targetRef UID":
			ref := *ep.TargetRef
			ref.UID = "uid-before"
			ep.TargetRef = &ref
		case "addresses":
			if len(ep.Addresses) > 0 && len(ep.Addresses[0]) > 0 && ep.Addresses[0][0] == 'f' {
				ep.Addresses = []string{fmt.Sprintf("fd00::9:%x", g.n(4))}
			} else {
				ep.Addresses = []string{fmt.Sprintf("10.9.9.%d", g.n(4))}
			}
		}
	}
	return live
}

// earlier: upstream planned an earlier cluster (other Nodes and zones, Pods
// not there yet, re-created, renamed hosts, changed readiness, since-deleted
// Pods, maybe another Service shape), and the result drifted since.
func (g *gen) earlier(cur Input, nodes Nodes, o Options) []*discovery.EndpointSlice {
	s := cur.Service
	// Objects that exist only in the past must not count as dimensions of
	// the current state.
	past := &gen{r: g.r, dims: map[string]bool{}}
	esvc := plannable(s)
	if g.one(4) {
		esvc = past.service()
		esvc.Name, esvc.UID = s.Name, s.UID
		esvc.DeletionTimestamp, esvc.Spec.Type, esvc.Spec.Selector = nil, corev1.ServiceTypeClusterIP, plannable(s).Spec.Selector
		g.tag("earlier: another Service shape")
	}
	en := Nodes{ByName: map[string]*corev1.Node{}, Complete: true}
	for _, name := range slices.Sorted(maps.Keys(nodes.ByName)) {
		n := nodes.ByName[name]
		switch g.n(8) {
		case 0:
			g.tag("earlier: a Node added since")
			continue
		case 1:
			n = n.DeepCopy()
			n.Labels[corev1.LabelTopologyZone] = pick(g.r, "zone-a", "zone-b", "zone-old")
			g.tag("earlier: a Node's zone changed since")
		}
		en.ByName[name] = n
	}
	if g.one(4) {
		en.ByName["gone-node"] = node("gone-node", "zone-a", "2")
		g.tag("earlier: a Node deleted since")
	}
	var pods []*corev1.Pod
	for i, p := range cur.Pods {
		q := p.DeepCopy()
		switch g.n(12) {
		case 0:
			continue // not there yet
		case 1:
			q = past.pod(s, i, nodes)
		case 2:
			q.UID = types.UID("before-" + string(p.UID))
			g.tag("earlier: Pod re-created under the same name and IP, new UID")
		case 3:
			if q.Spec.Hostname == "" || q.Spec.Subdomain != s.Name {
				q.Spec.Hostname, q.Spec.Subdomain = "h-old", s.Name
			} else {
				q.Spec.Hostname = pick(g.r, "", "h-old")
			}
			g.tag("earlier: Pod hostname changed")
		case 4:
			if isPodReady(q) {
				notReady(q)
			} else {
				q.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
			g.tag("earlier: Pod readiness changed")
		case 5:
			if q.DeletionTimestamp == nil {
				terminating(q)
			} else {
				q.DeletionTimestamp = nil
			}
			g.tag("earlier: Pod terminating changed")
		case 6:
			q.Spec.NodeName = pick(g.r, append(slices.Sorted(maps.Keys(nodes.ByName)), "gone-node")...)
			g.tag("earlier: Pod on another Node")
		}
		pods = append(pods, q)
	}
	for i := 0; i < g.n(10); i++ {
		pods = append(pods, past.pod(s, 1000+i, nodes))
		g.tag("earlier: Pods deleted since")
	}
	eo := o
	eo.MaxEndpointsPerSlice = pick(g.r, o.MaxEndpointsPerSlice, 1, 4, 100)
	return g.damage(runUpstream(Input{Service: esvc, Pods: pods, Nodes: en}, eo).end)
}

// damage edits live slices the ways clusters drift: endpoints lost or
// duplicated, stale hints, foreign owners, labels, deleted address types,
// slices pending deletion and slices of other managers.
func (g *gen) damage(live []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, sl := range live {
		sl = sl.DeepCopy()
		switch g.n(16) {
		case 0:
			if len(sl.Endpoints) > 0 {
				sl.Endpoints = sl.Endpoints[1:]
				g.tag("drift: endpoint lost")
			}
		case 1:
			if len(out) > 0 && len(out[0].Endpoints) > 0 && out[0].AddressType == sl.AddressType {
				sl.Endpoints = append(sl.Endpoints, out[0].Endpoints[0])
				g.tag("drift: endpoint duplicated")
			}
		case 2:
			for j := range sl.Endpoints {
				sl.Endpoints[j].Hints = &discovery.EndpointHints{ForZones: []discovery.ForZone{{Name: pick(g.r, "zone-a", "zone-b", "zone-x")}}}
			}
			g.tag("drift: stale hints")
		case 3:
			sl.OwnerReferences[0].UID = "old-uid"
			g.tag("drift: owned by an old Service UID")
		case 4:
			sl.Labels["stale"] = "yes"
			g.tag("drift: stale label")
		case 5:
			sl.AddressType = discovery.AddressType(pick(g.r, "IP", "FQDN"))
			g.tag("drift: deprecated address type")
		case 6:
			t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			sl.DeletionTimestamp = &t
			g.tag("drift: slice pending deletion")
		case 7:
			sl.Labels[discovery.LabelManagedBy] = ControllerManagedBy
			g.tag("drift: slice of another manager")
		case 8:
			for j := range sl.Endpoints {
				sl.Endpoints[j].Conditions.Serving = nil
			}
			g.tag("drift: serving condition unset")
		case 9:
			sl.Ports, sl.Endpoints = nil, nil
			g.tag("drift: slice emptied")
		}
		out = append(out, sl)
	}
	return out
}
