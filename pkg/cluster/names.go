package cluster

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// Names lists the names of the objects of a resource in namespace ns
// (ignored for namespaces and nodes), sorted: for shell completion.
// resource is "namespaces", "nodes", "services", "pods", "deployment",
// "statefulset" or "daemonset".
func Names(ctx context.Context, client kubernetes.Interface, resource, ns string) ([]string, error) {
	var list runtime.Object
	var err error
	opts := metav1.ListOptions{}
	switch resource {
	case "namespaces":
		list, err = client.CoreV1().Namespaces().List(ctx, opts)
	case "nodes":
		list, err = client.CoreV1().Nodes().List(ctx, opts)
	case "services":
		list, err = client.CoreV1().Services(ns).List(ctx, opts)
	case "pods":
		list, err = client.CoreV1().Pods(ns).List(ctx, opts)
	case "deployment":
		list, err = client.AppsV1().Deployments(ns).List(ctx, opts)
	case "statefulset":
		list, err = client.AppsV1().StatefulSets(ns).List(ctx, opts)
	case "daemonset":
		list, err = client.AppsV1().DaemonSets(ns).List(ctx, opts)
	default:
		return nil, fmt.Errorf("no names of %q", resource)
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", resource, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		if m, err := meta.Accessor(item); err == nil {
			out = append(out, m.GetName())
		}
	}
	sort.Strings(out)
	return out, nil
}
