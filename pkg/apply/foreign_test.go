package apply

import (
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNotWrittenBy(t *testing.T) {
	mk := func(name, managedBy string, managers ...string) *discovery.EndpointSlice {
		s := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{discovery.LabelManagedBy: managedBy}}}
		for _, m := range managers {
			s.ManagedFields = append(s.ManagedFields, metav1.ManagedFieldsEntry{Manager: m})
		}
		return s
	}
	in := []*discovery.EndpointSlice{
		mk("b-foreign", "v", "mesh"), mk("a-ours", "v", "kubectl-edit", FieldManager), mk("c-bare", "v"),
		mk("d-other-value", "w", "mesh"), mk("e-custom", "v", "ops"),
	}
	var got []string
	for _, s := range NotWrittenBy(in, "v", FieldManager, "ops") {
		got = append(got, s.Name)
	}
	if len(got) != 2 || got[0] != "b-foreign" || got[1] != "c-bare" {
		t.Errorf("got %v, want [b-foreign c-bare]", got)
	}
	// An empty field manager is no trace.
	if n := len(NotWrittenBy([]*discovery.EndpointSlice{mk("x", "v", "")}, "v", "")); n != 1 {
		t.Errorf("an empty manager counted as ours")
	}
}
