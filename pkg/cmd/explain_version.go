package cmd

import (
	"context"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// serverMinor is the API server's minor release, for explain's notes on
// where an older kube-controller-manager publishes other endpoints; 0 (no
// notes) offline (--local) or when it cannot be read.
func (o *ExplainOptions) serverMinor(ctx context.Context) int {
	if o.Local {
		return 0
	}
	client, err := o.Clientset()
	if err != nil {
		return 0
	}
	return cluster.ServerMinor(ctx, client)
}
