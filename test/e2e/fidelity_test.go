package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// TestFidelity runs kube-controller-manager's EndpointSlice controller beside
// kubectl-slices on one cluster and requires both managers to publish the
// same endpoints for every scenario.
func TestFidelity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	dists := acceptedTrafficDistributions(t, cp)
	version, minor := serverVersion(t, cp), serverMinor(t, cp)
	for _, sc := range fidelityScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			ns := newNamespace(t, cp)
			svc := sc.service(ns)
			if d := svc.Spec.TrafficDistribution; d != nil && !contains(dists, *d) {
				t.Skipf("API server %s does not accept trafficDistribution %s", version, *d)
			}
			if why := controllerDifference(minor, false, svc, sc.pods); why != "" {
				t.Skipf("%s: known difference: %s", version, why)
			}
			mustService(t, cp, svc)
			mustPods(t, cp, ns, sc.pods...)
			compareManagers(t, cp, ns, svc.Name)
			if sc.then != nil {
				sc.then(t, cp, ns)
				compareManagers(t, cp, ns, svc.Name)
			}
		})
	}
}

// compareManagers syncs with the plugin, then waits for the controller to
// converge to the same endpoints (it works asynchronously) and fails with
// both states if it does not within 30 s.
func compareManagers(t *testing.T, cp *controlplane.ControlPlane, ns, svc string) {
	t.Helper()
	compareManagersBy(t, cp, ns, svc, canonical)
}

// compareManagersBy is compareManagers comparing what view makes of each
// manager's slices.
func compareManagersBy(t *testing.T, cp *controlplane.ControlPlane, ns, svc string, view func([]discovery.EndpointSlice) string) {
	t.Helper()
	// --force: where the controller is already current, sync would hold back.
	kubectl(t, cp, "slices", "sync", "svc/"+svc, "-n", ns, "--force").mustCode(t, 0)
	ours := view(listSlices(t, cp, ns, svc, oursLabel))
	var theirs string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		theirs = view(listSlices(t, cp, ns, svc, controllerLabel))
		if theirs == ours {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("kubectl-slices and kube-controller-manager differ\n--- kubectl-slices\n%s--- kube-controller-manager\n%s", ours, theirs)
}

type scenario struct {
	name    string
	service func(ns string) *corev1.Service
	pods    []controlplane.PodSpec
	then    func(t *testing.T, cp *controlplane.ControlPlane, ns string)
}

func pods(app string, n, base int, mod func(i int, p *controlplane.PodSpec)) []controlplane.PodSpec {
	out := make([]controlplane.PodSpec, n)
	for i := range out {
		out[i] = podSpec(app, i, base)
		if mod != nil {
			mod(i, &out[i])
		}
	}
	return out
}

func fidelityScenarios() []scenario {
	plain := func(name string, mods ...func(*corev1.Service)) func(string) *corev1.Service {
		return func(ns string) *corev1.Service { return service(ns, name, mods...) }
	}
	mixed := func(i int, p *controlplane.PodSpec) {
		switch i % 6 {
		case 1:
			p.Ready = false
		case 2:
			p.Terminating = true
		case 3:
			p.Terminating, p.Ready = true, false
		case 4:
			p.IPs = nil // no IP yet
		case 5:
			p.Phase = corev1.PodSucceeded
		}
	}
	return []scenario{
		{name: "ready, not ready and terminating", service: plain("web"), pods: pods("web", 12, 20, mixed)},
		{name: "publishNotReadyAddresses", service: plain("web", func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pods: pods("web", 12, 21, mixed)},
		{name: "named and numeric ports in several groups", service: plain("web", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				controlplane.ServicePort("http", 80, intstr.FromString("http")),
				controlplane.ServicePort("metrics", 9090, intstr.FromInt32(9100)),
				{Name: "dns", Port: 53, TargetPort: intstr.FromString("dns"), Protocol: corev1.ProtocolUDP},
			}
		}), pods: pods("web", 9, 22, func(i int, p *controlplane.PodSpec) {
			switch i % 3 {
			case 1:
				p.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8081, Protocol: corev1.ProtocolTCP},
					{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP}}
			case 2:
				p.Ports = nil
				p.SidecarPorts = []corev1.ContainerPort{{Name: "http", ContainerPort: 8082, Protocol: corev1.ProtocolTCP}}
			}
		})},
		{name: "headless with hostnames", service: plain("web", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }),
			pods: pods("web", 4, 23, func(i int, p *controlplane.PodSpec) {
				p.Hostname = fmt.Sprintf("web-%d", i)
				if i%2 == 0 {
					p.Subdomain = "web"
				}
			})},
		{name: "dual-stack", service: plain("web", func(s *corev1.Service) {
			policy := corev1.IPFamilyPolicyRequireDualStack
			s.Spec.IPFamilyPolicy = &policy
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
		}), pods: pods("web", 4, 24, func(i int, p *controlplane.PodSpec) {
			if i != 3 {
				p.IPs = append(p.IPs, fmt.Sprintf("fd00:24::%x", i+1))
			}
		})},
		{name: "IPv6 only", service: plain("web", func(s *corev1.Service) {
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		}), pods: pods("web", 3, 25, func(i int, p *controlplane.PodSpec) {
			p.IPs = []string{fmt.Sprintf("fd00:25:0:0:0:0:0:%x", i+1), p.IPs[0]}
		})},
		{name: "more than 100 endpoints", service: plain("web"), pods: pods("web", 150, 26, nil)},
		{name: "more than 1000 endpoints", service: plain("web"), pods: pods("web", 1010, 27, nil)},
		{name: "pod on a missing node", service: plain("web"), pods: pods("web", 3, 28, func(i int, p *controlplane.PodSpec) {
			if i == 0 {
				p.Node = "node-gone"
			}
		})},
		{name: "PreferSameZone", service: plain("web", func(s *corev1.Service) {
			s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferSameZone)
		}), pods: pods("web", 6, 29, mixed)},
		{name: "PreferSameNode", service: plain("web", func(s *corev1.Service) {
			s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferSameNode)
		}), pods: pods("web", 6, 30, mixed)},
		{name: "a pod deleted", service: plain("web"), pods: pods("web", 5, 31, nil),
			then: func(t *testing.T, cp *controlplane.ControlPlane, ns string) {
				zero := int64(0)
				if err := cp.Admin.CoreV1().Pods(ns).Delete(context.Background(), "web-2", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a label change moves a pod out", service: plain("web"), pods: pods("web", 5, 32, nil),
			then: func(t *testing.T, cp *controlplane.ControlPlane, ns string) {
				p, err := cp.Admin.CoreV1().Pods(ns).Get(context.Background(), "web-1", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				p.Labels["app"] = "elsewhere"
				if _, err := cp.Admin.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "no pods: placeholder", service: plain("web"), pods: nil},
	}
}

func ptr[T any](v T) *T { return &v }
