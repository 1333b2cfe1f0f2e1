package apply

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// Endpoints writes the v1 Endpoints object an endpoints.Plan asks for and
// returns it as the API server answered (or, for a client dry run, as it
// would have been sent); nil when the plan writes nothing. It refuses any
// object that does not carry opts.ManagedBy under
// endpoints.kubernetes.io/managed-by, before and after the plan, so an
// Endpoints object written by someone else is never overwritten. Updates
// carry the resourceVersion read: a concurrent writer gives ErrConflict, as
// does an object created by someone else since the read.
func Endpoints(ctx context.Context, client coreclient.EndpointsInterface, plan *endpoints.Plan, opts Options) (*corev1.Endpoints, error) {
	if plan.Action != endpoints.Create && plan.Action != endpoints.Update {
		return nil, nil
	}
	ep := plan.Desired
	if got := ep.Labels[endpoints.LabelManagedBy]; got != opts.ManagedBy {
		return nil, fmt.Errorf("refusing to write Endpoints %s/%s: managed by %q, not %q", ep.Namespace, ep.Name, got, opts.ManagedBy)
	}
	if plan.Action == endpoints.Update {
		if plan.Live == nil || plan.Live.Labels[endpoints.LabelManagedBy] != opts.ManagedBy || ep.ResourceVersion == "" {
			return nil, fmt.Errorf("refusing to update Endpoints %s/%s: the live object was not written by %s", ep.Namespace, ep.Name, opts.ManagedBy)
		}
	}
	if opts.DryRun == DryRunClient {
		return ep, nil
	}
	var dryRun []string
	if opts.DryRun == DryRunServer {
		dryRun = []string{metav1.DryRunAll}
	}
	var out *corev1.Endpoints
	var err error
	if plan.Action == endpoints.Create {
		out, err = client.Create(ctx, ep, metav1.CreateOptions{DryRun: dryRun, FieldManager: opts.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("%w: Endpoints %s/%s was created by someone else meanwhile", ErrConflict, ep.Namespace, ep.Name)
		}
	} else {
		out, err = client.Update(ctx, ep, metav1.UpdateOptions{DryRun: dryRun, FieldManager: opts.FieldManager})
	}
	if err != nil {
		return nil, explain(string(plan.Action)+" endpoints", err)
	}
	return out, nil
}
