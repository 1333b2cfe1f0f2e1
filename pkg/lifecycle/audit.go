package lifecycle

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// Audit checks every Service of namespace ("" for all) and every slice of
// ours: one list per resource into the cluster cache, then each Service is
// planned and judged in memory as explain judges it.
func Audit(ctx context.Context, client kubernetes.Interface, namespace string, opts reconcile.Options) (explain.CheckReport, error) {
	return AuditWith(ctx, client, namespace, opts, nil)
}

// AuditStep is told, as each Service is judged, how many Services there
// are, which one was judged and how long it took (for a progress line).
type AuditStep func(total int, key string, took time.Duration)

// AuditWith is Audit calling step (when not nil) after each Service.
func AuditWith(ctx context.Context, client kubernetes.Interface, namespace string, opts reconcile.Options, step AuditStep) (explain.CheckReport, error) {
	r := explain.CheckReport{Schema: explain.CheckSchema, Findings: []explain.Finding{}}
	c, svcs, err := auditCache(ctx, client, namespace)
	if err != nil {
		return r, err
	}
	eps, epByKey, controllerEp, err := auditEndpoints(ctx, client, namespace, opts.ManagedBy, &r)
	if err != nil {
		return r, err
	}
	r.Endpoints = len(eps)
	r.Services = len(svcs)
	lookup, unreadable := endpointsOnce(client)
	now := time.Now()
	services := c.Services.List()
	for _, obj := range services {
		svc := obj.(*corev1.Service)
		began := time.Now()
		in, err := c.Load(ctx, svc)
		if err != nil {
			return r, err
		}
		// The planner sync uses: selectorless Services are mirrored from
		// their Endpoints object, read with a GET (they are few).
		plan, err := judge.PlanService(ctx, lookup, in, opts)
		if err != nil {
			return r, fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		eo := explain.Options{ManagedBy: judge.ManagedByOf(svc, opts.ManagedBy), MaxEndpointsPerSlice: opts.MaxEndpointsPerSlice, Now: now}
		r.Findings = append(r.Findings, explain.CheckService(in, plan, eo)...)
		if f := staleEndpoints(in, epByKey[svc.Namespace+"/"+svc.Name], opts.ManagedBy); f != nil {
			r.Findings = append(r.Findings, *f)
		}
		if f := controllerEndpointsDrift(in, controllerEp[svc.Namespace+"/"+svc.Name]); f != nil {
			r.Findings = append(r.Findings, *f)
		}
		if step != nil {
			step(len(services), svc.Namespace+"/"+svc.Name, time.Since(began))
		}
	}
	if n := *unreadable; n > 0 {
		r.Skipped = append(r.Skipped, fmt.Sprintf("mirrored slices of %d Services without selector not checked: reading their Endpoints objects is forbidden", n))
	}
	var slices []*discovery.EndpointSlice
	for _, obj := range c.Slices.List() {
		slices = append(slices, obj.(*discovery.EndpointSlice))
	}
	r.Slices = len(slices)
	// A run under a controller's value writes both controllers' values
	// (reconcile.OurValues): slices of either are ours to judge.
	for _, mb := range reconcile.OurValues(opts.ManagedBy) {
		r.Findings = append(r.Findings, explain.OrphanFindings(explain.Orphans(slices, mb, cachedService(c)), mb)...)
	}
	r.Findings = append(r.Findings, explain.EndpointsOrphanFindings(explain.EndpointsOrphans(eps, opts.ManagedBy, cachedService(c)), opts.ManagedBy)...)
	foreign, err := foreignWriters(ctx, client, namespace, opts.ManagedBy)
	if err != nil {
		return r, err
	}
	r.Findings = append(r.Findings, foreign...)
	explain.SortFindings(r.Findings)
	r.Healthy = len(r.Findings) == 0
	return r, nil
}

// auditCache fills a cache of namespace (Pods, Nodes, slices) while the
// Services are listed, and adds them to it.
func auditCache(ctx context.Context, client kubernetes.Interface, namespace string) (*cluster.Cache, []*corev1.Service, error) {
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
		return nil, nil, err
	}
	if fillErr != nil {
		return nil, nil, fillErr
	}
	for _, s := range svcs {
		c.AddService(s)
	}
	return c, svcs, nil
}

// auditEndpoints lists our Endpoints objects (sync --with-endpoints),
// selected by label, and the Endpoints controller's, each keyed by
// namespace/name. Reading them is optional, as for explain and sync:
// without the right to list Endpoints, what needs them is skipped and said
// so in r.Skipped.
func auditEndpoints(ctx context.Context, client kubernetes.Interface, namespace, managedBy string, r *explain.CheckReport) (
	ours []*corev1.Endpoints, byKey, controllerByKey map[string]*corev1.Endpoints, err error) {
	eps, err := ourEndpoints(ctx, client, namespace, managedBy)
	switch {
	case apierrors.IsForbidden(err):
		eps = nil
		r.Skipped = append(r.Skipped, "v1 Endpoints objects of "+managedBy+" (sync --with-endpoints) not checked: listing Endpoints is forbidden")
	case err != nil:
		return nil, nil, nil, fmt.Errorf("list endpoints: %w", err)
	}
	epByKey := map[string]*corev1.Endpoints{}
	for _, ep := range eps {
		epByKey[ep.Namespace+"/"+ep.Name] = ep
	}
	// The Endpoints controller's own objects, to report their drift
	// (optional as ours: listed only when ours could be).
	var theirs []*corev1.Endpoints
	if eps != nil || err == nil {
		theirs, err = ourEndpoints(ctx, client, namespace, endpoints.ControllerManagedBy)
		switch {
		case apierrors.IsForbidden(err):
			theirs = nil
		case err != nil:
			return nil, nil, nil, fmt.Errorf("list endpoints: %w", err)
		}
	}
	controllerEp := map[string]*corev1.Endpoints{}
	for _, ep := range theirs {
		controllerEp[ep.Namespace+"/"+ep.Name] = ep
	}
	return eps, epByKey, controllerEp, nil
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

// endpointsOnce is a GET lookup that stops asking once the API server
// answered Forbidden (the answer would not change within a run), and counts
// the Services it could not answer for.
func endpointsOnce(client kubernetes.Interface) (syncer.EndpointsLookup, *int) {
	get := syncer.GetEndpoints(client)
	var forbidden error
	n := 0
	return func(ctx context.Context, ns, name string) (*corev1.Endpoints, error) {
		if forbidden != nil {
			n++
			return nil, forbidden
		}
		ep, err := get(ctx, ns, name)
		if apierrors.IsForbidden(err) {
			forbidden = err
			n++
		}
		return ep, err
	}, &n
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

// foreignWriters lists the controllers' slices once more, with the
// managedFields the cache drops, a page at a time, and keeps the findings
// of explain.ForeignWriters: only flagged slices stay in memory.
func foreignWriters(ctx context.Context, client kubernetes.Interface, namespace, managedBy string) ([]explain.Finding, error) {
	sel := fmt.Sprintf("%s in (%s,%s)", discovery.LabelManagedBy, reconcile.ControllerManagedBy, reconcile.MirroringManagedBy)
	opts := metav1.ListOptions{LabelSelector: sel, Limit: 500}
	var flagged []*discovery.EndpointSlice
	for {
		list, err := client.DiscoveryV1().EndpointSlices(namespace).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list endpointslices: %w", err)
		}
		for i := range list.Items {
			s := &list.Items[i]
			if len(explain.ForeignWriters([]*discovery.EndpointSlice{s}, managedBy, []string{apply.FieldManager})) > 0 {
				flagged = append(flagged, s)
			}
		}
		if list.Continue == "" {
			return explain.ForeignWriters(flagged, managedBy, []string{apply.FieldManager}), nil
		}
		opts.Continue = list.Continue
	}
}
