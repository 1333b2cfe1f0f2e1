package webhook

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// group is Pods the planner necessarily judges alike for the findings, and
// the one of them it is asked about.
type group struct {
	rep     *corev1.Pod
	members []string
}

// shapes groups Pods by what decides the findings: whether the planner can
// include them at all (terminal phase, an IP), the address families of
// their IPs, the ports they declare (named target ports resolve against
// them) and their controller (MixedOwners tells owners apart). Pods of one
// workload share all of it, so a Service over 5,000 replicas is planned
// over one or a few representatives instead of 5,000 Pods, which keeps an
// admission within milliseconds; the planner stays the only judge.
func shapes(pods []*corev1.Pod) []*group {
	byKey := map[string]*group{}
	var out []*group
	var buf []byte
	for _, p := range pods {
		buf = appendShapeKey(buf[:0], p)
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
		g.members = append(g.members, p.Name)
	}
	return out
}

func appendShapeKey(b []byte, p *corev1.Pod) []byte {
	for i := range p.OwnerReferences {
		if ref := &p.OwnerReferences[i]; ref.Controller != nil && *ref.Controller {
			b = append(b, ref.Kind...)
			b = append(b, '/')
			b = append(b, ref.Name...)
			break
		}
	}
	b = append(b, '|')
	b = append(b, p.Status.Phase...)
	b = append(b, '|')
	if p.Status.PodIP != "" {
		b = append(b, 'i')
	}
	// The planner reads status.podIPs for addresses; a colon tells the
	// families apart (an IPv4-mapped IPv6 address, which the planner counts
	// as IPv4, only splits a group needlessly).
	for _, ip := range p.Status.PodIPs {
		if strings.Contains(ip.IP, ":") {
			b = append(b, '6')
		} else {
			b = append(b, '4')
		}
	}
	b = append(b, '|')
	b = appendPorts(b, p.Spec.Containers, false)
	return appendPorts(b, p.Spec.InitContainers, true)
}

func appendPorts(b []byte, cs []corev1.Container, init bool) []byte {
	for _, c := range cs {
		if init {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				b = append(b, "s:"...)
			} else {
				b = append(b, "x:"...)
			}
		}
		for _, cp := range c.Ports {
			b = append(b, cp.Name...)
			b = append(b, '=')
			b = strconv.AppendInt(b, int64(cp.ContainerPort), 10)
			b = append(b, cp.Protocol...)
			b = append(b, ',')
		}
		b = append(b, ';')
	}
	return b
}
