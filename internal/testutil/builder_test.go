package testutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Build hands out copies: building again after more changes leaves the
// first object as it was.
func TestBuildReturnsCopies(t *testing.T) {
	b := NewService("shop", "web").Selector("app", "web")
	first := b.Build()
	b.Selector("tier", "front").Port("http", 80, "http")
	if diff := cmp.Diff(map[string]string{"app": "web"}, first.Spec.Selector); diff != "" {
		t.Errorf("first Service changed (-want +got):\n%s", diff)
	}
	if len(first.Spec.Ports) != 0 || len(b.Build().Spec.Ports) != 1 {
		t.Errorf("ports: first %v, second %v", first.Spec.Ports, b.Build().Spec.Ports)
	}
}

// A port's target is a number or a name, as in a manifest.
func TestServicePortTarget(t *testing.T) {
	s := NewService("shop", "web").Port("a", 80, "8080").Port("b", 81, "http").Build()
	if diff := cmp.Diff([]intstr.IntOrString{intstr.FromInt32(8080), intstr.FromString("http")},
		[]intstr.IntOrString{s.Spec.Ports[0].TargetPort, s.Spec.Ports[1].TargetPort}); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}
