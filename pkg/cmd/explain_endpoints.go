package cmd

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// clusterExtras reads what explain judges beside the planner's input: the
// Endpoints controller's v1 Endpoints object of the Service and the
// release of the cluster (--server-version, else the API server's), for the
// notes on where an older kube-controller-manager differs. Offline
// (--local), or when they cannot be read, they are nil and 0 (or the
// flag's): explain's other findings do not depend on them.
func (o *ExplainOptions) clusterExtras(ctx context.Context, svc *corev1.Service) (*corev1.Endpoints, int) {
	minor := cluster.ReleaseMinor(o.ServerVersion)
	if o.Local {
		return nil, minor
	}
	client, err := o.Clientset()
	if err != nil {
		return nil, minor
	}
	if o.ServerVersion == "" {
		minor = cluster.ServerMinor(ctx, client)
	}
	return cluster.Reader{Client: client}.ControllerEndpoints(ctx, svc), minor
}
