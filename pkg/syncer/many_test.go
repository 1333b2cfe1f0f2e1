package syncer

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A run's cache lists the namespaces of its Services, each once, while they
// are few; past maxFillNamespaces it lists every namespace at once.
func TestFillNamespaces(t *testing.T) {
	got := fillNamespaces([]Target{{Namespace: "b"}, {Namespace: "a"}, {Namespace: "b"}})
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %v, want [a b]", got)
	}
	var many []Target
	for i := range maxFillNamespaces + 1 {
		many = append(many, Target{Namespace: fmt.Sprint("ns-", i)})
	}
	if got := fillNamespaces(many); got != nil {
		t.Errorf("%d namespaces: listed one by one", len(many))
	}
	if got := fillNamespaces(many[:maxFillNamespaces]); len(got) != maxFillNamespaces {
		t.Errorf("%d namespaces: got %d", maxFillNamespaces, len(got))
	}
}

// A target's Service in its place; nil where it was not found.
func TestServices(t *testing.T) {
	web := &corev1.Service{}
	got := Services([]Target{{Name: "web", Service: web}, {Name: "gone", Err: errors.New("not found")}})
	if len(got) != 2 || got[0] != web || got[1] != nil {
		t.Errorf("got %v", got)
	}
}
