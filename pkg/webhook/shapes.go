package webhook

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// group is Pods the planner necessarily judges alike for the findings, and
// the one of them it is asked about.
type group struct {
	rep     *corev1.Pod
	members names
}

// names are Pod names in parts, as the cache shares them: a group of 5,000
// Pods is counted and merged without copying its names.
type names [][]string

func (n names) len() int {
	c := 0
	for _, part := range n {
		c += len(part)
	}
	return c
}

// shapes groups Pods by what decides the findings (cluster.AppendPodShape:
// whether the planner can include them at all, the address families of
// their IPs, the ports they declare, their controller). Pods of one
// workload share all of it, so a Service over 5,000 replicas is planned
// over one or a few representatives instead of 5,000 Pods, which keeps an
// admission within milliseconds; the planner stays the only judge.
func shapes(pods []*corev1.Pod) []*group {
	byKey := map[string]*group{}
	var out []*group
	var buf []byte
	for _, p := range pods {
		buf = cluster.AppendPodShape(buf[:0], p)
		// The lookup converts without allocating; a key string is made
		// only for a new group.
		g := byKey[string(buf)]
		if g == nil {
			g = &group{rep: p}
			byKey[string(buf)] = g
			out = append(out, g)
		}
		// Pods come in any order: the first by name represents the group,
		// so the answer does not depend on the order.
		if p.Name < g.rep.Name {
			g.rep = p
		}
		if g.members == nil {
			g.members = names{nil}
		}
		g.members[0] = append(g.members[0], p.Name)
	}
	return out
}
