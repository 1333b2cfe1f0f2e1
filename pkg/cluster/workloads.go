package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// What deploy reads of the cluster, for the manifests it prints.

// AllNodes lists every Node, paged and bounded as every list: deploy
// --webhook cuts their Pod CIDRs out of what the webhook port admits.
func (r Reader) AllNodes(ctx context.Context) ([]corev1.Node, error) {
	var nodes []corev1.Node
	err := list(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return r.Client.CoreV1().Nodes().List(ctx, o)
	}, func(obj runtime.Object) {
		nodes = append(nodes, *obj.(*corev1.Node))
	})
	return nodes, err
}

// PodTemplate reads the pod template's spec of a workload in ns: resource
// is "deployment", "statefulset" or "daemonset" (deploy.Workload's).
func (r Reader) PodTemplate(ctx context.Context, ns, resource, name string) (corev1.PodSpec, error) {
	get := metav1.GetOptions{}
	switch resource {
	case "deployment":
		d, err := r.Client.AppsV1().Deployments(ns).Get(ctx, name, get)
		if err != nil {
			return corev1.PodSpec{}, err
		}
		return d.Spec.Template.Spec, nil
	case "statefulset":
		s, err := r.Client.AppsV1().StatefulSets(ns).Get(ctx, name, get)
		if err != nil {
			return corev1.PodSpec{}, err
		}
		return s.Spec.Template.Spec, nil
	}
	d, err := r.Client.AppsV1().DaemonSets(ns).Get(ctx, name, get)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	return d.Spec.Template.Spec, nil
}
