package syncer

import (
	"context"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
)

// EndpointsAfter writes, after the slices, the legacy v1 Endpoints object
// of each Service whose slices synced, from the Pods its slices were
// planned from (sync --with-endpoints), one Service after the other. done
// is called with each outcome and the index of its run in runs; runs is
// not changed.
func EndpointsAfter(ctx context.Context, client kubernetes.Interface, runs []Outcome, managedBy string, write apply.Options, done func(i int, out EndpointsOutcome)) {
	get := GetEndpoints(client)
	for i, run := range runs {
		svc := run.Input.Service
		if run.Err != nil || svc == nil {
			continue
		}
		done(i, SyncEndpoints(ctx, client, svc, run.Input.Pods, EndpointsOptions{Lookup: get, Retry: get, ManagedBy: managedBy, Write: write}))
	}
}
