package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// ourEndpoints lists the Endpoints objects marked with our managed-by value,
// selected by label on the server.
func ourEndpoints(ctx context.Context, client kubernetes.Interface, namespace, managedBy string) ([]*corev1.Endpoints, error) {
	return listOurs[*corev1.Endpoints](ctx, labels.Set{endpoints.LabelManagedBy: managedBy}.String(),
		func(o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Endpoints(namespace).List(ctx, o)
		})
}

// PruneEndpoints deletes Endpoints orphans one by one, each with its UID and
// resourceVersion as preconditions; apply refuses any object not marked as
// ours. It returns those deleted (or, in a dry run, that would be) and the
// first error; a conflict does not stop the others.
func PruneEndpoints(ctx context.Context, client kubernetes.Interface, orphans []explain.EndpointsOrphan, write apply.Options) ([]*corev1.Endpoints, error) {
	var deleted []*corev1.Endpoints
	var first error
	for _, o := range orphans {
		ep := o.Endpoints
		err := apply.DeleteEndpoints(ctx, client.CoreV1().Endpoints(ep.Namespace), ep, write)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("endpoints %s/%s: %w", ep.Namespace, ep.Name, err)
			}
			if ctx.Err() != nil {
				return deleted, first
			}
			continue
		}
		deleted = append(deleted, ep)
	}
	return deleted, first
}

// EndpointsRelease is what release did with a Service's Endpoints object.
type EndpointsRelease struct {
	// Ours: the object carried our mark when first read; nothing else is
	// reported about objects that never were ours.
	Ours bool
	// TakenOver: the object carries the Endpoints controller's mark (it
	// took ours over, during --wait or before release ran); nothing of
	// ours is left.
	TakenOver bool
	// Disowned: --force removed our mark, leaving every address in place
	// (or, in a dry run, would).
	Disowned bool
	Refused  string
	Err      error
}

// ReleaseEndpoints hands a Service's Endpoints object back to
// kube-controller-manager's Endpoints controller. There is one object per
// Service, so hand-back is not a delete: upstream's controller rewrites
// any Endpoints object of a Service with a selector whose managed-by label
// is not its own (labelsCorrectForEndpoints), and marks it
// endpoint-controller. Release therefore waits for that takeover and never
// deletes: a delete would leave consumers of v1 Endpoints without
// addresses until the controller re-creates the object. --force removes
// only our mark (apply.DisownEndpoints), so no address disappears either.
// An object without our mark is never written.
func ReleaseEndpoints(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, opts ReleaseOptions) EndpointsRelease {
	var out EndpointsRelease
	start, conflicts := time.Now(), 0
	for {
		ep, err := client.CoreV1().Endpoints(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// Deleted by someone meanwhile: nothing of ours is left.
			return EndpointsRelease{}
		}
		if err != nil {
			out.Err = fmt.Errorf("read endpoints %s/%s: %w", svc.Namespace, svc.Name, err)
			return out
		}
		if !explain.OursEndpoints(ep, opts.Write.ManagedBy) {
			out.TakenOver = ep.Labels[endpoints.LabelManagedBy] == endpoints.ControllerManagedBy
			return out
		}
		out.Ours = true
		if unplanned(svc) {
			out.Refused = fmt.Sprintf("endpoints %s/%s is ours, but svc/%s has no selector or is ExternalName: the Endpoints controller will not take it over; kubectl slices prune -n %s deletes it",
				svc.Namespace, svc.Name, svc.Name, svc.Namespace)
			return out
		}
		if opts.Force {
			_, err := apply.DisownEndpoints(ctx, client.CoreV1().Endpoints(svc.Namespace), ep, opts.Write)
			if errors.Is(err, apply.ErrConflict) && conflicts < maxConflicts {
				conflicts++
				continue
			}
			out.Disowned, out.Err = err == nil, err
			return out
		}
		if opts.Wait > 0 && time.Since(start) < opts.Wait {
			select {
			case <-ctx.Done():
				out.Err = ctx.Err()
				return out
			case <-time.After(opts.Poll):
			}
			continue
		}
		hint := "wait for it with --wait"
		if opts.Wait > 0 {
			hint = "it did not within --wait; wait longer"
		}
		out.Refused = fmt.Sprintf("endpoints %s/%s still carries %s=%s: kube-controller-manager's Endpoints controller has not taken it over "+
			"(it rewrites it when it starts or when the Service's Pods change); %s, or pass --force to remove our mark and leave its addresses for the controller to overwrite",
			svc.Namespace, svc.Name, endpoints.LabelManagedBy, opts.Write.ManagedBy, hint)
		return out
	}
}
