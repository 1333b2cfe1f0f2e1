package judge

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// A Service without selector is published by the mirroring controller,
// any other by the EndpointSlice controller; a run under another value
// keeps it for both kinds.
func TestControllerOfAndManagedByOf(t *testing.T) {
	selected := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	bare := &corev1.Service{}
	for _, tc := range []struct {
		svc         *corev1.Service
		value, want string
	}{
		{selected, reconcile.ControllerManagedBy, reconcile.ControllerManagedBy},
		{bare, reconcile.ControllerManagedBy, reconcile.MirroringManagedBy},
		{selected, reconcile.MirroringManagedBy, reconcile.ControllerManagedBy},
		{bare, "kubectl-slices", "kubectl-slices"},
	} {
		if got := ManagedByOf(tc.svc, tc.value); got != tc.want {
			t.Errorf("ManagedByOf(selector %v, %q) = %q, want %q", tc.svc.Spec.Selector, tc.value, got, tc.want)
		}
	}
	if ControllerOf(selected) != reconcile.ControllerManagedBy || ControllerOf(bare) != reconcile.MirroringManagedBy {
		t.Errorf("ControllerOf: %q, %q", ControllerOf(selected), ControllerOf(bare))
	}
}
