package proxyexpect

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	utilnet "k8s.io/utils/net"
)

// For returns what kube-proxy on node should program for svc, given the
// EndpointSlices in the API. slices may hold any slices: only those
// kube-proxy files under svc count (its namespace, its
// kubernetes.io/service-name label, not labelled headless, of the family's
// address type). For neither modifies its inputs.
func For(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, node Node) Expected {
	if why := skipped(svc); why != "" {
		return Expected{Skipped: why}
	}
	var out Expected
	for _, fam := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
		ip := clusterIPOf(svc, fam)
		if ip == "" {
			continue
		}
		out.Families = append(out.Families, familyOf(svc, fam, ip, slices, node))
	}
	return out
}

// skipped says why kube-proxy programs nothing for svc, or "". Its Service
// informer lists only Services without the service-proxy-name label and
// with a cluster IP other than None, and ShouldSkipService drops those
// without a cluster IP and ExternalName Services.
func skipped(svc *corev1.Service) string {
	if name, ok := svc.Labels[LabelServiceProxyName]; ok {
		return fmt.Sprintf("the Service is labelled %s=%s: another service proxy serves it", LabelServiceProxyName, name)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return "the Service is headless (no cluster IP): DNS, not kube-proxy, serves it"
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return "the Service is of type ExternalName: DNS, not kube-proxy, serves it"
	}
	return ""
}

// clusterIPOf is the Service's cluster IP of the family, "" for none, as
// upstream's GetClusterIPByFamily: spec.clusterIPs by spec.ipFamilies, or,
// for a Service written before dual-stack (no ipFamilies), spec.clusterIP
// when it is of the family.
func clusterIPOf(svc *corev1.Service, fam corev1.IPFamily) string {
	if len(svc.Spec.IPFamilies) == 0 {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			return ""
		}
		if (fam == corev1.IPv6Protocol) == utilnet.IsIPv6String(ip) {
			return ip
		}
		return ""
	}
	for i, f := range svc.Spec.IPFamilies {
		if f == fam && i < len(svc.Spec.ClusterIPs) {
			return svc.Spec.ClusterIPs[i]
		}
	}
	return ""
}

// familyOf builds the family's ports from the Service and the family's
// endpoint set.
func familyOf(svc *corev1.Service, fam corev1.IPFamily, clusterIP string, slices []*discoveryv1.EndpointSlice, node Node) Family {
	out := Family{Family: fam, ClusterIP: clusterIP}
	byPort := endpointsByPort(svc, fam, slices, node)
	out.LocalReady = localReady(byPort)
	pol := policiesOf(svc)
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		p := Port{Name: sp.Name, Protocol: sp.Protocol, Port: sp.Port, NodePort: sp.NodePort}
		p.ExternallyAccessible = sp.NodePort != 0 || hasIPOf(fam, svc.Spec.ExternalIPs) || hasIPOf(fam, vipsOf(svc))
		p.UsesCluster = !pol.internalLocal || p.ExternallyAccessible
		p.UsesLocal = pol.internalLocal || (pol.externalLocal && p.ExternallyAccessible)
		categorize(&p, byPort[portKey{sp.Name, sp.Protocol}], node)
		out.Ports = append(out.Ports, p)
	}
	// The health check server registers Services from the service port
	// map, so a Service without ports has none.
	if pol.healthCheck && len(out.Ports) > 0 {
		out.HealthCheckNodePort = svc.Spec.HealthCheckNodePort
	}
	return out
}

type policies struct {
	internalLocal bool
	externalLocal bool
	healthCheck   bool
}

// policiesOf reads the traffic policies as upstream's apiservice helpers:
// externalTrafficPolicy counts only for a Service reachable from outside
// by its type (NodePort, LoadBalancer, or ClusterIP with external IPs),
// and only a LoadBalancer Service with it Local gets a health check.
func policiesOf(svc *corev1.Service) policies {
	t := svc.Spec.Type
	external := t == corev1.ServiceTypeLoadBalancer || t == corev1.ServiceTypeNodePort ||
		(t == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
	itp := svc.Spec.InternalTrafficPolicy
	p := policies{
		internalLocal: itp != nil && *itp == corev1.ServiceInternalTrafficPolicyLocal,
		externalLocal: external && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal,
	}
	p.healthCheck = t == corev1.ServiceTypeLoadBalancer && p.externalLocal
	return p
}

// vipsOf lists the load balancer ingress IPs kube-proxy programs: those in
// VIP mode (the default when ipMode is unset), not the Proxy mode ones.
func vipsOf(svc *corev1.Service) []string {
	var out []string
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" && (ing.IPMode == nil || *ing.IPMode == corev1.LoadBalancerIPModeVIP) {
			out = append(out, ing.IP)
		}
	}
	return out
}

// hasIPOf says whether ips holds a valid IP of the family; kube-proxy
// drops the others (an external IP is not always validated). External IPs
// count as the AllowServiceExternalIPs gate is by default, on.
func hasIPOf(fam corev1.IPFamily, ips []string) bool {
	for _, s := range ips {
		ip := utilnet.ParseIPSloppy(s)
		if ip == nil {
			continue
		}
		if (ip.To4() == nil) == (fam == corev1.IPv6Protocol) {
			return true
		}
	}
	return false
}
