package controlplane

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPickNode: a Pod goes to the first Ready node by name that its
// nodeSelector and required node affinity (a DaemonSet's metadata.name
// field) admit; one no node admits stays unbound.
func TestPickNode(t *testing.T) {
	node := func(name, zone string, ready corev1.ConditionStatus) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"topology.kubernetes.io/zone": zone}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	nodes := []corev1.Node{node("n-b", "zone-b", corev1.ConditionTrue), node("n-a", "zone-a", corev1.ConditionTrue), node("n-0", "zone-a", corev1.ConditionFalse)}
	field := func(name string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}}}}}
	}
	for _, c := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"no constraint: the first by name", corev1.PodSpec{}, "n-a"},
		{"node selector", corev1.PodSpec{NodeSelector: map[string]string{"topology.kubernetes.io/zone": "zone-b"}}, "n-b"},
		{"DaemonSet's field affinity", corev1.PodSpec{Affinity: field("n-b")}, "n-b"},
		{"not Ready: none", corev1.PodSpec{Affinity: field("n-0")}, ""},
		{"no such zone: none", corev1.PodSpec{NodeSelector: map[string]string{"topology.kubernetes.io/zone": "zone-c"}}, ""},
	} {
		if got := pickNode(&corev1.Pod{Spec: c.spec}, nodes); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
