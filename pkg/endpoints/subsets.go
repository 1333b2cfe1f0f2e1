package endpoints

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// desiredSubsets is upstream syncService's loop over the Pods: one
// single-address subset per Pod and Service port, to be repacked.
func desiredSubsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	subsets := []corev1.EndpointSubset{}
	// One EndpointPort value per Service port, so equal ports share their
	// appProtocol pointer and Repack groups them as upstream does.
	var appProtocols []*string
	for i := range svc.Spec.Ports {
		var ap *string
		if p := svc.Spec.Ports[i].AppProtocol; p != nil {
			v := *p
			ap = &v
		}
		appProtocols = append(appProtocols, ap)
	}
	for _, pod := range pods {
		if pod == nil || pod.Namespace != svc.Namespace {
			continue
		}
		if r, _ := reconcile.PodExclusion(pod); r != "" {
			continue
		}
		if !svc.Spec.PublishNotReadyAddresses && pod.DeletionTimestamp != nil {
			continue
		}
		addr, ok := podAddress(svc, pod)
		if !ok {
			continue
		}
		ready := svc.Spec.PublishNotReadyAddresses || reconcile.IsPodReady(pod)
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				subsets = append(subsets, single(addr, nil, ready))
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, ok := reconcile.FindPort(pod, sp)
			if !ok {
				continue
			}
			port := corev1.EndpointPort{Name: sp.Name, Port: num, Protocol: sp.Protocol, AppProtocol: appProtocols[i]}
			subsets = append(subsets, single(addr, &port, ready))
		}
	}
	return subsets
}

func single(addr corev1.EndpointAddress, port *corev1.EndpointPort, ready bool) corev1.EndpointSubset {
	s := corev1.EndpointSubset{Ports: []corev1.EndpointPort{}}
	if port != nil {
		s.Ports = append(s.Ports, *port)
	}
	if ready {
		s.Addresses = []corev1.EndpointAddress{addr}
	} else {
		s.NotReadyAddresses = []corev1.EndpointAddress{addr}
	}
	return s
}

// podAddress is upstream podToEndpointAddressForService: the Pod's first IP
// of the Service's first family (inferred from the cluster IP, then the
// Pod IP, when ipFamilies is empty), with node, target and, when the Pod's
// subdomain names the Service, hostname.
func podAddress(svc *corev1.Service, pod *corev1.Pod) (corev1.EndpointAddress, bool) {
	wantV6 := false
	switch {
	case len(svc.Spec.IPFamilies) > 0:
		wantV6 = svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone:
		ip, ok := reconcile.ParseIPSloppy(svc.Spec.ClusterIP)
		wantV6 = ok && ip.Is6()
	default:
		ip, ok := reconcile.ParseIPSloppy(pod.Status.PodIP)
		wantV6 = ok && ip.Is6()
	}
	for _, pip := range pod.Status.PodIPs {
		ip, ok := reconcile.ParseIPSloppy(pip.IP)
		if !ok || ip.Is6() != wantV6 {
			continue
		}
		node := pod.Spec.NodeName
		a := corev1.EndpointAddress{
			IP:        ip.String(),
			NodeName:  &node,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		}
		if len(pod.Spec.Hostname) > 0 && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace {
			a.Hostname = pod.Spec.Hostname
		}
		return a, true
	}
	return corev1.EndpointAddress{}, false
}

// truncate is upstream truncateEndpoints: above MaxCapacity addresses, keep
// every ready address and share the rest among the subsets' not-ready ones
// in proportion (rounded up, in subset order), or, with more than
// MaxCapacity ready addresses, share MaxCapacity among the ready ones and
// drop every not-ready one. It reports whether anything was dropped.
func truncate(ep *corev1.Endpoints) bool {
	totalReady, totalNotReady := 0, 0
	for _, s := range ep.Subsets {
		totalReady += len(s.Addresses)
		totalNotReady += len(s.NotReadyAddresses)
	}
	if totalReady+totalNotReady <= MaxCapacity {
		return false
	}
	truncateReady := totalReady > MaxCapacity
	limit, total := MaxCapacity-totalReady, totalNotReady
	if truncateReady {
		limit, total = MaxCapacity, totalReady
	}
	left := limit
	for i := range ep.Subsets {
		s := ep.Subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		take := int(math.Ceil(float64(n) / float64(total) * float64(limit)))
		take = min(take, left)
		if truncateReady {
			s.Addresses = s.Addresses[:min(take, len(s.Addresses))]
			s.NotReadyAddresses = []corev1.EndpointAddress{}
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(take, len(s.NotReadyAddresses))]
			left -= len(s.NotReadyAddresses)
		}
		ep.Subsets[i] = s
	}
	return true
}
