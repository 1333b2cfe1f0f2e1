package cmd

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
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
	pod, err := cluster.Reader{Client: cs}.PodTemplate(ctx, o.namespace, w.Resource, w.Name)
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
