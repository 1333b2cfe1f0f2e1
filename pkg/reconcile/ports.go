package reconcile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// findPort resolves a Service port's targetPort in a Pod, as upstream
// FindPort: a number is taken as is; a name is looked up by name and protocol
// in the containers, then in restartable (sidecar) init containers.
func findPort(pod *corev1.Pod, svcPort *corev1.ServicePort) (int32, bool) {
	switch svcPort.TargetPort.Type {
	case intstr.Int:
		return int32(svcPort.TargetPort.IntValue()), true
	case intstr.String:
		name := svcPort.TargetPort.StrVal
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == name && p.Protocol == svcPort.Protocol {
					return p.ContainerPort, true
				}
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				continue
			}
			for _, p := range c.Ports {
				if p.Name == name && p.Protocol == svcPort.Protocol {
					return p.ContainerPort, true
				}
			}
		}
	}
	return 0, false
}

// endpointPorts resolves every Service port for a Pod, in Service order, and
// returns a note for each port that did not resolve (upstream skips those
// ports for that Pod, which puts it in a port group of its own).
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) ([]discovery.EndpointPort, []Note) {
	ports := []discovery.EndpointPort{}
	if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return ports, nil
	}
	var notes []Note
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		num, ok := findPort(pod, sp)
		if !ok {
			notes = append(notes, Note{Reason: PortNotFound, Message: fmt.Sprintf(
				"service port %s: named target port %q (%s) not found in any container", portLabel(sp), sp.TargetPort.StrVal, sp.Protocol)})
			continue
		}
		name, protocol := sp.Name, sp.Protocol
		ports = append(ports, discovery.EndpointPort{
			Name: &name, Port: &num, Protocol: &protocol, AppProtocol: copyStringPtr(sp.AppProtocol),
		})
	}
	return ports, notes
}

// portCache shares one resolved port list among the Pods that resolve the
// Service's ports to the same numbers (nearly always all of them), so each
// Pod costs a few lookups instead of building and hashing its own list.
type portCache struct {
	svc     *corev1.Service
	buf     []byte
	entries map[string]resolvedPorts
}

type resolvedPorts struct {
	ports []discovery.EndpointPort
	key   string
	notes []Note
}

func newPortCache(svc *corev1.Service) *portCache {
	return &portCache{svc: svc, entries: map[string]resolvedPorts{}}
}

// resolve returns the Pod's ports, their group key and the notes for ports
// that did not resolve. The results are shared: callers must not modify them.
func (c *portCache) resolve(pod *corev1.Pod) ([]discovery.EndpointPort, string, []Note) {
	c.buf = c.buf[:0]
	for i := range c.svc.Spec.Ports {
		num, ok := findPort(pod, &c.svc.Spec.Ports[i])
		if !ok {
			c.buf = append(c.buf, 0)
			continue
		}
		c.buf = append(c.buf, 1, byte(num>>24), byte(num>>16), byte(num>>8), byte(num))
	}
	if r, ok := c.entries[string(c.buf)]; ok {
		return r.ports, r.key, r.notes
	}
	ports, notes := endpointPorts(c.svc, pod)
	r := resolvedPorts{ports: ports, key: portKey(ports), notes: notes}
	c.entries[string(c.buf)] = r
	return r.ports, r.key, r.notes
}

func portLabel(sp *corev1.ServicePort) string {
	if sp.Name != "" {
		return fmt.Sprintf("%q (%d)", sp.Name, sp.Port)
	}
	return strconv.Itoa(int(sp.Port))
}

func copyStringPtr(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}

// portKey groups slices by their ports irrespective of order, like upstream
// NewPortMapKey: nil and empty are the same group, and a nil field differs
// from a field pointing at its zero value.
func portKey(ports []discovery.EndpointPort) string {
	if len(ports) == 0 {
		return ""
	}
	parts := make([]string, len(ports))
	for i := range ports {
		p := &ports[i]
		var b strings.Builder
		writeOptString(&b, p.Name)
		b.WriteByte('|')
		if p.Port != nil {
			b.WriteString(strconv.Itoa(int(*p.Port)))
		} else {
			b.WriteByte('-')
		}
		b.WriteByte('|')
		if p.Protocol != nil {
			writeOptString(&b, (*string)(p.Protocol))
		} else {
			b.WriteByte('-')
		}
		b.WriteByte('|')
		writeOptString(&b, p.AppProtocol)
		parts[i] = b.String()
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

func writeOptString(b *strings.Builder, s *string) {
	if s == nil {
		b.WriteByte('-')
		return
	}
	b.WriteByte('=')
	b.WriteString(strconv.Quote(*s))
}

// PortsKey identifies a set of ports irrespective of order: slices with equal
// keys belong to the same port group.
func PortsKey(ports []discovery.EndpointPort) string { return portKey(ports) }
