package reconcile

import (
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var memoSequences = flag.Int("memo-sequences", 400, "random event sequences the memo's plans are compared with Compute's over")

// TestMemoAgainstCompute runs random event sequences (Pods added, deleted,
// flipped, relabelled, readdressed; Nodes rezoned, deleted and back; slices
// edited and deleted by hand; foreign slices; the Service changed or
// recreated) through the watch loop's way of planning: the memo's plan when
// it has one, Compute otherwise, the writes applied to a simulated cluster.
// After every sync the memo's plan must equal Compute's from the same state,
// and the state the writes leave must be one Compute would leave alone.
func TestMemoAgainstCompute(t *testing.T) {
	seed := int64(20261125)
	stats := map[string]int{}
	for i := 0; i < *memoSequences; i++ {
		w := newWorld(rand.New(rand.NewSource(seed + int64(i))))
		name := fmt.Sprintf("sequence %d (seed %d)", i, seed+int64(i))
		var memo *Memo
		for ev := 0; ev < 60; ev++ {
			what := w.event()
			stats["event: "+what]++
			if w.g.n(3) == 0 {
				continue // batched with the next event
			}
			memo = w.sync(t, fmt.Sprintf("%s, event %d (%s)", name, ev, what), memo, stats)
		}
	}
	if stats["sync: memo plan"] < stats["sync: Compute"]/2 {
		t.Errorf("the memo planned too few syncs to prove anything: %v", stats)
	}
	for _, k := range slices.Sorted(maps.Keys(stats)) {
		t.Logf("%6d %s", stats[k], k)
	}
}

// world is a simulated namespace with one Service.
type world struct {
	g       *gen
	opts    Options
	svc     *corev1.Service
	pods    map[string]*corev1.Pod
	nodes   map[string]*corev1.Node
	gone    map[string]*corev1.Node
	live    map[string]*discovery.EndpointSlice
	pending map[string]bool
	rv, n   int
}

func newWorld(r *rand.Rand) *world {
	g := &gen{r: r, dims: map[string]bool{}}
	w := &world{g: g, opts: DefaultOptions(), pods: map[string]*corev1.Pod{}, live: map[string]*discovery.EndpointSlice{},
		gone: map[string]*corev1.Node{}, pending: map[string]bool{}}
	w.opts.MaxEndpointsPerSlice = pick(r, 1, 2, 3, 5, 8, 100)
	w.svc = w.newService()
	w.nodes = g.nodes().ByName
	for i := 0; i < g.n(25); i++ {
		w.addPod()
	}
	return w
}

func (w *world) bump() string { w.rv++; return strconv.Itoa(w.rv) }

// newService is mostly a Service the memo keeps; sometimes one it does not.
func (w *world) newService() *corev1.Service {
	s := w.g.service()
	if w.g.n(4) != 0 {
		s.Annotations, s.Spec.TrafficDistribution, s.DeletionTimestamp = nil, nil, nil
		s.Spec.Type, s.Spec.Selector = corev1.ServiceTypeClusterIP, map[string]string{"app": "web"}
		if w.g.n(2) == 0 {
			// Ports by name: Pods fall into port groups by their own ports.
			s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				{Name: "metrics", Port: 81, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}}
		}
	}
	s.ResourceVersion = w.bump()
	return s
}

func (w *world) addPod() {
	w.n++
	p := w.g.pod(w.svc, w.n, Nodes{ByName: w.nodes})
	p.Labels = map[string]string{"app": "web"}
	w.setPod(p)
}

func (w *world) setPod(p *corev1.Pod) {
	p.ResourceVersion = w.bump()
	w.pods[p.Name] = p
	w.pending[p.Name] = true
}

func (w *world) somePod() *corev1.Pod {
	if len(w.pods) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(w.pods))
	return w.pods[pick(w.g.r, names...)]
}

func (w *world) someSlice() *discovery.EndpointSlice {
	if len(w.live) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(w.live))
	return w.live[pick(w.g.r, names...)]
}

// event changes the world at random and says how.
func (w *world) event() string {
	g := w.g
	choice := g.n(16)
	if g.n(2) == 0 {
		choice = 3 // the common event: a readiness flip
	}
	var what string
	if choice <= 8 || choice == 15 {
		what = w.podEvent(choice)
	} else {
		what = w.clusterEvent(choice)
	}
	if what == "" {
		return "nothing"
	}
	return what
}

// podEvent changes a Pod (choices 0-8 and 15); "" when none was changed.
func (w *world) podEvent(choice int) string {
	g := w.g
	switch choice {
	case 0, 1:
		w.addPod()
		return "pod added"
	case 2:
		if p := w.somePod(); p != nil {
			delete(w.pods, p.Name)
			w.pending[p.Name] = true
			return "pod deleted"
		}
	case 3, 4, 5, 6:
		if p := w.somePod(); p != nil {
			c := p.DeepCopy()
			ready := corev1.ConditionTrue
			if isPodReady(p) {
				ready = corev1.ConditionFalse
			}
			c.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready,
				LastTransitionTime: metav1.NewTime(time.Date(2026, 3, 1, 0, 0, w.rv, 0, time.UTC))}}
			w.setPod(c)
			return "pod readiness flipped"
		}
	case 7:
		if p := w.somePod(); p != nil {
			c := p.DeepCopy()
			if c.Labels["app"] == "web" {
				c.Labels = map[string]string{"app": "other"}
			} else {
				c.Labels = map[string]string{"app": "web"}
			}
			w.setPod(c)
			return "pod relabelled"
		}
	case 8:
		if p := w.somePod(); p != nil && g.n(3) == 0 {
			// Two addresses of a family (the API refuses them; the
			// planner takes them): the same key in either order.
			for _, name := range slices.Sorted(maps.Keys(w.pods)) {
				if q := w.pods[name]; len(q.Status.PodIPs) == 2 && q.Status.PodIPs[1].IP == "10.9.0.2" {
					p = q
					break
				}
			}
			c := p.DeepCopy()
			a, b := corev1.PodIP{IP: "10.9.0.1"}, corev1.PodIP{IP: "10.9.0.2"}
			if len(c.Status.PodIPs) == 2 && c.Status.PodIPs[0] == a {
				// already a, b: swap
				a, b = b, a
			}
			c.Status.PodIPs, c.Status.PodIP = []corev1.PodIP{a, b}, a.IP
			w.setPod(c)
			return "pod addresses reordered"
		}
		if p := w.somePod(); p != nil {
			var idx int
			fmt.Sscanf(p.Name, "pod%d", &idx)
			c := g.pod(w.svc, idx, Nodes{ByName: w.nodes})
			c.Labels = p.Labels
			w.setPod(c)
			return "pod changed (addresses, ports, node, phase)"
		}
	case 15:
		if p := w.somePod(); p != nil {
			c := p.DeepCopy()
			renumberPort(c, pick(g.r, "http", "metrics", "dns"))
			w.setPod(c)
			return "pod port renumbered"
		}
	}
	return ""
}

// clusterEvent changes a Node, a slice or the Service (choices 9-14); ""
// when none was changed.
func (w *world) clusterEvent(choice int) string {
	g := w.g
	switch choice {
	case 9:
		if len(w.nodes) > 0 {
			names := slices.Sorted(maps.Keys(w.nodes))
			n := w.nodes[pick(g.r, names...)].DeepCopy()
			n.Labels[corev1.LabelTopologyZone] = pick(g.r, "zone-a", "zone-b", "zone-q")
			w.nodes[n.Name] = n
			w.touchNode(n.Name)
			return "node rezoned"
		}
	case 10:
		if len(w.gone) > 0 {
			for name, n := range w.gone {
				w.nodes[name] = n
				delete(w.gone, name)
				w.touchNode(name)
			}
			return "node back"
		}
		if len(w.nodes) > 1 {
			name := pick(g.r, slices.Sorted(maps.Keys(w.nodes))...)
			w.gone[name] = w.nodes[name]
			delete(w.nodes, name)
			w.touchNode(name)
			return "node deleted"
		}
	case 11:
		if s := w.someSlice(); s != nil {
			w.editSlice(s)
			return "slice edited by hand"
		}
	case 12:
		if s := w.someSlice(); s != nil {
			delete(w.live, s.Name)
			return "slice deleted by hand"
		}
	case 13:
		if s := w.someSlice(); s != nil {
			c := s.DeepCopy()
			c.Name = "foreign-" + w.bump()
			c.ResourceVersion = w.bump()
			c.Labels[discovery.LabelManagedBy] = ControllerManagedBy
			w.live[c.Name] = c
			return "foreign slice"
		}
	case 14:
		s := w.newService()
		if g.n(2) == 0 {
			s.UID = types.UID("recreated-" + s.ResourceVersion)
		}
		w.svc = s
		return "service changed"
	}
	return ""
}

func (w *world) touchNode(name string) {
	for _, p := range w.pods {
		if p.Spec.NodeName == name {
			w.pending[p.Name] = true
		}
	}
}

func (w *world) editSlice(s *discovery.EndpointSlice) {
	c := s.DeepCopy()
	c.ResourceVersion = w.bump()
	switch {
	case len(c.Endpoints) > 0 && w.g.n(2) == 0:
		i := w.g.n(len(c.Endpoints))
		v := !endpointReady(&c.Endpoints[i])
		c.Endpoints[i].Conditions.Ready = &v
	case len(c.Endpoints) > 0 && w.g.n(2) == 0:
		c.Endpoints = c.Endpoints[1:]
	case len(c.Endpoints) > 0 && w.g.n(2) == 0:
		// Compute does not compare it, so the slice stays as it is
		if ref := c.Endpoints[w.g.n(len(c.Endpoints))].TargetRef; ref != nil {
			ref.ResourceVersion = "7"
		}
	case w.g.n(2) == 0:
		c.Labels["team"] = "edited"
	default:
		// a write that changes nothing but the resourceVersion
	}
	w.live[c.Name] = c
}

// input is what the watch loop's cache gives the planner.
func (w *world) input() Input {
	in := Input{Service: w.svc, Nodes: Nodes{ByName: maps.Clone(w.nodes), Complete: true}}
	for _, name := range slices.Sorted(maps.Keys(w.pods)) {
		if p := w.pods[name]; p.Labels["app"] == "web" {
			in.Pods = append(in.Pods, p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.live)) {
		in.Slices = append(in.Slices, w.live[name])
	}
	return in
}

// sync plans as the watch loop does and applies the writes.
func (w *world) sync(t *testing.T, name string, memo *Memo, stats map[string]int) *Memo {
	t.Helper()
	in := w.input()
	o := w.opts
	o.TriggerTime = time.Date(2026, 4, 1, 0, 0, w.rv, 0, time.UTC)
	full, err := Compute(in, o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var changes []PodChange
	for _, n := range slices.Sorted(maps.Keys(w.pending)) {
		changes = append(changes, PodChange{Name: n, Pod: w.pods[n]})
	}
	clear(w.pending)
	if memo != nil {
		before := snapshot(in)
		plan, step, ok := memo.Plan(w.svc, changes, Nodes{ByName: maps.Clone(w.nodes)}, in.Slices, o)
		if after := snapshot(in); after != before {
			t.Fatalf("%s: Memo.Plan modified its input", name)
		}
		if ok {
			stats["sync: memo plan"]++
			if d := planDiff(plan, full); d != "" {
				t.Fatalf("%s: the memo's plan differs from Compute's (-memo +Compute):\n%s", name, d)
			}
			memo.Commit(step, w.apply(t, name, plan))
			w.checkSettled(t, name, o)
			return memo
		}
	}
	stats["sync: Compute"]++
	written := w.apply(t, name, full)
	next, ok := NewMemo(in, o, append(slices.Clone(full.Unchanged), written...))
	if ok {
		stats["memo made"]++
		w.checkSettled(t, name, o)
	}
	return next
}

// checkSettled: where a memo stands, Compute writes nothing more.
func (w *world) checkSettled(t *testing.T, name string, o Options) {
	t.Helper()
	again, err := Compute(w.input(), o)
	if err != nil || !again.InSync() {
		t.Fatalf("%s: a memo stands, yet Compute plans %d creates, %d updates, %d deletes (%v)", name,
			len(again.Create), len(again.Update), len(again.Delete), err)
	}
}

// apply writes a plan to the simulated cluster as the API server would,
// and returns the written slices as it returns them.
func (w *world) apply(t *testing.T, name string, p *Plan) []*discovery.EndpointSlice {
	t.Helper()
	var written []*discovery.EndpointSlice
	for _, s := range p.Delete {
		delete(w.live, s.Name)
	}
	for _, s := range p.Update {
		if cur := w.live[s.Name]; cur == nil || cur.ResourceVersion != s.ResourceVersion {
			t.Fatalf("%s: update of %s is not conditional on the live version", name, s.Name)
		}
		c := s.DeepCopy()
		c.ResourceVersion = w.bump()
		w.live[c.Name] = c
		written = append(written, c)
	}
	for _, s := range p.Create {
		c := s.DeepCopy()
		c.Name = c.GenerateName + w.bump()
		c.ResourceVersion = w.bump()
		w.live[c.Name] = c
		written = append(written, c)
	}
	return written
}

// planDiff compares what two plans write and leave.
func planDiff(a, b *Plan) string {
	type shape struct {
		Create, Update             []*discovery.EndpointSlice
		Delete, Unchanged, Foreign []string
		Reason                     Reason
		AddressTypes               []discovery.AddressType
	}
	names := func(ss []*discovery.EndpointSlice) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name+"@"+s.ResourceVersion)
		}
		return out
	}
	of := func(p *Plan) shape {
		return shape{Create: p.Create, Update: p.Update, Delete: names(p.Delete), Unchanged: names(p.Unchanged),
			Foreign: names(p.Foreign), Reason: p.Service.Reason, AddressTypes: p.AddressTypes}
	}
	return cmp.Diff(of(a), of(b), cmpopts.EquateEmpty())
}

// TestEndpointFieldsCompared: endpointsIdentical compares every field it
// knows of; a new field must be added to it before this passes again.
func TestEndpointFieldsCompared(t *testing.T) {
	if n := reflect.TypeFor[discovery.Endpoint]().NumField(); n != 8 {
		t.Fatalf("discovery.Endpoint has %d fields, endpointsIdentical compares 8", n)
	}
	if n := reflect.TypeFor[discovery.EndpointConditions]().NumField(); n != 3 {
		t.Fatalf("discovery.EndpointConditions has %d fields, endpointsIdentical compares 3", n)
	}
}

// renumberPort moves a Pod's named container port (adding it when
// missing), which moves the Pod to another port group of a Service that
// targets the name.
func renumberPort(p *corev1.Pod, name string) {
	for i := range p.Spec.Containers {
		for j := range p.Spec.Containers[i].Ports {
			if cp := &p.Spec.Containers[i].Ports[j]; cp.Name == name {
				cp.ContainerPort = 9000 + (cp.ContainerPort+1)%2
				return
			}
		}
	}
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c-" + name,
		Ports: []corev1.ContainerPort{{Name: name, ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}})
}
