package reconcile

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A second, deliberately naive reading of upstream's rules, written from
// ShouldPodBeInEndpoints, the Node lookup of reconcileByAddressType,
// podToEndpoint, getEndpointAddresses, getEndpointPorts and FindPort. The
// fuzz target checks the planner's end state against it, so its invariants
// do not depend on the planner's own bookkeeping.

// wantEP is an endpoint the rules publish: one Pod address of one type.
type wantEP struct {
	pod   *corev1.Pod
	addr  string
	ports string // ruleGroupKey of the Pod's ports
	zone  *string
	// zoneKnown is false when the Nodes could not be read: the zone then
	// comes from the live slices.
	zoneKnown bool
}

// ruleServedTypes: ipFamilies, else the clusterIP's family, else (headless
// without families) both.
func ruleServedTypes(s *corev1.Service) map[discovery.AddressType]bool {
	out := map[discovery.AddressType]bool{}
	for _, f := range s.Spec.IPFamilies {
		if f == corev1.IPv4Protocol {
			out[discovery.AddressTypeIPv4] = true
		} else if f == corev1.IPv6Protocol {
			out[discovery.AddressTypeIPv6] = true
		}
	}
	if len(out) > 0 {
		return out
	}
	switch ip := s.Spec.ClusterIP; {
	case ip == "" || ip == corev1.ClusterIPNone:
		out[discovery.AddressTypeIPv4], out[discovery.AddressTypeIPv6] = true, true
	case strings.Contains(ip, ":"):
		out[discovery.AddressTypeIPv6] = true
	default:
		out[discovery.AddressTypeIPv4] = true
	}
	return out
}

// ruleAddress canonicalises a Pod IP as ParseIPSloppy + String would: IPv4
// octets may carry leading zeros, IPv4-mapped IPv6 is IPv4.
func ruleAddress(s string) (string, discovery.AddressType, bool) {
	if strings.Contains(s, ":") {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return "", "", false
		}
		if ip.Is4In6() {
			return ip.Unmap().String(), discovery.AddressTypeIPv4, true
		}
		return ip.String(), discovery.AddressTypeIPv6, true
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return "", "", false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 {
			return "", "", false
		}
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "."), discovery.AddressTypeIPv4, true
}

// rulePortsKey lists the Pod's resolved ports as an order-free text.
func rulePortsKey(s *corev1.Service, p *corev1.Pod) string {
	var out []string
	for _, sp := range s.Spec.Ports {
		num, ok := int32(0), false
		if sp.TargetPort.Type == intstr.Int {
			num, ok = sp.TargetPort.IntVal, true
		} else {
			var cs []corev1.Container
			cs = append(cs, p.Spec.Containers...)
			for _, c := range p.Spec.InitContainers {
				if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
					cs = append(cs, c)
				}
			}
			for _, c := range cs {
				for _, cp := range c.Ports {
					if !ok && cp.Name == sp.TargetPort.StrVal && cp.Protocol == sp.Protocol {
						num, ok = cp.ContainerPort, true
					}
				}
			}
		}
		if ok {
			app := "-"
			if sp.AppProtocol != nil {
				app = *sp.AppProtocol
			}
			out = append(out, fmt.Sprintf("%s/%d/%s/%s", sp.Name, num, sp.Protocol, app))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// sliceGroupKey is rulePortsKey for the ports written on a slice.
func sliceGroupKey(ps []discovery.EndpointPort) string {
	var out []string
	for _, p := range ps {
		app := "-"
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		out = append(out, fmt.Sprintf("%s/%d/%s/%s", *p.Name, *p.Port, *p.Protocol, app))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// ruleEndpoints are the endpoints the rules publish, keyed by address type,
// Pod name and address.
func ruleEndpoints(in Input) map[string]wantEP {
	s := in.Service
	served := ruleServedTypes(s)
	out := map[string]wantEP{}
	for _, p := range in.Pods {
		matches := p.Namespace == s.Namespace
		for k, v := range s.Spec.Selector {
			matches = matches && p.Labels[k] == v
		}
		if !matches || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded ||
			(p.Status.PodIP == "" && len(p.Status.PodIPs) == 0) {
			continue
		}
		w := wantEP{pod: p, ports: rulePortsKey(s, p), zoneKnown: true}
		if n, ok := in.Nodes.ByName[p.Spec.NodeName]; ok {
			if z := n.Labels[corev1.LabelTopologyZone]; z != "" {
				w.zone = &z
			}
		} else if in.Nodes.Unreadable {
			w.zoneKnown = false
		} else if !s.Spec.PublishNotReadyAddresses {
			continue // Node not found
		}
		for _, ip := range p.Status.PodIPs {
			if addr, at, ok := ruleAddress(ip.IP); ok && served[at] {
				w.addr = addr
				out[string(at)+"|"+p.Name+"|"+addr] = w
			}
		}
	}
	return out
}

// checkRuleEndpoint compares a published endpoint with what the rules say
// its Pod publishes, and returns what differs.
func checkRuleEndpoint(s *corev1.Service, w wantEP, ep *discovery.Endpoint) string {
	p := w.pod
	serving := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			serving = c.Status == corev1.ConditionTrue
			break
		}
	}
	term := p.DeletionTimestamp != nil
	ready := s.Spec.PublishNotReadyAddresses || (serving && !term)
	var host *string
	if p.Spec.Hostname != "" && p.Spec.Subdomain == s.Name && p.Namespace == s.Namespace {
		host = &p.Spec.Hostname
	}
	var node *string
	if p.Spec.NodeName != "" {
		node = &p.Spec.NodeName
	}
	switch {
	case len(ep.Addresses) != 1 || ep.Addresses[0] != w.addr:
		return fmt.Sprintf("addresses %v, want [%s]", ep.Addresses, w.addr)
	case !boolIs(ep.Conditions.Ready, ready), !boolIs(ep.Conditions.Serving, serving), !boolIs(ep.Conditions.Terminating, term):
		return fmt.Sprintf("conditions %s, want ready=%v serving=%v terminating=%v", canonicalEndpoint(ep), ready, serving, term)
	case !strPtrEqual(ep.Hostname, host):
		return fmt.Sprintf("hostname %s, want %v", canonicalEndpoint(ep), host)
	case !strPtrEqual(ep.NodeName, node):
		return fmt.Sprintf("nodeName %s, want %v", canonicalEndpoint(ep), node)
	case w.zoneKnown && !strPtrEqual(ep.Zone, w.zone):
		return fmt.Sprintf("zone %s, want %v", canonicalEndpoint(ep), w.zone)
	case ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" || ep.TargetRef.Namespace != p.Namespace || ep.TargetRef.UID != p.UID:
		return fmt.Sprintf("targetRef %s, want Pod %s/%s %s", canonicalEndpoint(ep), p.Namespace, p.Name, p.UID)
	}
	return ""
}

func boolIs(b *bool, v bool) bool { return b != nil && *b == v }
