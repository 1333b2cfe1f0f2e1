package controlplane

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// bind schedules, in place of kube-scheduler: every Pod without a node goes
// to a Ready node that its nodeSelector and required node affinity admit
// (a DaemonSet's Pods name theirs by a metadata.name field) and its pod
// anti-affinity allows (pickNode); one that fits none stays pending, as it
// would.
func (n *Node) bind(ctx context.Context) {
	defer close(n.binderDone)
	for ctx.Err() == nil {
		pods, err := n.cp.Admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		var nodes *corev1.NodeList
		if err == nil && hasUnbound(pods.Items) {
			nodes, err = n.cp.Admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		}
		if err == nil && nodes != nil {
			for _, b := range assign(pods.Items, nodes.Items) {
				_ = n.cp.Admin.CoreV1().Pods(b.Namespace).Bind(ctx, &b, metav1.CreateOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// assign binds each Pod without a node, not being deleted, to the node
// pickNode chooses, in the list's order; each sees those before it placed
// (two replicas of one Deployment, spread by anti-affinity, in one round).
func assign(pods []corev1.Pod, nodes []corev1.Node) []corev1.Binding {
	placed := append([]corev1.Pod(nil), pods...)
	var out []corev1.Binding
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		target := pickNode(p, nodes, placed)
		if target == "" {
			continue
		}
		out = append(out, corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: target}})
		placed[i].Spec.NodeName = target
	}
	return out
}

func hasUnbound(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			return true
		}
	}
	return false
}

// pickNode is the name of the Ready, schedulable node the Pod's
// nodeSelector and required node affinity admit, its required pod
// anti-affinity allows, and its preferred pod anti-affinity counts least
// against (placed are the Pods already on nodes); the first by name among
// equals, or "". As kube-scheduler's InterPodAffinity, an anti-affinity
// term counts a Pod on a node, not finished, in the term's namespaces (the
// Pod's own when none are named; no namespaceSelector) that its label selector matches, on a node with the same
// value of its topology key.
func pickNode(pod *corev1.Pod, nodes []corev1.Node, placed []corev1.Pod) string {
	sorted := append([]corev1.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	best, bestCost := "", 0
	for i := range sorted {
		node := &sorted[i]
		if ready, _ := nodeReady(node); !ready || node.Spec.Unschedulable {
			continue
		}
		if ok, err := affinity.Match(node); err != nil || !ok {
			continue
		}
		cost, allowed := antiAffinityCost(pod, node, sorted, placed)
		if allowed && (best == "" || cost < bestCost) {
			best, bestCost = node.Name, cost
		}
	}
	return best
}

// antiAffinityCost is the weight of the Pod's preferred anti-affinity
// terms that placing it on node would break, and whether its required
// terms allow the node at all.
func antiAffinityCost(pod *corev1.Pod, node *corev1.Node, nodes []corev1.Node, placed []corev1.Pod) (int, bool) {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		return 0, true
	}
	anti := pod.Spec.Affinity.PodAntiAffinity
	for _, term := range anti.RequiredDuringSchedulingIgnoredDuringExecution {
		if termMatches(pod, term, node, nodes, placed) {
			return 0, false
		}
	}
	cost := 0
	for _, w := range anti.PreferredDuringSchedulingIgnoredDuringExecution {
		if termMatches(pod, w.PodAffinityTerm, node, nodes, placed) {
			cost += int(w.Weight)
		}
	}
	return cost, true
}

// termMatches says whether a placed Pod the term selects runs in node's
// topology domain (the same value of the term's key).
func termMatches(pod *corev1.Pod, term corev1.PodAffinityTerm, node *corev1.Node, nodes []corev1.Node, placed []corev1.Pod) bool {
	domain, ok := node.Labels[term.TopologyKey]
	if !ok {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil || term.LabelSelector == nil {
		return false
	}
	namespaces := map[string]bool{pod.Namespace: len(term.Namespaces) == 0}
	for _, ns := range term.Namespaces {
		namespaces[ns] = true
	}
	inDomain := map[string]bool{}
	for _, n := range nodes {
		if v, ok := n.Labels[term.TopologyKey]; ok && v == domain {
			inDomain[n.Name] = true
		}
	}
	for _, p := range placed {
		// Terminating Pods count until they are gone, finished ones not
		// (the scheduler's cache of assigned Pods).
		if p.Spec.NodeName == "" || p.UID == pod.UID && p.Name == pod.Name ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if namespaces[p.Namespace] && inDomain[p.Spec.NodeName] && sel.Matches(labels.Set(p.Labels)) {
			return true
		}
	}
	return false
}
