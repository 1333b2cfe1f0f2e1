package explain

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// versionCase is a Service and Pods on node-a (zone z1) and node-bare (no
// zone label), planned as the current release does.
type versionCase struct {
	name string
	svc  func(*corev1.Service)
	pods []*corev1.Pod
	// want is the difference noted on v1.31 and v1.32, "" for none.
	want VersionDifference
	// pods the note names.
	wantPods []string
}

func restartable(name string, ports ...corev1.ContainerPort) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	return corev1.Container{Name: name, RestartPolicy: &always, Ports: ports}
}

func withContainers(p *corev1.Pod, containers, inits []corev1.Container) *corev1.Pod {
	p.Spec.Containers, p.Spec.InitContainers = containers, inits
	return p
}

func versionInput(t *testing.T, c versionCase) (reconcile.Input, *reconcile.Plan) {
	t.Helper()
	svc := testutil.NewService("shop", "web").UID("svc-uid").ClusterIP("10.96.0.1").Selector("app", "web").Port("http", 80, "web").Build()
	if c.svc != nil {
		c.svc(svc)
	}
	in := reconcile.Input{Service: svc, Pods: c.pods, Nodes: reconcile.Nodes{ByName: map[string]*corev1.Node{
		"node-a": testutil.NewNode("node-a").Zone("z1").Build(), "node-bare": testutil.NewNode("node-bare").Build()}}}
	plan, err := reconcile.Compute(in, reconcile.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return in, plan
}

func webPod(name, node string, ips ...string) *testutil.PodBuilder {
	return testutil.NewPod("shop", name).Label("app", "web").Node(node).IP(ips...).ContainerPort("web", 8080, corev1.ProtocolTCP)
}

func TestVersionNotes(t *testing.T) {
	webPort := corev1.ContainerPort{Name: "web", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}
	udpPort := corev1.ContainerPort{Name: "web", ContainerPort: 8080, Protocol: corev1.ProtocolUDP}
	onlySidecar := func(name string, sidecar corev1.Container) *corev1.Pod {
		return withContainers(webPod(name, "node-a", "10.0.0.9").Build(), []corev1.Container{{Name: "app"}}, []corev1.Container{sidecar})
	}
	preferClose := func(s *corev1.Service) {
		s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferClose)
	}
	ipv6 := func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.IPFamilies = "fd00::10", []corev1.IPFamily{corev1.IPv6Protocol}
	}
	cases := []versionCase{
		{name: "plain", pods: []*corev1.Pod{webPod("web-1", "node-a", "10.0.0.1").Build()}},
		{name: "sidecar port", pods: []*corev1.Pod{webPod("web-1", "node-a", "10.0.0.1").Build(), onlySidecar("web-2", restartable("proxy", webPort))},
			want: SidecarPort, wantPods: []string{"web-2"}},
		{name: "port in container and sidecar", pods: []*corev1.Pod{withContainers(webPod("web-1", "node-a", "10.0.0.1").Build(),
			[]corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{webPort}}}, []corev1.Container{restartable("proxy", webPort)})}},
		{name: "port in a plain init container", pods: []*corev1.Pod{onlySidecar("web-1", corev1.Container{Name: "init", Ports: []corev1.ContainerPort{webPort}})}},
		{name: "sidecar port of another protocol", pods: []*corev1.Pod{onlySidecar("web-1", restartable("proxy", udpPort))}},
		{name: "sidecar port of an excluded Pod", pods: []*corev1.Pod{func() *corev1.Pod {
			p := onlySidecar("web-1", restartable("proxy", webPort))
			p.Status.Phase = corev1.PodSucceeded
			return p
		}()}},
		{name: "address not canonical", svc: ipv6, pods: []*corev1.Pod{webPod("web-1", "node-a", "fd00:25:0:0:0:0:0:1").Build(), webPod("web-2", "node-a", "fd00:25::2").Build()},
			want: AddressNotCanonical, wantPods: []string{"web-1"}},
		{name: "address not canonical in a family not served", pods: []*corev1.Pod{webPod("web-1", "node-a", "10.0.0.1", "fd00:25:0:0:0:0:0:1").Build()}},
		{name: "address canonical", svc: ipv6, pods: []*corev1.Pod{webPod("web-1", "node-a", "fd00:25::1").Build()}},
		{name: "zone-less ready endpoint", svc: preferClose, pods: []*corev1.Pod{webPod("web-1", "node-a", "10.0.0.1").Build(), webPod("web-2", "node-bare", "10.0.0.2").Build()},
			want: ZonelessHint, wantPods: []string{"web-2"}},
		{name: "zone-less endpoint, Node gone", svc: func(s *corev1.Service) {
			preferClose(s)
			s.Spec.PublishNotReadyAddresses = true // else the Pod is left out until its Node exists
		}, pods: []*corev1.Pod{webPod("web-1", "node-gone", "10.0.0.1").Build()},
			want: ZonelessHint, wantPods: []string{"web-1"}},
		{name: "zone-less endpoint not ready", svc: preferClose, pods: []*corev1.Pod{webPod("web-1", "node-bare", "10.0.0.1").Ready(false).Build()}},
		{name: "zone-less endpoint, a value older releases do not know", svc: func(s *corev1.Service) {
			s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferSameNode)
		}, pods: []*corev1.Pod{webPod("web-1", "node-bare", "10.0.0.1").Build()}},
		{name: "zone-less endpoint, no trafficDistribution", pods: []*corev1.Pod{webPod("web-1", "node-bare", "10.0.0.1").Build()}},
		{name: "zone-less endpoint, topology Auto overrides", svc: func(s *corev1.Service) {
			preferClose(s)
			s.Annotations = map[string]string{corev1.AnnotationTopologyMode: "Auto"}
		}, pods: []*corev1.Pod{webPod("web-1", "node-bare", "10.0.0.1").Build()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, plan := versionInput(t, c)
			for _, minor := range []int{31, 32, 33, 36, 0} {
				got := VersionNotes(in, plan, minor)
				if c.want == "" || minor >= 33 || minor == 0 {
					if len(got) != 0 {
						t.Errorf("v1.%d: want no notes, got %+v", minor, got)
					}
					continue
				}
				if len(got) != 1 || got[0].Difference != c.want || strings.Join(got[0].Pods, ",") != strings.Join(c.wantPods, ",") || got[0].Since != "v1.33" {
					t.Errorf("v1.%d: want one %s note on %v, got %+v", minor, c.want, c.wantPods, got)
				}
			}
		})
	}
}

// The note names what the older controller writes and what we write.
func TestVersionNoteMessages(t *testing.T) {
	in, plan := versionInput(t, versionCase{svc: func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.IPFamilies = "fd00::10", []corev1.IPFamily{corev1.IPv6Protocol}
	},
		pods: []*corev1.Pod{webPod("web-1", "node-a", "fd00:25:0:0:0:0:0:1").Build()}})
	got := VersionNotes(in, plan, 32)
	if len(got) != 1 || !strings.Contains(got[0].Message, "web-1 fd00:25:0:0:0:0:0:1 (canonical fd00:25::1)") {
		t.Errorf("%+v", got)
	}
}

// Build carries the release and the notes; -o json has versionNotes [] when
// there are none, and no clusterRelease when the release is unknown.
func TestBuildVersionNotes(t *testing.T) {
	in, plan := versionInput(t, versionCase{svc: func(s *corev1.Service) {
		s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferClose)
	}, pods: []*corev1.Pod{webPod("web-1", "node-bare", "10.0.0.1").Build()}})
	r := Build(in, plan, Options{ManagedBy: reconcile.DefaultManagedBy, ServerMinor: 32})
	if r.ClusterRelease != "v1.32" || len(r.VersionNotes) != 1 {
		t.Errorf("v1.32: release %q, notes %+v", r.ClusterRelease, r.VersionNotes)
	}
	for _, minor := range []int{0, 36} {
		b, err := json.Marshal(Build(in, plan, Options{ManagedBy: reconcile.DefaultManagedBy, ServerMinor: minor}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"versionNotes":[]`) || strings.Contains(string(b), "clusterRelease") != (minor != 0) {
			t.Errorf("v1.%d: %s", minor, b)
		}
	}
}

func ptr[T any](v T) *T { return &v }
