package e2e

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// serverMinor is the API server's minor version (36 for v1.36.3). `make
// compat` runs the suite against v1.31 to v1.36.
func serverMinor(t testing.TB, cp *controlplane.ControlPlane) int {
	t.Helper()
	v, err := cp.Admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	minor, err := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	if err != nil {
		t.Fatalf("server version %s: minor %q: %v", v.GitVersion, v.Minor, err)
	}
	return minor
}

// controllerDifference says how kube-controller-manager v1.<minor>'s
// EndpointSlice controller (or, with endpoints set, its Endpoints controller)
// publishes other endpoints than kubectl-slices, which plans as the current
// release does, for this Service and these Pods; "" where the two agree. The
// README's support table lists the same rules, found by `make compat`:
//   - a named port that only a sidecar (a restartable init container)
//     declares is resolved by the EndpointSlice controller from v1.33 on, by
//     the Endpoints controller from v1.32 on;
//   - before v1.33, Pod IPs are copied as written, not in canonical form;
//   - before v1.33, trafficDistribution hints a ready endpoint without a
//     zone to the zone "" instead of leaving it unhinted.
func controllerDifference(minor int, endpoints bool, svc *corev1.Service, pods []controlplane.PodSpec) string {
	sidecarsSince := 33
	if endpoints {
		sidecarsSince = 32
	}
	if minor >= sidecarsSince && minor >= 33 {
		return ""
	}
	zoned := map[string]bool{}
	for _, n := range testNodes {
		zoned[n.Name] = n.Zone != ""
	}
	for _, p := range pods {
		if minor < sidecarsSince && sidecarOnlyNamedPort(svc, p) {
			return fmt.Sprintf("kube-controller-manager before v1.%d does not resolve a named port that only a sidecar declares", sidecarsSince)
		}
		for _, ip := range p.IPs {
			if parsed := net.ParseIP(ip); minor < 33 && parsed != nil && parsed.String() != ip {
				return "kube-controller-manager before v1.33 copies a Pod IP as written (" + ip + "), not in canonical form"
			}
		}
		ready := svc.Spec.PublishNotReadyAddresses || (p.Ready && !p.Terminating)
		running := p.Phase != corev1.PodSucceeded && p.Phase != corev1.PodFailed
		if !endpoints && minor < 33 && svc.Spec.TrafficDistribution != nil && !zoned[p.Node] && len(p.IPs) > 0 && ready && running {
			return "kube-controller-manager before v1.33 hints a ready endpoint without a zone to the zone \"\" under trafficDistribution"
		}
	}
	return ""
}

// canonicalForOldMirroring rewrites ep's addresses in canonical form when the
// server is older than v1.33, whose mirroring controller copies an address as
// written (fd00:50:0::3) where kubectl-slices, like v1.33 and later, writes
// it canonical (fd00:50::3). The rest of the random input is still compared.
func canonicalForOldMirroring(t testing.TB, minor int, ep *corev1.Endpoints) {
	if minor >= 33 {
		return
	}
	for i := range ep.Subsets {
		for _, list := range [][]corev1.EndpointAddress{ep.Subsets[i].Addresses, ep.Subsets[i].NotReadyAddresses} {
			for j := range list {
				if parsed := net.ParseIP(list[j].IP); parsed != nil && parsed.String() != list[j].IP {
					t.Logf("known difference before v1.33: the mirroring controller copies %s as written; the input uses %s", list[j].IP, parsed)
					list[j].IP = parsed.String()
				}
			}
		}
	}
}

func sidecarOnlyNamedPort(svc *corev1.Service, p controlplane.PodSpec) bool {
	for _, sp := range svc.Spec.Ports {
		if sp.TargetPort.StrVal == "" {
			continue
		}
		declared := func(ports []corev1.ContainerPort) bool {
			for _, cp := range ports {
				if cp.Name == sp.TargetPort.StrVal && cp.Protocol == sp.Protocol {
					return true
				}
			}
			return false
		}
		if !declared(p.Ports) && declared(p.SidecarPorts) {
			return true
		}
	}
	return false
}
