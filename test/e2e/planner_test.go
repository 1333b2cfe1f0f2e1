package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// externalService makes a Service without selector and its hand-written
// Endpoints object listing ips on port 8080.
func externalService(t *testing.T, cp *controlplane.ControlPlane, ns, name string, ips ...string) {
	t.Helper()
	mustService(t, cp, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}})
	if _, err := cp.Admin.CoreV1().Endpoints(ns).Create(context.Background(), endpointsOf(ns, name, ips...), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func endpointsOf(ns, name string, ips ...string) *corev1.Endpoints {
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}
	for _, ip := range ips {
		ep.Subsets[0].Addresses = append(ep.Subsets[0].Addresses, corev1.EndpointAddress{IP: ip})
	}
	return ep
}

// checkKinds runs check -n ns -o json as the admin, asserts its exit code
// and returns "service kind" per finding, sorted.
func checkKinds(t *testing.T, ns string, code int, extra ...string) string {
	t.Helper()
	r := slices(t, append([]string{"check", "-n", ns, "-o", "json"}, extra...)...).mustCode(t, code)
	var report struct {
		Findings []struct{ Service, Kind, Command string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	var got []string
	for _, f := range report.Findings {
		got = append(got, f.Service+" "+f.Kind)
	}
	sort.Strings(got)
	return strings.Join(got, ",")
}

// check judges our mirrored slices as sync writes them: stale once the
// Endpoints object changed while nothing ran, missing once ours were
// deleted, orphaned once the Endpoints object is gone; exit 1 for each, 0
// once sync repaired it.
func TestCheckJudgesMirroredSlices(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	externalService(t, shared, ns, "ext", "10.70.0.1", "10.70.0.2")
	sync := func() { slices(t, "sync", "svc/ext", "-n", ns).mustCode(t, 0) }
	sync()
	if got := checkKinds(t, ns, 0); got != "" {
		t.Fatalf("after sync: %s", got)
	}

	if _, err := shared.Admin.CoreV1().Endpoints(ns).Update(ctx, endpointsOf(ns, "ext", "10.70.0.1", "10.70.0.3"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := checkKinds(t, ns, 1); got != "ext Stale" {
		t.Errorf("Endpoints changed: %s, want ext Stale", got)
	}
	sync()
	if got := checkKinds(t, ns, 0); got != "" {
		t.Fatalf("after the repair: %s", got)
	}

	ours := listSlices(t, shared, ns, "ext", oursLabel)
	if err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Delete(ctx, ours[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := checkKinds(t, ns, 1); got != "ext NoSlices" {
		t.Errorf("ours deleted: %s, want ext NoSlices", got)
	}
	sync()

	if err := shared.Admin.CoreV1().Endpoints(ns).Delete(ctx, "ext", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := checkKinds(t, ns, 1); got != "ext Orphaned" {
		t.Errorf("Endpoints gone: %s, want ext Orphaned", got)
	}
	sync()
	if got := checkKinds(t, ns, 0); got != "" || len(listSlices(t, shared, ns, "ext", oursLabel)) != 0 {
		t.Errorf("after sync deleted ours: %s", got)
	}
}

// managedByState maps each Service to the managed-by values of its slices.
func managedByState(t testing.TB, cp *controlplane.ControlPlane, ns string) string {
	t.Helper()
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Labels[discovery.LabelServiceName]+"="+s.Labels[discovery.LabelManagedBy])
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// perKindWant: with a controller's value, the selector Service's slices
// (here its placeholder: no Pods) carry the EndpointSlice controller's value
// and the selectorless Service's the mirroring controller's.
const perKindWant = "ext=" + mirroringManagedBy + ",web=" + controllerLabel

// With --managed-by naming either controller and --force, each kind of slice
// carries its own controller's value; a second run writes nothing, and check
// under that value finds both kinds its own.
func TestManagedByPerKindOneShot(t *testing.T) {
	ctx := context.Background()
	for _, value := range []string{controllerLabel, mirroringManagedBy} {
		t.Run(value, func(t *testing.T) {
			ns := newNamespace(t, shared)
			mustService(t, shared, service(ns, "web"))
			externalService(t, shared, ns, "ext", "10.71.0.1")
			slices(t, "sync", "--all", "-n", ns, "--managed-by", value, "--force").mustCode(t, 0)
			if got := managedByState(t, shared, ns); got != perKindWant {
				t.Fatalf("managed-by per Service %s, want %s", got, perKindWant)
			}
			before := sliceVersions(t, shared, ns, "")
			slices(t, "sync", "--all", "-n", ns, "--managed-by", value, "--force").mustCode(t, 0)
			if after := sliceVersions(t, shared, ns, ""); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("second run rewrote: %v -> %v", before, after)
			}
			if got := checkKinds(t, ns, 0, "--managed-by", value); got != "" {
				t.Fatalf("check under %s: %s", value, got)
			}
			if _, err := shared.Admin.CoreV1().Endpoints(ns).Update(ctx, endpointsOf(ns, "ext", "10.71.0.2"), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := checkKinds(t, ns, 1, "--managed-by", value); got != "ext Stale" {
				t.Errorf("check after the Endpoints changed: %s, want ext Stale", got)
			}
			slices(t, "sync", "--all", "-n", ns, "--managed-by", value, "--force").mustCode(t, 0)
			if got := managedByState(t, shared, ns); got != perKindWant {
				t.Errorf("after the update %s, want %s", got, perKindWant)
			}
		})
	}
}

// The same holds in sync --watch: the loop writes each kind under its own
// controller's value, keeps the mirrored slice current under it, and
// recognises both as its own (no second slice beside them, no rewrites
// once current).
func TestManagedByPerKindWatch(t *testing.T) {
	ctx := context.Background()
	for _, value := range []string{controllerLabel, mirroringManagedBy} {
		t.Run(value, func(t *testing.T) {
			ns := newNamespace(t, shared)
			mustService(t, shared, service(ns, "web"))
			externalService(t, shared, ns, "ext", "10.72.0.1")
			w := startWatch(t, shared, shared.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--managed-by", value, "--force", "--summary-interval=0")
			within(t, "first sync", 10*time.Second, func() bool { return managedByState(t, shared, ns) == perKindWant })
			if _, err := shared.Admin.CoreV1().Endpoints(ns).Update(ctx, endpointsOf(ns, "ext", "10.72.0.9"), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			within(t, "mirrored update", reflectLimit, func() bool {
				s := listSlices(t, shared, ns, "ext", mirroringManagedBy)
				return len(s) == 1 && len(s[0].Endpoints) == 1 && s[0].Endpoints[0].Addresses[0] == "10.72.0.9"
			})
			before := sliceVersions(t, shared, ns, "")
			time.Sleep(2 * time.Second)
			if after := sliceVersions(t, shared, ns, ""); fmt.Sprint(after) != fmt.Sprint(before) || managedByState(t, shared, ns) != perKindWant {
				t.Errorf("the loop kept writing: %v -> %v (%s)", before, after, managedByState(t, shared, ns))
			}
			if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if out := w.output(); strings.Contains(out, "refusing") || strings.Contains(out, "error") {
				t.Errorf("errors in the output:\n%s", out)
			}
		})
	}
}

// A managed-by value another tool writes under is refused without --force
// by every writing command (exit 2, one line naming the slice, nothing
// written); with --force sync proceeds.
func TestManagedByRefusesAnotherToolsValue(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 73))
	const mesh = "mesh.example.io"
	theirs := &discovery.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-mesh", Namespace: ns,
			Labels: map[string]string{discovery.LabelServiceName: "web", discovery.LabelManagedBy: mesh}},
		AddressType: discovery.AddressTypeIPv4,
		Endpoints:   []discovery.Endpoint{{Addresses: []string{"10.73.7.7"}}},
	}
	if _, err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Create(ctx, theirs, metav1.CreateOptions{FieldManager: "mesh-agent"}); err != nil {
		t.Fatal(err)
	}
	before := sliceDump(t, shared, ns)
	for _, args := range [][]string{
		{"sync", "svc/web", "-n", ns, "--managed-by", mesh},
		{"sync", "--all", "-n", ns, "--managed-by", mesh, "--dry-run=server"},
		{"sync", "--all", "-n", ns, "--managed-by", mesh, "--watch"},
		{"release", "svc/web", "-n", ns, "--managed-by", mesh},
		{"prune", "-n", ns, "--managed-by", mesh},
	} {
		r := slices(t, args...).mustCode(t, 2)
		if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 || !strings.Contains(r.Stderr, ns+"/web-mesh") || !strings.Contains(r.Stderr, "--force") {
			t.Errorf("%v: stderr %q, want one line naming %s/web-mesh", args, r.Stderr, ns)
		}
		if after := sliceDump(t, shared, ns); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%v changed the slices:\n%v\n->\n%v", args, before, after)
		}
	}
	// Our own value is not concerned, and leaves their slice alone.
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if after := sliceDump(t, shared, ns); after["web-mesh"] != before["web-mesh"] {
		t.Fatalf("their slice changed under our own value")
	}
	slices(t, "sync", "svc/web", "-n", ns, "--managed-by", mesh, "--force").mustCode(t, 0)
	if after := sliceDump(t, shared, ns); after["web-mesh"] == before["web-mesh"] {
		t.Errorf("--force did not take the slice over")
	}
	// Written by us now (a trace of our field manager): no refusal.
	slices(t, "sync", "svc/web", "-n", ns, "--managed-by", mesh).mustCode(t, 0)
}

// check as a user whose Role grants no Endpoints carries on as explain and
// sync do and says what it skipped; across all namespaces it names the
// missing right correctly.
func TestCheckWithoutEndpointsRights(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 74))
	externalService(t, shared, ns, "ext", "10.74.0.1")
	slices(t, "sync", "--all", "-n", ns).mustCode(t, 0)
	kubeconfig := namespaceUser(t, shared, ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	})
	r := slices(t, "check", "-n", ns, "--kubeconfig", kubeconfig).mustCode(t, 0)
	if !strings.Contains(r.Stderr, "Warning: skipped") || !strings.Contains(r.Stderr, "Endpoints is forbidden") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("stderr %q, want one line saying what was skipped", r.Stderr)
	}
	r = slices(t, "check", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json").mustCode(t, 0)
	var report struct{ Skipped []string }
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || len(report.Skipped) != 2 {
		t.Errorf("-o json skipped %q (%v)\n%s", report.Skipped, err, r.Stdout)
	}
	r = slices(t, "check", "-A", "--kubeconfig", kubeconfig).mustCode(t, 4)
	if !strings.Contains(r.Stderr, "cannot list services in all namespaces") || !strings.Contains(r.Stderr, "kubectl auth can-i list services -A") ||
		strings.Contains(r.Stderr, "namespace ;") {
		t.Errorf("check -A: %q", r.Stderr)
	}
}
