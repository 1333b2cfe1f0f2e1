package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// syncEndpoints keeps a Service's legacy v1 Endpoints object current after
// its slices (Options.WithEndpoints), from the same Pods, as one-shot
// `sync --with-endpoints` does. An object another writer marked is left
// alone (endpoints.Skip); ours are cached whole (cluster.Cache.KeepEndpoints),
// so an unchanged Service costs no request.
func (c *Controller) syncEndpoints(ctx context.Context, key string, svc *corev1.Service, pods []*corev1.Pod) error {
	out := syncer.SyncEndpoints(ctx, c.client, svc, pods, syncer.EndpointsOptions{
		Lookup: c.cache.EndpointsMarked, Retry: syncer.GetEndpoints(c.client),
		ManagedBy: c.opts.Plan.ManagedBy, Write: c.opts.Write,
	})
	if out.Err != nil {
		return fmt.Errorf("endpoints: %w", out.Err)
	}
	if out.Written != nil {
		verb := map[endpoints.Action]string{endpoints.Create: "created", endpoints.Update: "updated"}[out.Plan.Action]
		c.report.EndpointsWrite(key, verb, printers.LoopEndpointsAddresses(out.Plan.Ready, out.Plan.NotReady))
	}
	return nil
}

// removeEndpoints deletes our Endpoints object of a Service that is gone,
// with its UID and resourceVersion as preconditions; one not marked ours
// is left alone.
func (c *Controller) removeEndpoints(ctx context.Context, key, ns, name string) error {
	ep, err := c.cache.EndpointsMarked(ctx, ns, name)
	if err != nil || ep == nil || ep.Labels[endpoints.LabelManagedBy] != c.opts.Plan.ManagedBy {
		return nil
	}
	if err := apply.DeleteEndpoints(ctx, c.client.CoreV1().Endpoints(ns), ep, c.opts.Write); err != nil {
		return fmt.Errorf("delete endpoints: %w", err)
	}
	c.report.EndpointsWrite(key, "deleted", "its Service is gone")
	return nil
}

// oursMarked reports whether an Endpoints object carries our mark.
func (c *Controller) oursMarked(ep *corev1.Endpoints) bool {
	return c.opts.WithEndpoints && ep.Labels[endpoints.LabelManagedBy] == c.opts.Plan.ManagedBy
}
