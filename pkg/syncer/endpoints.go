package syncer

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

// GetEndpoints reads a Service's Endpoints object with a GET: one-shot
// commands plan a few Services and need no Endpoints cache.
func GetEndpoints(client kubernetes.Interface) EndpointsLookup {
	return func(ctx context.Context, ns, name string) (*corev1.Endpoints, error) {
		ep, err := client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read endpoints %s/%s: %w", ns, name, err)
		}
		return ep, nil
	}
}

// EndpointsOutcome is what happened to one Service's legacy v1 Endpoints
// object (outcome.EndpointsOutcome).
type EndpointsOutcome = outcome.EndpointsOutcome

// EndpointsOptions tune SyncEndpoints.
type EndpointsOptions struct {
	// Lookup reads the live object first (the loop's cache, or a GET); a
	// conflict re-reads it with Retry (a GET), since a cache may still
	// hold the state that conflicted.
	Lookup, Retry EndpointsLookup
	ManagedBy     string
	Write         apply.Options
}

// SyncEndpoints plans and writes the legacy Endpoints object of a Service
// from the Pods its slices were planned from (Outcome.Input), with the
// slices' trigger-time rule. Objects another writer marked are left alone
// (endpoints.Skip).
func SyncEndpoints(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, pods []*corev1.Pod, opts EndpointsOptions) EndpointsOutcome {
	var out EndpointsOutcome
	po := endpoints.Options{ManagedBy: opts.ManagedBy, TriggerTime: LatestChange(svc, pods)}
	lookup := opts.Lookup
	attempt := 0
	out.Err = retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return errors.Is(err, apply.ErrConflict) && ctx.Err() == nil
	}, func() error {
		if attempt++; attempt > 1 && opts.Retry != nil {
			lookup = opts.Retry
		}
		live, err := lookup(ctx, svc.Namespace, svc.Name)
		if err != nil {
			return err
		}
		if out.Plan, err = endpoints.Compute(endpoints.Input{Service: svc, Pods: pods, Live: live}, po); err != nil {
			return err
		}
		out.Written, err = apply.Endpoints(ctx, client.CoreV1().Endpoints(svc.Namespace), out.Plan, opts.Write)
		return err
	})
	return out
}
