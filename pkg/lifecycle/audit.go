package lifecycle

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Audit checks every Service of namespace ("" for all) and every slice of
// ours: one list per resource into the cluster cache, then each Service is
// planned and judged in memory as explain judges it.
func Audit(ctx context.Context, client kubernetes.Interface, namespace string, opts reconcile.Options) (explain.CheckReport, error) {
	r := explain.CheckReport{Schema: explain.CheckSchema, Findings: []explain.Finding{}}
	c := cluster.NewCache(client, namespace)
	var svcs []*corev1.Service
	errc := make(chan error, 1)
	go func() {
		var err error
		svcs, err = cluster.Reader{Client: client}.Services(ctx, namespace, "")
		if err != nil {
			err = fmt.Errorf("list services: %w", err)
		}
		errc <- err
	}()
	fillErr := c.Fill(ctx)
	if err := <-errc; err != nil {
		return r, err
	}
	if fillErr != nil {
		return r, fillErr
	}
	for _, s := range svcs {
		c.AddService(s)
	}
	// Our Endpoints objects (sync --with-endpoints), selected by label.
	eps, err := ourEndpoints(ctx, client, namespace, opts.ManagedBy)
	if err != nil {
		return r, fmt.Errorf("list endpoints: %w", err)
	}
	epByKey := map[string]*corev1.Endpoints{}
	for _, ep := range eps {
		epByKey[ep.Namespace+"/"+ep.Name] = ep
	}
	// The Endpoints controller's own objects, to report their drift.
	theirs, err := ourEndpoints(ctx, client, namespace, endpoints.ControllerManagedBy)
	if err != nil {
		return r, fmt.Errorf("list endpoints: %w", err)
	}
	controllerEp := map[string]*corev1.Endpoints{}
	for _, ep := range theirs {
		controllerEp[ep.Namespace+"/"+ep.Name] = ep
	}
	r.Endpoints = len(eps)
	r.Services = len(svcs)
	eo := explain.Options{ManagedBy: opts.ManagedBy, MaxEndpointsPerSlice: opts.MaxEndpointsPerSlice, Now: time.Now()}
	for _, obj := range c.Services.List() {
		svc := obj.(*corev1.Service)
		in, err := c.Load(ctx, svc)
		if err != nil {
			return r, err
		}
		plan, err := reconcile.Compute(in, opts)
		if err != nil {
			return r, fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		r.Findings = append(r.Findings, explain.CheckService(in, plan, eo)...)
		if f := staleEndpoints(in, epByKey[svc.Namespace+"/"+svc.Name], opts.ManagedBy); f != nil {
			r.Findings = append(r.Findings, *f)
		}
		if f := controllerEndpointsDrift(in, controllerEp[svc.Namespace+"/"+svc.Name]); f != nil {
			r.Findings = append(r.Findings, *f)
		}
	}
	var slices []*discovery.EndpointSlice
	for _, obj := range c.Slices.List() {
		slices = append(slices, obj.(*discovery.EndpointSlice))
	}
	r.Slices = len(slices)
	r.Findings = append(r.Findings, explain.OrphanFindings(explain.Orphans(slices, opts.ManagedBy, cachedService(c)), opts.ManagedBy)...)
	r.Findings = append(r.Findings, explain.EndpointsOrphanFindings(explain.EndpointsOrphans(eps, opts.ManagedBy, cachedService(c)), opts.ManagedBy)...)
	explain.SortFindings(r.Findings)
	r.Healthy = len(r.Findings) == 0
	return r, nil
}

// staleEndpoints plans the Service's Endpoints object of ours from the Pods
// its slices are planned from; a finding when a sync would update it.
// Services without selector or ExternalName plan nothing: an object of
// ours for them is an orphan.
func staleEndpoints(in reconcile.Input, ep *corev1.Endpoints, managedBy string) *explain.Finding {
	if ep == nil {
		return nil
	}
	plan, err := endpoints.Compute(endpoints.Input{Service: in.Service, Pods: in.Pods, Live: ep}, endpoints.Options{ManagedBy: managedBy})
	if err != nil {
		return nil
	}
	return explain.EndpointsFinding(plan, managedBy)
}

// controllerEndpointsDrift judges the Endpoints controller's object of a
// Service against what its Pods call for.
func controllerEndpointsDrift(in reconcile.Input, ep *corev1.Endpoints) *explain.Finding {
	if ep == nil {
		return nil
	}
	plan, err := endpoints.Compute(endpoints.Input{Service: in.Service, Pods: in.Pods, Live: ep}, endpoints.Options{ManagedBy: endpoints.ControllerManagedBy})
	if err != nil {
		return nil
	}
	return explain.ControllerEndpointsFinding(plan)
}

// cachedService looks Services up in the cache for explain.Orphans.
func cachedService(c *cluster.Cache) func(ns, name string) *corev1.Service {
	return func(ns, name string) *corev1.Service {
		obj, ok, _ := c.Services.GetByKey(ns + "/" + name)
		if !ok {
			return nil
		}
		return obj.(*corev1.Service)
	}
}

// sortSlices orders slices by namespace and name.
func sortSlices(s []*discovery.EndpointSlice) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Namespace != s[j].Namespace {
			return s[i].Namespace < s[j].Namespace
		}
		return s[i].Name < s[j].Name
	})
}
