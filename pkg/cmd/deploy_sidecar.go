package cmd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// checkSidecarWorkload reads the pod template of the workload a --patch
// without --service-account is for, and refuses one whose containers could
// read the token the patch gives the loop alone (deploy.CheckSharedProcesses).
// With --service-account the workload's containers hold that token anyway,
// by the user's choice.
func (o *DeployOptions) checkSidecarWorkload(ctx context.Context) error {
	if o.SidecarFor == "" || !o.Patch || o.ServiceAccount != "" {
		return nil
	}
	w, err := deploy.ParseWorkload(o.SidecarFor)
	if err != nil {
		return exit.Usagef("--sidecar-for %v", err)
	}
	cs, err := o.Clientset()
	if err != nil {
		return err
	}
	pod, err := workloadPod(ctx, cs, o.namespace, w)
	if apierrors.IsNotFound(err) {
		return &exit.Error{Code: exit.NotFound, Err: fmt.Errorf("%s/%s not found in namespace %s: check the name and -n", w.Resource, w.Name, o.namespace)}
	}
	if err != nil {
		return &exit.Error{Code: exit.Code(err), Err: fmt.Errorf("reading %s/%s in namespace %s: %w", w.Resource, w.Name, o.namespace, err)}
	}
	if err := deploy.CheckSharedProcesses(w, pod); err != nil {
		return exit.Usagef("%v", err)
	}
	return nil
}

// workloadPod is the pod template's spec of w in ns.
func workloadPod(ctx context.Context, cs kubernetes.Interface, ns string, w deploy.Workload) (corev1.PodSpec, error) {
	get := metav1.GetOptions{}
	switch w.Resource {
	case "deployment":
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, w.Name, get)
		if err != nil {
			return corev1.PodSpec{}, err
		}
		return d.Spec.Template.Spec, nil
	case "statefulset":
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, w.Name, get)
		if err != nil {
			return corev1.PodSpec{}, err
		}
		return s.Spec.Template.Spec, nil
	}
	d, err := cs.AppsV1().DaemonSets(ns).Get(ctx, w.Name, get)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	return d.Spec.Template.Spec, nil
}
