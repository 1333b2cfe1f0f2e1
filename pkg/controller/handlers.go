package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/mirror"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Handlers only map events to Service keys, as upstream's do; the workers
// do the work.

const podNodeIndex = "node"

func podNode(obj any) ([]string, error) {
	if r, ok := obj.(*cluster.PodRecord); ok && r.NodeName != "" {
		return []string{r.NodeName}, nil
	}
	return nil, nil
}

// register adds the handlers (and the Pods-by-Node index) before the
// informers start.
func (c *Controller) register(infs *cluster.Informers) error {
	if err := infs.Pods.AddIndexers(cache.Indexers{podNodeIndex: podNode}); err != nil {
		return err
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandlerFuncs
	}{
		{infs.Services, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onService,
			UpdateFunc: func(_, n any) { c.onService(n) },
			DeleteFunc: c.onServiceDelete,
		}},
		{infs.Pods, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { c.podServices(o, nil, c.now()) },
			UpdateFunc: c.onPodUpdate,
			DeleteFunc: func(o any) { c.podServices(o, nil, c.now()) },
		}},
		{infs.Slices, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onSliceAdd,
			UpdateFunc: c.onSliceUpdate,
			DeleteFunc: c.onSliceDelete,
		}},
		{infs.Endpoints, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onEndpoints,
			UpdateFunc: func(_, n any) { c.onEndpoints(n) },
			DeleteFunc: c.onEndpoints,
		}},
		{infs.Nodes, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.nodeServices,
			UpdateFunc: c.onNodeUpdate,
			DeleteFunc: c.nodeServices,
		}},
	}
	for _, h := range handlers {
		if h.inf == nil {
			continue // not readable with these credentials
		}
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return err
		}
	}
	return nil
}

func untomb(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

func (c *Controller) onService(obj any) {
	if svc, ok := untomb(obj).(*corev1.Service); ok && c.selected(svc) {
		key := svc.Namespace + "/" + svc.Name
		c.noteChange(key, c.now())
		c.enqueue(key, 0)
	}
}

// onEndpoints queues the selected, selectorless Service of the same name:
// only those are mirrored. Endpoints of selector Services (the endpoints
// controller's, numerous and busy) queue nothing, but for ours.
func (c *Controller) onEndpoints(obj any) {
	ep, ok := untomb(obj).(*corev1.Endpoints)
	if !ok {
		return
	}
	svc, err := c.cache.Service(context.Background(), ep.Namespace, ep.Name)
	// Ours (--with-endpoints) are kept as the Pods say: an edit is undone,
	// a delete re-created.
	if err == nil && (mirror.Applies(svc) || c.oursMarked(ep)) && c.selected(svc) {
		key := ep.Namespace + "/" + ep.Name
		c.noteChange(key, c.now())
		c.enqueue(key, 0)
	}
}

// A deleted Service's slices of ours are removed, if it was one of ours.
func (c *Controller) onServiceDelete(obj any) { c.onService(obj) }

// onPodUpdate: a change the planner cannot see (the transform keeps only
// what it reads, so the resourceVersion is all that differs) is ignored; a
// label change touches the Services of the old and of the new labels.
func (c *Controller) onPodUpdate(oldObj, newObj any) {
	o, n := oldObj.(*cluster.PodRecord), newObj.(*cluster.PodRecord)
	a, b := *o, *n
	a.ResourceVersion, b.ResourceVersion, a.Generation, b.Generation = "", "", 0, 0
	if equality.Semantic.DeepEqual(&a, &b) {
		return
	}
	var old *cluster.PodRecord
	if !labels.Equals(o.Labels, n.Labels) {
		old = o
	}
	c.podServices(n, old, c.now())
}

// podServices queues, after the batch period, every selected Service whose
// selector matches pod (or old, the Pod's previous labels); at is when the
// event was observed.
func (c *Controller) podServices(obj any, old *cluster.PodRecord, at time.Time) {
	pod, ok := untomb(obj).(*cluster.PodRecord)
	if !ok {
		return
	}
	objs, _ := c.cache.Services.ByIndex(cache.NamespaceIndex, pod.Namespace)
	for _, o := range objs {
		svc := o.(*corev1.Service)
		if len(svc.Spec.Selector) == 0 || !c.selected(svc) {
			continue
		}
		sel := labels.SelectorFromValidatedSet(svc.Spec.Selector)
		if sel.Matches(labels.Set(pod.Labels)) || (old != nil && sel.Matches(labels.Set(old.Labels))) {
			key := svc.Namespace + "/" + svc.Name
			if c.incremental() && c.leads.Load() {
				c.notes.add(key, pod.Name) // read only to plan from a memo
			}
			c.noteChange(key, at)
			c.enqueue(key, c.opts.BatchPeriod)
		}
	}
}

// onNodeUpdate: only what the planner reads of a Node matters, its labels
// (zone) and readiness.
func (c *Controller) onNodeUpdate(oldObj, newObj any) {
	o, n := oldObj.(*corev1.Node), newObj.(*corev1.Node)
	if labels.Equals(o.Labels, n.Labels) && equality.Semantic.DeepEqual(o.Status, n.Status) {
		return
	}
	c.nodeServices(n)
}

// nodeServices queues the Services of every Pod on a Node.
func (c *Controller) nodeServices(obj any) {
	node, ok := untomb(obj).(*corev1.Node)
	if !ok {
		return
	}
	pods, _ := c.cache.Pods.ByIndex(podNodeIndex, node.Name)
	at := c.now()
	for _, p := range pods {
		c.podServices(p, nil, at)
	}
}

func sliceService(s *discovery.EndpointSlice) (string, bool) {
	name, ok := s.Labels[discovery.LabelServiceName]
	return s.Namespace + "/" + name, ok
}

// queueForSlice queues a slice's Service. Slice-triggered syncs wait the
// batch period, as upstream's (which waits at least a second; our tracker
// already filters our own writes' echoes, so a hand edit is undone at once).
func (c *Controller) queueForSlice(s *discovery.EndpointSlice, delay time.Duration) {
	if key, ok := sliceService(s); ok {
		c.enqueue(key, delay)
	}
}

// isOurs: the slice carries a value this run writes; under a controller's
// own value that is both controllers' (reconcile.OurValues).
func (c *Controller) isOurs(s *discovery.EndpointSlice) bool {
	return reconcile.IsOurs(s.Labels[discovery.LabelManagedBy], c.opts.Plan.ManagedBy)
}

func (c *Controller) onSliceAdd(obj any) {
	s := obj.(*discovery.EndpointSlice)
	switch {
	case c.isOurs(s) && c.slices.ShouldSync(s):
		c.queueForSlice(s, c.opts.BatchPeriod)
	case !c.isOurs(s) && c.watchesController(s):
		c.queueForSlice(s, c.opts.BatchPeriod)
	case !c.isOurs(s) && c.watchingHandback(s):
		c.queueForSlice(s, time.Second)
	}
}

func (c *Controller) onSliceUpdate(oldObj, newObj any) {
	o, n := oldObj.(*discovery.EndpointSlice), newObj.(*discovery.EndpointSlice)
	ok1, _ := sliceService(o)
	ok2, _ := sliceService(n)
	if c.isOurs(o) && (!c.isOurs(n) || ok1 != ok2) {
		// Relabelled by hand (we never change these labels): the slice
		// left our keeping, and the stale-cache guard would otherwise wait
		// for it under its old Service for ever.
		c.slices.HandleDeletion(o)
	}
	switch {
	case ok1 != ok2:
		c.queueForSlice(o, c.opts.BatchPeriod)
		c.queueForSlice(n, c.opts.BatchPeriod)
	case c.isOurs(o) != c.isOurs(n):
		c.queueForSlice(n, c.opts.BatchPeriod)
	case c.isOurs(n) && c.slices.ShouldSync(n):
		c.queueForSlice(n, c.opts.BatchPeriod)
	case !c.isOurs(n) && c.watchesController(n):
		c.queueForSlice(n, c.opts.BatchPeriod)
	case !c.isOurs(n) && c.watchingHandback(n):
		c.queueForSlice(n, time.Second)
	}
}

// onSliceDelete: a slice of ours deleted by someone else is put back; in
// standby mode a controller's slice deleted is a difference to date.
func (c *Controller) onSliceDelete(obj any) {
	s, ok := untomb(obj).(*discovery.EndpointSlice)
	if ok && !c.isOurs(s) && c.watchesController(s) {
		c.queueForSlice(s, c.opts.BatchPeriod)
	}
	if !ok || !c.isOurs(s) {
		return
	}
	if !c.slices.HandleDeletion(s) {
		c.queueForSlice(s, c.opts.BatchPeriod)
	}
}
