package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

const oursLabel = "kubectl-slices"
const controllerLabel = "endpointslice-controller.k8s.io"

// nodes every cluster of the suite has: three in two zones.
var testNodes = []controlplane.NodeSpec{
	{Name: "node-a1", Zone: "zone-a", CPU: "4"},
	{Name: "node-a2", Zone: "zone-a", CPU: "4"},
	{Name: "node-b1", Zone: "zone-b", CPU: "8"},
}

func createNodes(ctx context.Context, cp *controlplane.ControlPlane) error {
	for _, n := range testNodes {
		if err := cp.Node(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// service builds a ClusterIP Service "name" selecting app=name, port 80 →
// named port http.
func service(ns, name string, mods ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{controlplane.ServicePort("http", 80, intstr.FromString("http"))}},
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func mustService(t testing.TB, cp *controlplane.ControlPlane, s *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := cp.Service(context.Background(), s)
	if err != nil {
		t.Fatalf("create service %s: %v", s.Name, err)
	}
	return got
}

// podSpec is a ready Pod of app=app on one of the test Nodes with a named
// http port, IP 10.<base>.<i/250>.<i%250+1>.
func podSpec(app string, i, base int) controlplane.PodSpec {
	return controlplane.PodSpec{
		Name: fmt.Sprintf("%s-%d", app, i), Labels: map[string]string{"app": app},
		Node: testNodes[i%len(testNodes)].Name, Ready: true,
		IPs:   []string{fmt.Sprintf("10.%d.%d.%d", base, i/250, i%250+1)},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
	}
}

func mustPods(t testing.TB, cp *controlplane.ControlPlane, ns string, specs ...controlplane.PodSpec) {
	t.Helper()
	if err := cp.Pods(context.Background(), ns, specs, 8); err != nil {
		t.Fatal(err)
	}
}

// listSlices returns the Service's slices managed by managedBy ("" = all),
// sorted by name.
func listSlices(t testing.TB, cp *controlplane.ControlPlane, ns, svc, managedBy string) []discovery.EndpointSlice {
	t.Helper()
	sel := discovery.LabelServiceName + "=" + svc
	if managedBy != "" {
		sel += "," + discovery.LabelManagedBy + "=" + managedBy
	}
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// allSliceVersions maps every slice in a namespace to its resourceVersion.
func allSliceVersions(t testing.TB, cp *controlplane.ControlPlane, ns string) map[string]string {
	return sliceVersions(t, cp, ns, "")
}

// sliceVersions maps the slices matching a label selector to their
// resourceVersions.
func sliceVersions(t testing.TB, cp *controlplane.ControlPlane, ns, selector string) map[string]string {
	t.Helper()
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		out[s.Name] = s.ResourceVersion
	}
	return out
}

// endpointAddresses lists every address of the slices, sorted.
func endpointAddresses(slices []discovery.EndpointSlice) []string {
	var out []string
	for _, s := range slices {
		for _, e := range s.Endpoints {
			out = append(out, e.Addresses...)
		}
	}
	sort.Strings(out)
	return out
}
