package controller

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func ep(pod, addr string, ready, terminating bool, zone string) discovery.Endpoint {
	return discovery.Endpoint{Addresses: []string{addr}, Zone: &zone,
		Conditions: discovery.EndpointConditions{Ready: &ready, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: pod}}
}

func ourSlice(name string, eps ...discovery.Endpoint) *discovery.EndpointSlice {
	return testutil.NewSlice("shop", name).Service("web").ManagedBy(reconcile.DefaultManagedBy).Endpoints(eps...).Build()
}

// Each kind of Pod change is named; a write with no endpoint change is a
// repair of the slices themselves.
func TestChanges(t *testing.T) {
	live := ourSlice("web-a", ep("a", "10.0.0.1", true, false, "z1"), ep("b", "10.0.0.2", true, false, "z1"),
		ep("c", "10.0.0.3", true, false, "z1"), ep("d", "10.0.0.4", true, false, "z1"))
	after := ourSlice("web-a", ep("a", "10.0.0.1", false, false, "z1"), ep("b", "10.0.0.2", false, true, "z1"),
		ep("d", "10.0.0.4", true, false, "z2"), ep("e", "10.0.0.5", false, false, "z1"))
	got := changes([]*discovery.EndpointSlice{live}, []*discovery.EndpointSlice{after})
	want := []string{"pod a not ready", "pod b terminating", "pod c removed", "pod d zone z1→z2", "pod e added (not ready)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	same := changes([]*discovery.EndpointSlice{live}, []*discovery.EndpointSlice{live})
	if !reflect.DeepEqual(same, []string{"slices repaired"}) {
		t.Errorf("no endpoint change: %q", same)
	}
}
