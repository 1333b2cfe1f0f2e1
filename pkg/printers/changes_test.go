package printers

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

// Mirrored endpoints that reference no Pod are named as addresses, not as
// Pods; one that references an object of another kind is named by it.
func TestChangesNameMirroredAddresses(t *testing.T) {
	addr := func(ip string, ready bool) discovery.Endpoint {
		e := ep("", ip, ready, false, "")
		e.TargetRef, e.Zone = nil, nil
		return e
	}
	node := ep("n1", "10.0.0.9", true, false, "")
	node.TargetRef.Kind = "Node"
	live := ourSlice("ext-a", addr("10.0.0.1", true), addr("10.0.0.2", true))
	after := ourSlice("ext-a", addr("10.0.0.2", false), addr("10.0.0.3", true), node)
	got := changes([]*discovery.EndpointSlice{live}, []*discovery.EndpointSlice{after})
	want := []string{"address 10.0.0.1 removed", "address 10.0.0.2 not ready", "address 10.0.0.3 added", "node n1 added"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// A slice another writer edited since our last write (the controller's
// tracker names it in restored) is said to be restored, not as the Pod
// changes the edit made; other slices of the same write keep their Pod
// reasons.
func TestChangesRestoredSlice(t *testing.T) {
	edited := ourSlice("web-a", ep("a", "10.9.9.9", true, false, "z1")) // by hand
	other := ourSlice("web-b", ep("b", "10.0.0.2", true, false, "z1"))
	restored := map[string]bool{"web-a": true}
	live := map[string]*discovery.EndpointSlice{"web-a": edited, "web-b": other}
	update := []*discovery.EndpointSlice{ourSlice("web-a", ep("a", "10.0.0.1", true, false, "z1")), ourSlice("web-b", ep("b", "10.0.0.2", false, false, "z1"))}
	got := planChanges(update, nil, nil, func(n string) *discovery.EndpointSlice { return live[n] }, restored)
	want := []string{"endpointslice web-a restored", "pod b not ready"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
