package controlplane

import (
	"fmt"
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
		if got := pickNode(&corev1.Pod{Spec: c.spec}, nodes, nil); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPickNodeAntiAffinity: a Pod whose anti-affinity term selects a Pod
// already on a node goes elsewhere when it prefers to, stays pending when
// it must and no node is left; Pods of another namespace or labels, or
// finished, do not count.
func TestPickNodeAntiAffinity(t *testing.T) {
	node := func(name string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	nodes := []corev1.Node{node("n-b"), node("n-a")}
	term := corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}, TopologyKey: "kubernetes.io/hostname"}
	preferred := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}}}}
	required := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
	on := func(node, ns string, labels map[string]string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + node, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	dns := map[string]string{"k8s-app": "kube-dns"}
	for _, c := range []struct {
		name     string
		affinity *corev1.Affinity
		placed   []corev1.Pod
		want     string
	}{
		{"preferred, one on n-a: n-b", preferred, []corev1.Pod{on("n-a", "kube-system", dns, corev1.PodRunning)}, "n-b"},
		{"preferred, one on each: the first by name", preferred, []corev1.Pod{on("n-a", "kube-system", dns, corev1.PodRunning), on("n-b", "kube-system", dns, corev1.PodRunning)}, "n-a"},
		{"required, one on each: none", required, []corev1.Pod{on("n-a", "kube-system", dns, corev1.PodRunning), on("n-b", "kube-system", dns, corev1.PodRunning)}, ""},
		{"required, one on n-a: n-b", required, []corev1.Pod{on("n-a", "kube-system", dns, corev1.PodRunning)}, "n-b"},
		{"another namespace does not count", required, []corev1.Pod{on("n-a", "other", dns, corev1.PodRunning)}, "n-a"},
		{"other labels do not count", required, []corev1.Pod{on("n-a", "kube-system", map[string]string{"k8s-app": "x"}, corev1.PodRunning)}, "n-a"},
		{"a finished Pod does not count", required, []corev1.Pod{on("n-a", "kube-system", dns, corev1.PodSucceeded)}, "n-a"},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "kube-system", Labels: dns}, Spec: corev1.PodSpec{Affinity: c.affinity}}
		if got := pickNode(pod, nodes, c.placed); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestAssignSpreadsReplicas: two unbound replicas with kubeadm's
// preferred anti-affinity, listed in one round, go one to each node; a Pod
// being deleted or already bound is not bound again; the input is left.
func TestAssignSpreadsReplicas(t *testing.T) {
	node := func(name string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	dns := map[string]string{"k8s-app": "kube-dns"}
	spec := corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: dns}, TopologyKey: "kubernetes.io/hostname"}}}}}}
	pod := func(name string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: dns}, Spec: *spec.DeepCopy()}
	}
	deleting := pod("deleting")
	deleting.DeletionTimestamp = &metav1.Time{}
	bound := pod("bound-elsewhere")
	bound.Labels = nil
	bound.Spec.NodeName = "n-a"
	pods := []corev1.Pod{deleting, bound, pod("dns-1"), pod("dns-2")}
	got := map[string]string{}
	for _, b := range assign(pods, []corev1.Node{node("n-b"), node("n-a")}) {
		got[b.Namespace+"/"+b.Name] = b.Target.Name
	}
	if want := map[string]string{"kube-system/dns-1": "n-a", "kube-system/dns-2": "n-b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("bindings %v, want %v", got, want)
	}
	if pods[2].Spec.NodeName != "" || pods[3].Spec.NodeName != "" {
		t.Fatal("assign changed its input")
	}
}
