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

// The random input generator of the differential test and the fuzz target.
// It draws every choice from a chooser: math/rand for the differential test,
// the fuzzer's bytes for the fuzz target, so coverage guidance explores the
// structure of the input and not a seed. Each case records the dimensions it
// exercises, so a run can show what it covered.

// chooser is where the generator's choices come from.
type chooser interface{ Intn(n int) int }

// byteChooser turns fuzz bytes into choices; once they run out every choice
// is 0, which always yields a small, valid input.
type byteChooser struct {
	b []byte
	i int
}

func (c *byteChooser) Intn(n int) int {
	if n <= 1 || c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	if n > 256 && c.i < len(c.b) {
		v = v<<8 | int(c.b[c.i])
		c.i++
	}
	return v % n
}

func pick[T any](r chooser, xs ...T) T { return xs[r.Intn(len(xs))] }

func ptrTo[T any](v T) *T { return &v }

// randomCase is one generated input and the dimensions it covers.
type randomCase struct {
	in   Input
	opts Options
	desc string
	dims map[string]bool
}

// gen carries a chooser and the dimensions the current case covers.
type gen struct {
	r    chooser
	dims map[string]bool
}

func (g *gen) n(k int) int                 { return g.r.Intn(k) }
func (g *gen) one(k int) bool              { return g.r.Intn(k) == 0 }
func (g *gen) tag(format string, a ...any) { g.dims[fmt.Sprintf(format, a...)] = true }

func randomInput(r chooser) randomCase {
	g := &gen{r: r, dims: map[string]bool{}}
	o := DefaultOptions()
	o.MaxEndpointsPerSlice = pick(r, 1, 2, 3, 5, 8, 20, 100)
	if g.one(3) {
		o.TriggerTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	}
	s := g.service()
	nodes := g.nodes()
	n := pick(r, 0, 1, 3, 10, 25, 60)
	if g.one(25) {
		n = 151 + g.n(120)
		g.tag("pods > 150")
	}
	if o.MaxEndpointsPerSlice <= 3 && n >= 25 {
		g.tag("maxEndpointsPerSlice %d with >= 25 Pods", o.MaxEndpointsPerSlice)
	}
	pods := make([]*corev1.Pod, 0, n)
	for i := 0; i < n; i++ {
		pods = append(pods, g.pod(s, i, nodes))
	}
	// What the caller could read of the Nodes now.
	view := nodes
	switch g.n(8) {
	case 0:
		// Unreadable Nodes are modelled upstream with zoneless Nodes (see
		// runUpstream), so hints, which depend on zones, stay out of it.
		view = Nodes{Unreadable: true}
		s.Spec.TrafficDistribution, s.Annotations = nil, nil
		g.tag("nodes unreadable")
	case 1:
		view = Nodes{ByName: map[string]*corev1.Node{}}
		for _, name := range slices.Sorted(maps.Keys(nodes.ByName)) {
			if !g.one(3) {
				view.ByName[name] = nodes.ByName[name]
			}
		}
		g.tag("nodes incomplete")
	}
	in := Input{Service: s, Pods: pods, Nodes: view}
	in.Slices = g.live(in, nodes, o)
	c := randomCase{in: in, opts: o, dims: g.dims,
		desc: fmt.Sprintf("pods=%d slices=%d max=%d", len(pods), len(in.Slices), o.MaxEndpointsPerSlice)}
	c.tagLive()
	return c
}

// tagLive records what the live slices look like.
func (c *randomCase) tagLive() {
	groups := map[string]int{}
	for _, s := range filterOurs(c.in.Slices, c.in.Service, c.opts.ManagedBy) {
		k := string(s.AddressType) + portKey(s.Ports)
		if groups[k]++; groups[k] == 2 {
			c.dims["live: several slices in one port group (placement)"] = true
		}
		if len(s.Ports) > 1 && !portsInServiceOrder(s.Ports, c.in.Service) {
			c.dims["live: ports in upstream's hash order"] = true
		}
		for i := range s.Endpoints {
			if s.Endpoints[i].Hints != nil {
				c.dims["live: endpoints with hints"] = true
			}
		}
	}
}

func portsInServiceOrder(ps []discovery.EndpointPort, s *corev1.Service) bool {
	pos := map[string]int{}
	for i, p := range s.Spec.Ports {
		pos[p.Name] = i
	}
	for i := 1; i < len(ps); i++ {
		if pos[*ps[i].Name] < pos[*ps[i-1].Name] {
			return false
		}
	}
	return true
}

// dimensionReport prints case counts per dimension, one per line.
func dimensionReport(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s\n", counts[k], k)
	}
	return b.String()
}
