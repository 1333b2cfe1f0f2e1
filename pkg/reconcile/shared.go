package reconcile

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// The helpers below let the sibling planners (pkg/mirror for mirrored
// slices, pkg/endpoints for v1 Endpoints) share this package's reading of
// Pods, ports and addresses, so "is this Pod an endpoint" has one
// implementation.

// ServiceMirrored is the verdict of a selectorless Service whose slices are
// mirrored from its Endpoints object (pkg/mirror plans those).
const ServiceMirrored Reason = "Mirrored"

// IsPodReady is upstream's IsPodReady: the first Ready condition is True.
func IsPodReady(pod *corev1.Pod) bool { return isPodReady(pod) }

// PodExclusion returns why a Pod can never be an endpoint (terminal phase,
// no IP), or "". Terminating Pods are not excluded here.
func PodExclusion(pod *corev1.Pod) (Reason, string) { return podExclusion(pod) }

// FindPort resolves a Service port's targetPort in a Pod as upstream FindPort.
func FindPort(pod *corev1.Pod, svcPort *corev1.ServicePort) (int32, bool) {
	return findPort(pod, svcPort)
}

// ParseIPSloppy parses an IP as k8s.io/utils/net.ParseIPSloppy does, with
// IPv4-mapped IPv6 addresses taken as IPv4.
func ParseIPSloppy(s string) (netip.Addr, bool) { return parseIPSloppy(s) }

// IsServiceIPSet is false for headless Services (clusterIP None or empty).
func IsServiceIPSet(svc *corev1.Service) bool { return isServiceIPSet(svc) }

// SetLive records the live slices a plan made elsewhere was computed from,
// so Live (and the diff printer) can show them beside the planned ones.
func (p *Plan) SetLive(slices []*discovery.EndpointSlice) {
	p.live = make(map[string]*discovery.EndpointSlice, len(slices))
	for _, s := range slices {
		p.live[s.Name] = s
	}
}
