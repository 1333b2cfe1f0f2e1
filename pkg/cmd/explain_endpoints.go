package cmd

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// controllerEndpoints reads the Service's v1 Endpoints object for explain
// to judge, when the Endpoints controller wrote it; nil offline (--local),
// when there is none, or when it cannot be read (explain's other findings
// do not depend on it).
func (o *ExplainOptions) controllerEndpoints(ctx context.Context, svc *corev1.Service) *corev1.Endpoints {
	if o.Local || svc == nil || len(svc.Spec.Selector) == 0 {
		return nil
	}
	client, err := o.Clientset()
	if err != nil {
		return nil
	}
	ep, err := client.CoreV1().Endpoints(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil || ep.Labels[endpoints.LabelManagedBy] != endpoints.ControllerManagedBy {
		return nil
	}
	return ep
}
