package cmd

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// Writing under a value another tool's slice carries is a usage error
// (exit 2) naming the slice, with nothing written, for every writing
// command; --force proceeds.
func TestForeignRefusedThroughCobra(t *testing.T) {
	objs := func() []runtime.Object {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
		theirs := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-mesh", Namespace: "shop",
			Labels:        map[string]string{discovery.LabelServiceName: "web", discovery.LabelManagedBy: "mesh.example.io"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "mesh-agent", Operation: metav1.ManagedFieldsOperationUpdate}}},
			AddressType: discovery.AddressTypeIPv4, Endpoints: []discovery.Endpoint{{Addresses: []string{"10.7.7.7"}}}}
		return []runtime.Object{svc, theirs}
	}
	for _, args := range [][]string{
		{"sync", "svc/web", "-n", "shop", "--managed-by", "mesh.example.io"},
		{"release", "svc/web", "-n", "shop", "--managed-by", "mesh.example.io"},
		{"prune", "-n", "shop", "--managed-by", "mesh.example.io"},
	} {
		r := runFake(t, objs(), args...)
		if r.Code() != exit.Usage || !strings.Contains(r.Err.Error(), "shop/web-mesh") {
			t.Errorf("%v: exit %d, %v; want %d naming shop/web-mesh", args, r.Code(), r.Err, exit.Usage)
		}
		for _, a := range r.Client.Actions() {
			if v := a.GetVerb(); v != "get" && v != "list" {
				t.Errorf("%v: %s %s after the refusal", args, v, a.GetResource().Resource)
			}
		}
	}
	r := runFake(t, objs(), "sync", "svc/web", "-n", "shop", "--managed-by", "mesh.example.io", "--force")
	if r.Code() != 0 {
		t.Fatalf("--force: exit %d, %v\n%s", r.Code(), r.Err, r.ErrOut)
	}
	// No Pods: the address no Pod justifies goes.
	if s, err := r.Client.DiscoveryV1().EndpointSlices("shop").Get(t.Context(), "web-mesh", metav1.GetOptions{}); err == nil && len(s.Endpoints) != 0 {
		t.Errorf("--force left their slice as it was: %+v", s.Endpoints)
	}
}
