package controlplane

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// bind schedules, in place of kube-scheduler: every Pod without a node goes
// to the first Ready node, by name, that its nodeSelector and required node
// affinity admit (a DaemonSet's Pods name theirs by a metadata.name field);
// one that fits none stays pending, as it would.
func (n *Node) bind(ctx context.Context) {
	defer close(n.binderDone)
	for ctx.Err() == nil {
		pods, err := n.cp.Admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
		var nodes *corev1.NodeList
		if err == nil && len(pods.Items) > 0 {
			nodes, err = n.cp.Admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		}
		if err == nil && nodes != nil {
			for _, p := range pods.Items {
				target := pickNode(&p, nodes.Items)
				if p.DeletionTimestamp != nil || target == "" {
					continue
				}
				_ = n.cp.Admin.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
					Target:     corev1.ObjectReference{Kind: "Node", Name: target},
				}, metav1.CreateOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// pickNode is the name of the first Ready, schedulable node (by name) the
// Pod's nodeSelector and required node affinity admit, or "".
func pickNode(pod *corev1.Pod, nodes []corev1.Node) string {
	sorted := append([]corev1.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	for i := range sorted {
		node := &sorted[i]
		if ready, _ := nodeReady(node); !ready || node.Spec.Unschedulable {
			continue
		}
		if ok, err := affinity.Match(node); err == nil && ok {
			return node.Name
		}
	}
	return ""
}
