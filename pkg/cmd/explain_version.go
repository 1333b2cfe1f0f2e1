package cmd

import (
	"context"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// serverMinor is --server-version's minor release, or else the API server's,
// for explain's notes on where an older kube-controller-manager publishes
// other endpoints; 0 (no notes) offline (--local) without the flag, or when
// the server's cannot be read.
func (o *ExplainOptions) serverMinor(ctx context.Context) int {
	if o.ServerVersion != "" {
		return cluster.ReleaseMinor(o.ServerVersion)
	}
	if o.Local {
		return 0
	}
	client, err := o.Clientset()
	if err != nil {
		return 0
	}
	return cluster.ServerMinor(ctx, client)
}
