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

// DeleteEndpoints deletes an Endpoints object of ours (prune), with the UID
// and resourceVersion read as preconditions: an object rewritten since (by
// a sync, or by the Endpoints controller taking it over) gives ErrConflict
// and is kept. It refuses any object not marked with opts.ManagedBy.
func DeleteEndpoints(ctx context.Context, client coreclient.EndpointsInterface, ep *corev1.Endpoints, opts Options) error {
	if err := oursOnly(ep, opts, "delete"); err != nil {
		return err
	}
	if opts.DryRun == DryRunClient {
		return nil
	}
	do := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ep.UID, ResourceVersion: &ep.ResourceVersion}}
	if opts.DryRun == DryRunServer {
		do.DryRun = []string{metav1.DryRunAll}
	}
	err := client.Delete(ctx, ep.Name, do)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("%w: Endpoints %s/%s changed since it was read", ErrConflict, ep.Namespace, ep.Name)
	case err != nil:
		return explain("delete endpoints", err)
	}
	return nil
}

// DisownEndpoints hands an Endpoints object of ours back (release --force):
// it removes our managed-by mark and changes nothing else, so every address
// stays published until the Endpoints controller rewrites the object, and
// no sync of ours writes it again. The update carries the resourceVersion
// read (ErrConflict when the object changed). It refuses any object not
// marked with opts.ManagedBy.
func DisownEndpoints(ctx context.Context, client coreclient.EndpointsInterface, ep *corev1.Endpoints, opts Options) (*corev1.Endpoints, error) {
	if err := oursOnly(ep, opts, "release"); err != nil {
		return nil, err
	}
	out := ep.DeepCopy()
	delete(out.Labels, endpoints.LabelManagedBy)
	if opts.DryRun == DryRunClient {
		return out, nil
	}
	uo := metav1.UpdateOptions{FieldManager: opts.FieldManager}
	if opts.DryRun == DryRunServer {
		uo.DryRun = []string{metav1.DryRunAll}
	}
	out, err := client.Update(ctx, out, uo)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Endpoints %s/%s changed since it was read", ErrConflict, ep.Namespace, ep.Name)
	}
	if err != nil {
		return nil, explain("release endpoints", err)
	}
	return out, nil
}

func oursOnly(ep *corev1.Endpoints, opts Options, verb string) error {
	if got := ep.Labels[endpoints.LabelManagedBy]; opts.ManagedBy == "" || got != opts.ManagedBy {
		return fmt.Errorf("refusing to %s Endpoints %s/%s: managed by %q, not %q", verb, ep.Namespace, ep.Name, got, opts.ManagedBy)
	}
	if ep.ResourceVersion == "" {
		return fmt.Errorf("refusing to %s Endpoints %s/%s: no resourceVersion read", verb, ep.Namespace, ep.Name)
	}
	return nil
}
