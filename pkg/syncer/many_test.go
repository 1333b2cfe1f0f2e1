package syncer

import (
	"fmt"
	"slices"
	"testing"
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
