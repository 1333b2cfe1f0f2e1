package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// TestFidelityRandomServices compares kubectl-slices with the cluster's own
// kube-controller-manager on random Services and Pods: ports named and
// numeric, TCP and UDP, headless, publishNotReadyAddresses, every
// trafficDistribution the API server accepts, and Pods ready, not ready,
// terminating, finished, without an IP or on a missing node. The seed is
// logged; KUBECTL_SLICES_FIDELITY_SEED replays one, and
// KUBECTL_SLICES_FIDELITY_SERVICES sets how many Services (default 20).
func TestFidelityRandomServices(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KUBECTL_SLICES_FIDELITY_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("KUBECTL_SLICES_FIDELITY_SEED=%q: %v", s, err)
		}
	}
	n := 20
	if s := os.Getenv("KUBECTL_SLICES_FIDELITY_SERVICES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("KUBECTL_SLICES_FIDELITY_SERVICES=%q: want a positive count", s)
		}
	}
	t.Logf("seed %d (KUBECTL_SLICES_FIDELITY_SEED=%d replays it), %d Services", seed, seed, n)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	dists := acceptedTrafficDistributions(t, cp)
	version, minor := serverVersion(t, cp), serverMinor(t, cp)
	t.Logf("API server %s accepts trafficDistribution %v", version, dists)
	rng := rand.New(rand.NewPCG(seed, seed>>32|1))
	ns := newNamespace(t, cp)
	for i := range n {
		svc, pods := randomService(rng, ns, i, dists)
		t.Run(svc.Name, func(t *testing.T) {
			if why := controllerDifference(minor, false, svc, pods); why != "" {
				t.Skipf("%s: known difference: %s", version, why)
			}
			mustService(t, cp, svc)
			mustPods(t, cp, ns, pods...)
			compareManagersBy(t, cp, ns, svc.Name, canonicalWithEndpoints)
		})
	}
}

// randomService is Service number i with its Pods; Pod IPs are 10.100+i.x.y
// (and fd00:100+i::y), so no two Services share an address.
func randomService(rng *rand.Rand, ns string, i int, dists []string) (*corev1.Service, []controlplane.PodSpec) {
	name := fmt.Sprintf("svc-%02d", i)
	svc := service(ns, name)
	// Ports: one to three, each numeric or named, TCP or UDP.
	svc.Spec.Ports = nil
	for p := range 1 + rng.IntN(3) {
		proto := corev1.ProtocolTCP
		if rng.IntN(4) == 0 {
			proto = corev1.ProtocolUDP
		}
		target := intstr.FromInt32(int32(8000 + p))
		if rng.IntN(2) == 0 {
			target = intstr.FromString(fmt.Sprintf("p%d", p))
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("port-%d", p), Port: int32(80 + p),
			TargetPort: target, Protocol: proto})
	}
	svc.Spec.PublishNotReadyAddresses = rng.IntN(4) == 0
	if rng.IntN(5) == 0 {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	dual := rng.IntN(4) == 0
	if dual {
		policy := corev1.IPFamilyPolicyPreferDualStack
		svc.Spec.IPFamilyPolicy = &policy
	}
	if len(dists) > 0 && rng.IntN(3) == 0 {
		svc.Spec.TrafficDistribution = ptr(dists[rng.IntN(len(dists))])
	}
	pods := make([]controlplane.PodSpec, rng.IntN(16))
	for j := range pods {
		p := podSpec(name, j, 0)
		p.IPs = []string{fmt.Sprintf("10.%d.%d.%d", 100+i/250, i%250, j+1)}
		if dual && rng.IntN(3) != 0 {
			p.IPs = append(p.IPs, fmt.Sprintf("fd00:%x::%x", 100+i, j+1))
		}
		p.Node = testNodes[rng.IntN(len(testNodes))].Name
		p.Ports = nil
		for q := range svc.Spec.Ports {
			// Some Pods lack a named port the Service targets.
			if rng.IntN(5) != 0 {
				p.Ports = append(p.Ports, corev1.ContainerPort{Name: fmt.Sprintf("p%d", q), ContainerPort: int32(9000 + 10*q + rng.IntN(2)),
					Protocol: svc.Spec.Ports[q].Protocol})
			}
		}
		switch rng.IntN(10) {
		case 0:
			p.Ready = false
		case 1:
			p.Terminating = true
		case 2:
			p.Terminating, p.Ready = true, false
		case 3:
			p.IPs = nil
		case 4:
			p.Phase = corev1.PodSucceeded
		case 5:
			p.Node = "node-gone"
		}
		if svc.Spec.ClusterIP == corev1.ClusterIPNone && rng.IntN(2) == 0 {
			p.Hostname, p.Subdomain = p.Name, name
		}
		pods[j] = p
	}
	return svc, pods
}

// acceptedTrafficDistributions are the trafficDistribution values the API
// server keeps on a server-side dry-run create: an older server refuses the
// newer values, or drops them where a feature gate is off.
func acceptedTrafficDistributions(t testing.TB, cp *controlplane.ControlPlane) []string {
	t.Helper()
	var out []string
	for _, d := range []string{corev1.ServiceTrafficDistributionPreferClose,
		corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode} {
		svc := service("default", "probe-traffic-distribution", func(s *corev1.Service) { s.Spec.TrafficDistribution = ptr(d) })
		got, err := cp.Admin.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && got.Spec.TrafficDistribution != nil && *got.Spec.TrafficDistribution == d {
			out = append(out, d)
		}
	}
	return out
}

// serverVersion is the API server's gitVersion.
func serverVersion(t testing.TB, cp *controlplane.ControlPlane) string {
	t.Helper()
	v, err := cp.Admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v.GitVersion
}

// canonicalWithEndpoints is canonical without the slices that hold no
// endpoint. Whether the controller keeps an empty placeholder depends on
// the order it saw the Service and its Pods in: a placeholder made before
// the Pods stays while its port group has members without an address of
// its type, and is recycled into another group's slice if it synced before
// such a Pod came. One-shot sync sees them all at once. Both ends are
// upstream's fixed points (the differential test compares the planner with
// k8s.io/endpointslice from the same state, placeholders included, and the
// fixed fidelity scenarios pin the placeholders of Services without Pods).
func canonicalWithEndpoints(slices []discovery.EndpointSlice) string {
	var kept []discovery.EndpointSlice
	for _, s := range slices {
		if len(s.Endpoints) > 0 {
			kept = append(kept, s)
		}
	}
	return canonical(kept)
}
