package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mirroredState is our slices' endpoints of a Service: "address:ready",
// sorted; the expectation is built from the Endpoints object the test wrote.
func mirroredState(t testing.TB, ns, svc string) string {
	var out []string
	for _, s := range listSlices(t, shared, ns, svc, "kubectl-slices") {
		for _, e := range s.Endpoints {
			ready := e.Conditions.Ready != nil && *e.Conditions.Ready
			out = append(out, e.Addresses[0]+":"+map[bool]string{true: "true", false: "false"}[ready])
		}
	}
	sortStrings(out)
	return strings.Join(out, " ")
}

// --watch mirrors a selectorless Service's Endpoints object: creation,
// an address turning not ready and deletion each show within a second.
func TestWatchMirrorsEndpoints(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	w := startWatch(t, shared, shared.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--summary-interval=0")
	w.waitLine(t, "caches filled", 20*time.Second)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	mustService(t, shared, svc)
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: ns}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.9.0.1"}, {IP: "10.9.0.2"}},
		Ports:     []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}},
	}}}
	eps := shared.Admin.CoreV1().Endpoints(ns)
	created, err := eps.Create(ctx, ep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	within(t, "mirrored slice created", reflectLimit, func() bool { return mirroredState(t, ns, "ext") == "10.9.0.1:true 10.9.0.2:true" })

	created.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "10.9.0.1"}}
	created.Subsets[0].NotReadyAddresses = []corev1.EndpointAddress{{IP: "10.9.0.2"}}
	if _, err := eps.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "address turned not ready", reflectLimit, func() bool { return mirroredState(t, ns, "ext") == "10.9.0.1:true 10.9.0.2:false" })

	if err := eps.Delete(ctx, "ext", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "mirrored slice removed", reflectLimit, func() bool { return len(listSlices(t, shared, ns, "ext", "kubectl-slices")) == 0 })
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("watch exited %d", code)
	}
}
