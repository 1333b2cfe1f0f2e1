package main

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// Labels of the churn's objects: a Service selects app=<its name> and
// track=<its track>; a selector switch flips the track, a relabel moves a
// Pod to another app (or to idleApp, which no Service selects).
const (
	appLabel   = "app"
	trackLabel = "track"
	idleApp    = "idle"
)

var tracks = [2]string{"blue", "green"}

// zonedNode is one of the soak's Nodes: zones reach the slices through them.
type zonedNode struct{ Name, Zone string }

var soakNodes = []zonedNode{
	{"soak-node-a1", "zone-a"}, {"soak-node-a2", "zone-a"},
	{"soak-node-b1", "zone-b"}, {"soak-node-c1", "zone-c"},
}

// zoneOf is the zone of a soak Node, "" for another.
func zoneOf(node string) string {
	for _, n := range soakNodes {
		if n.Name == node {
			return n.Zone
		}
	}
	return ""
}

// pod is the model's view of one Pod: there is no kubelet, so what the
// churn wrote is what there is.
type pod struct {
	NS, Name, Node, IP string
	App, Track         string
	Ready              bool
}

// service is the model's view of one Service: it selects app=Name,
// track=Track.
type service struct {
	NS, Name, Track string
}

func (s *service) selects(p *pod) bool {
	return p.NS == s.NS && p.App == s.Name && p.Track == s.Track
}

// namespace is one of the churn's namespaces. Gone: deleted (terminating
// or already removed); nothing in it is changed until it is created again.
type namespace struct {
	Name     string
	Gone     bool
	Removed  bool // the API no longer has it: it may be created again
	Filling  bool // created: Services and Pods are added before other changes
	Services map[string]*service
	Pods     map[string]*pod
}

// opKind is one kind of change the churn makes.
type opKind string

const (
	opFlip           opKind = "readiness-flip"
	opRelabel        opKind = "relabel"
	opScaleUp        opKind = "scale-up"
	opScaleDown      opKind = "scale-down"
	opServiceCreate  opKind = "service-create"
	opServiceDelete  opKind = "service-delete"
	opSelectorSwitch opKind = "selector-switch"
	opNSDelete       opKind = "namespace-delete"
	opNSCreate       opKind = "namespace-create"
)

// opKinds lists every kind, in the order the summary shows them.
var opKinds = []opKind{opFlip, opRelabel, opScaleUp, opScaleDown, opServiceCreate, opServiceDelete, opSelectorSwitch, opNSDelete, opNSCreate}

// op is one planned change: the object it writes and its state after.
type op struct {
	Kind opKind
	NS   string
	// Pod is the Pod after a flip, relabel or scale-up (before a scale-down).
	Pod pod
	// Service is the Service after a create or selector switch (before a delete).
	Service service
}

// Object names the object the op writes, for the record and the audit.
func (o op) Object() (resource, name string) {
	switch o.Kind {
	case opFlip, opRelabel, opScaleUp, opScaleDown:
		return "pods", o.Pod.Name
	case opServiceCreate, opServiceDelete, opSelectorSwitch:
		return "services", o.Service.Name
	default:
		return "namespaces", o.NS
	}
}

// modelConfig sizes the churn's world.
type modelConfig struct {
	Namespaces               int
	MinServices, MaxServices int // per namespace
	MinPods, MaxPods         int // selected per Service
	MaxIdle                  int // Pods relabelled out, per namespace
	// NamespaceEvery is how often a namespace is deleted (and, once gone,
	// created again); 0 never.
	NamespaceEvery time.Duration
	// NamespaceUntil: no namespace is deleted at or after it (zero: no
	// limit), so that none is still being deleted when the soak looks
	// last.
	NamespaceUntil time.Time
}

// defaultModel is about 45 Services and 200 Pods in 4 namespaces: a
// Service changes about every 15 s at 3 changes a second.
var defaultModel = modelConfig{Namespaces: 4, MinServices: 8, MaxServices: 14, MinPods: 2, MaxPods: 8, MaxIdle: 4, NamespaceEvery: 4 * time.Minute}

// model is what the churn believes the cluster holds. It plans the next
// change (pure: its randomness is seeded, its clock passed in) and learns
// the outcome from the executor.
type model struct {
	cfg    modelConfig
	r      *rand.Rand
	ns     []*namespace
	seq    int // names of Pods and Services
	ipSeq  int
	lastNS time.Time // last namespace deletion
	nsNext int       // which namespace is deleted next
}

func newModel(cfg modelConfig, seed int64, start time.Time) *model {
	m := &model{cfg: cfg, r: rand.New(rand.NewSource(seed)), lastNS: start}
	for i := 0; i < cfg.Namespaces; i++ {
		m.ns = append(m.ns, &namespace{Name: fmt.Sprintf("soak-%d", i), Removed: true, Gone: true,
			Services: map[string]*service{}, Pods: map[string]*pod{}})
	}
	return m
}

// namespaces lists the churn's namespace names.
func (m *model) namespaces() []string {
	var out []string
	for _, n := range m.ns {
		out = append(out, n.Name)
	}
	return out
}

func (m *model) nsNamed(name string) *namespace {
	for _, n := range m.ns {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// nextIP is a Pod address never used before in the run, so an address
// names one Pod for good (the drop check relies on it).
func (m *model) nextIP() string {
	m.ipSeq++
	s := m.ipSeq + 100<<16
	return fmt.Sprintf("10.%d.%d.%d", s>>16&255, s>>8&255, s&255)
}

func (m *model) nextName(prefix string) string {
	m.seq++
	return fmt.Sprintf("%s-%d", prefix, m.seq)
}

// Plan chooses the next change at now: first what fills a namespace
// created (again), then a namespace deletion when one is due, else one at
// random by weight. ok is false when nothing can be changed (every
// namespace gone).
func (m *model) Plan(now time.Time) (op, bool) {
	for _, n := range m.ns {
		if n.Removed {
			return op{Kind: opNSCreate, NS: n.Name}, true
		}
	}
	live := m.live()
	if len(live) == 0 {
		return op{}, false
	}
	// A namespace created is filled half way between the bounds, as a
	// deployment of an application would fill it.
	for _, n := range live {
		if !n.Filling {
			continue
		}
		if len(n.Services) < (m.cfg.MinServices+m.cfg.MaxServices)/2 {
			return m.planServiceCreate(n), true
		}
		for _, s := range sortedServices(n) {
			if m.selected(n, s) < (m.cfg.MinPods+m.cfg.MaxPods)/2 {
				return m.planScaleUp(n, s, s.Track), true
			}
		}
		n.Filling = false
	}
	if m.cfg.NamespaceEvery > 0 && now.Sub(m.lastNS) >= m.cfg.NamespaceEvery && len(live) == len(m.ns) &&
		(m.cfg.NamespaceUntil.IsZero() || now.Before(m.cfg.NamespaceUntil)) {
		n := m.ns[m.nsNext%len(m.ns)]
		return op{Kind: opNSDelete, NS: n.Name}, true
	}
	n := live[m.r.Intn(len(live))]
	svcs := sortedServices(n)
	s := svcs[m.r.Intn(len(svcs))]
	switch w := m.r.Intn(100); {
	case w < 45:
		if p := m.pickPod(n, func(p *pod) bool { return p.App != idleApp }); p != nil {
			q := *p
			q.Ready = !q.Ready
			return op{Kind: opFlip, NS: n.Name, Pod: q}, true
		}
	case w < 57:
		return m.planRelabel(n), true
	case w < 70:
		// The emptier of two Services grows.
		if o := svcs[m.r.Intn(len(svcs))]; m.selected(n, o) < m.selected(n, s) {
			s = o
		}
		if m.selected(n, s) < m.cfg.MaxPods {
			t := s.Track
			if m.r.Intn(4) == 0 {
				t = tracks[m.r.Intn(2)] // a Pod on either track, for selector switches to find
			}
			return m.planScaleUp(n, s, t), true
		}
	case w < 83:
		return m.planScaleDown(n), true
	case w < 89:
		t := tracks[0]
		if s.Track == t {
			t = tracks[1]
		}
		return op{Kind: opSelectorSwitch, NS: n.Name, Service: service{NS: n.Name, Name: s.Name, Track: t}}, true
	case w < 95:
		if len(n.Services) < m.cfg.MaxServices {
			return m.planServiceCreate(n), true
		}
	default:
		if len(n.Services) > m.cfg.MinServices {
			return op{Kind: opServiceDelete, NS: n.Name, Service: *s}, true
		}
	}
	// The chosen change does not fit the world as it is: a flip always does.
	if p := m.pickPod(n, func(p *pod) bool { return true }); p != nil {
		q := *p
		q.Ready = !q.Ready
		return op{Kind: opFlip, NS: n.Name, Pod: q}, true
	}
	return m.planScaleUp(n, s, s.Track), true
}

func (m *model) live() []*namespace {
	var out []*namespace
	for _, n := range m.ns {
		if !n.Gone {
			out = append(out, n)
		}
	}
	return out
}

func sortedServices(n *namespace) []*service {
	out := make([]*service, 0, len(n.Services))
	for _, s := range n.Services {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortedPods(n *namespace) []*pod {
	out := make([]*pod, 0, len(n.Pods))
	for _, p := range n.Pods {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *model) selected(n *namespace, s *service) int {
	c := 0
	for _, p := range n.Pods {
		if s.selects(p) {
			c++
		}
	}
	return c
}

func (m *model) pickPod(n *namespace, keep func(*pod) bool) *pod {
	var pods []*pod
	for _, p := range sortedPods(n) {
		if keep(p) {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return nil
	}
	return pods[m.r.Intn(len(pods))]
}

func (m *model) planServiceCreate(n *namespace) op {
	return op{Kind: opServiceCreate, NS: n.Name, Service: service{NS: n.Name, Name: m.nextName("svc"), Track: tracks[m.r.Intn(2)]}}
}

// planScaleUp adds a Pod to s's app on track t.
func (m *model) planScaleUp(n *namespace, s *service, t string) op {
	nd := soakNodes[m.r.Intn(len(soakNodes))]
	p := pod{NS: n.Name, Name: m.nextName("pod"), Node: nd.Name, IP: m.nextIP(), App: s.Name, Track: t, Ready: m.r.Intn(5) != 0}
	return op{Kind: opScaleUp, NS: n.Name, Pod: p}
}

// planScaleDown deletes a Pod, an idle one first when there are too many.
func (m *model) planScaleDown(n *namespace) op {
	idle := m.pickPod(n, func(p *pod) bool { return p.App == idleApp })
	var p *pod
	if idle != nil && m.idle(n) > m.cfg.MaxIdle {
		p = idle
	} else {
		p = m.pickPod(n, func(p *pod) bool { return true })
	}
	if p == nil {
		s := sortedServices(n)[0]
		return m.planScaleUp(n, s, s.Track)
	}
	return op{Kind: opScaleDown, NS: n.Name, Pod: *p}
}

func (m *model) idle(n *namespace) int {
	c := 0
	for _, p := range n.Pods {
		if p.App == idleApp {
			c++
		}
	}
	return c
}

// planRelabel moves a Pod out of its Service (to idle) or into another
// (an idle Pod, or one of another Service's Pods).
func (m *model) planRelabel(n *namespace) op {
	p := m.pickPod(n, func(p *pod) bool { return true })
	if p == nil {
		s := sortedServices(n)[0]
		return m.planScaleUp(n, s, s.Track)
	}
	q := *p
	svcs := sortedServices(n)
	target := svcs[m.r.Intn(len(svcs))]
	switch {
	case q.App != idleApp && (m.r.Intn(2) == 0 || target.Name == q.App):
		q.App = idleApp
	default:
		q.App, q.Track = target.Name, target.Track
	}
	return op{Kind: opRelabel, NS: n.Name, Pod: q}
}

// Applied records that the op succeeded and returns the Services whose
// desired endpoints it changed ("ns/name"), sorted.
func (m *model) Applied(o op, now time.Time) []string {
	n := m.nsNamed(o.NS)
	if n == nil {
		return nil
	}
	before := m.signatures(n)
	switch o.Kind {
	case opFlip, opRelabel, opScaleUp:
		p := o.Pod
		n.Pods[p.Name] = &p
	case opScaleDown:
		delete(n.Pods, o.Pod.Name)
	case opServiceCreate, opSelectorSwitch:
		s := o.Service
		n.Services[s.Name] = &s
	case opServiceDelete:
		delete(n.Services, o.Service.Name)
	case opNSDelete:
		n.Gone = true
		n.Services, n.Pods = map[string]*service{}, map[string]*pod{}
		m.lastNS = now
		m.nsNext++
	case opNSCreate:
		n.Gone, n.Removed, n.Filling = false, false, true
	}
	after := m.signatures(n)
	var changed []string
	for name, sig := range after {
		if b, ok := before[name]; !ok || b != sig {
			changed = append(changed, o.NS+"/"+name)
		}
	}
	sort.Strings(changed)
	return changed
}

// Removed records that a deleted namespace is gone from the API.
func (m *model) Removed(ns string) {
	if n := m.nsNamed(ns); n != nil && n.Gone {
		n.Removed = true
	}
}

// Unremoved records that a namespace thought gone still exists
// (terminating): it is looked for again before it is created.
func (m *model) Unremoved(ns string) {
	if n := m.nsNamed(ns); n != nil && n.Gone {
		n.Removed = false
	}
}

// Forget drops a Pod or Service the API no longer has (a write's answer
// said so), and Learn puts back what the API says an object is, after a
// write whose outcome is unknown.
func (m *model) Forget(ns, resource, name string) {
	n := m.nsNamed(ns)
	if n == nil {
		return
	}
	if resource == "pods" {
		delete(n.Pods, name)
	} else {
		delete(n.Services, name)
	}
}

// LearnPod records a Pod as the API has it.
func (m *model) LearnPod(p pod) {
	if n := m.nsNamed(p.NS); n != nil && !n.Gone {
		n.Pods[p.Name] = &p
	}
}

// LearnService records a Service as the API has it.
func (m *model) LearnService(s service) {
	if n := m.nsNamed(s.NS); n != nil && !n.Gone {
		n.Services[s.Name] = &s
	}
}

// signatures renders each Service's desired endpoints as the snapshot
// does from the API (desiredSignature), for Applied's comparison.
func (m *model) signatures(n *namespace) map[string]string {
	out := map[string]string{}
	for name, s := range n.Services {
		var eps []endpointKey
		for _, p := range n.Pods {
			if s.selects(p) {
				eps = append(eps, endpointKey{IP: p.IP, Ready: p.Ready, Node: p.Node, Zone: zoneOf(p.Node)})
			}
		}
		out[name] = signature(eps)
	}
	return out
}

// counts is the model's size: namespaces live, Services, Pods.
func (m *model) counts() (namespaces, services, pods int) {
	for _, n := range m.live() {
		namespaces++
		services += len(n.Services)
		pods += len(n.Pods)
	}
	return
}

// endpointKey is what the soak compares of an endpoint: its address, its
// readiness (serving follows it: no Pod here terminates), node and zone.
type endpointKey struct {
	IP    string
	Ready bool
	Node  string
	Zone  string
}

// signature renders endpoints in a canonical order; an empty set is ""
// (an empty slice), not noSlices.
func signature(eps []endpointKey) string {
	s := make([]string, len(eps))
	for i, e := range eps {
		s[i] = fmt.Sprintf("%s/%v/%s/%s", e.IP, e.Ready, e.Node, e.Zone)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// noSlices is the signature of a manager that has no slice for a Service.
const noSlices = "<none>"
