package cmd

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// controllerEndpoints reads the Service's v1 Endpoints object for explain
// to judge, when the Endpoints controller wrote it; nil offline (--local),
// when there is none, or when it cannot be read (explain's other findings
// do not depend on it).
func (o *ExplainOptions) controllerEndpoints(ctx context.Context, svc *corev1.Service) *corev1.Endpoints {
	if o.Local {
		return nil
	}
	client, err := o.Clientset()
	if err != nil {
		return nil
	}
	return cluster.Reader{Client: client}.ControllerEndpoints(ctx, svc)
}
