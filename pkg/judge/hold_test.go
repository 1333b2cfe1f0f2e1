package judge

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// sync holds back only where the controller's slices are current.
func TestHoldWhereCurrent(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.96.0.1", IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	in := reconcile.Input{Service: svc, Pods: []*corev1.Pod{pod}, Nodes: reconcile.Nodes{Unreadable: true}}
	plan, err := reconcile.Compute(in, reconcile.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	as := func(s *discovery.EndpointSlice, name, managedBy string) *discovery.EndpointSlice {
		c := s.DeepCopy()
		c.Name, c.GenerateName, c.Labels[discovery.LabelManagedBy] = name, "", managedBy
		return c
	}
	desired := plan.Final()[0]
	stale := as(desired, "kcm", reconcile.ControllerManagedBy)
	f := false
	stale.Endpoints[0].Conditions.Ready = &f
	hold := HoldWhereCurrent(reconcile.DefaultManagedBy)
	for _, tc := range []struct {
		name  string
		live  []*discovery.EndpointSlice
		want  string
		wantR bool // points to release
	}{
		{"controller down", nil, "", false},
		{"controller current", []*discovery.EndpointSlice{as(desired, "kcm", reconcile.ControllerManagedBy)}, "publishes svc/web correctly", false},
		{"controller current, ours too", []*discovery.EndpointSlice{as(desired, "kcm", reconcile.ControllerManagedBy), as(desired, "ours", reconcile.DefaultManagedBy)},
			"publishes svc/web correctly", true},
		{"controller stale", []*discovery.EndpointSlice{stale}, "", false},
		{"another manager current", []*discovery.EndpointSlice{as(desired, "x", "someone")}, "", false},
	} {
		in := in
		in.Slices = tc.live
		p, err := reconcile.Compute(in, reconcile.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		got := hold(in, p)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || strings.Contains(got, "kubectl slices release svc/web -n shop") != tc.wantR {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
}
