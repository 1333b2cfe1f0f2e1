package cluster

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// sliceServiceIndex indexes EndpointSlices by "namespace/service-name".
const sliceServiceIndex = "service"

func sliceService(obj any) ([]string, error) {
	s, ok := obj.(*discovery.EndpointSlice)
	if !ok {
		return nil, nil
	}
	name, ok := s.Labels[discovery.LabelServiceName]
	if !ok {
		return nil, nil
	}
	return []string{s.Namespace + "/" + name}, nil
}

// Cache holds Services, Pods, EndpointSlices and (when readable) Nodes of a
// namespace, or of every namespace, in memory, and serves reconcile.Input
// from it with selector matching in memory, as the controller's listers do.
// It is filled either once by listing (Fill: one-shot runs over many
// Services) or kept current by shared informers (Informers: the watch loop).
type Cache struct {
	client    kubernetes.Interface
	namespace string // "" for every namespace

	Services, Pods, Slices, Nodes cache.Indexer
	// NodesUnreadable: RBAC lets us neither list nor watch Nodes, so zones
	// are unknown and the planner keeps the live ones.
	NodesUnreadable bool
	// Endpoints is held by the watch loop only (Informers), for mirroring
	// selectorless Services; nil in one-shot runs, which GET the few they
	// need. EndpointsUnreadable: RBAC lets us not list or watch them.
	Endpoints           cache.Indexer
	EndpointsUnreadable bool
	// Denied names the optional rights found missing at start-up ("watch
	// nodes"), for the loop to say what it runs without.
	Denied map[string]string
	// FillNamespaces, when set on a cache of every namespace, has Fill
	// list Pods and EndpointSlices in these namespaces only, a few at once
	// (the namespaces of the Services a run works on).
	FillNamespaces []string
	// filled groups the Pods of a one-shot Fill for PodsMatching; nil for
	// informers' stores.
	filled filledGroups
	// podGroups memoizes PodGroups (TrackPodGroups).
	podGroups *podGroupMemo
	// GroupPods: the admission webhook reads PodGroups from this cache, so
	// Informers indexes and memoizes Pods by group. Off otherwise: every Pod
	// event would pay for a group key nobody reads.
	GroupPods bool
	// KeepEndpoints, when set, is our endpoints.kubernetes.io/managed-by
	// value: Informers keeps those Endpoints objects whole
	// (TransformKeeping), for the loop that writes them.
	KeepEndpoints string
	// ReadOnly: the cache's user only reads (the admission webhook, verify
	// --watch), so Informers asks neither for the rights to write
	// EndpointSlices nor for the gets that re-read after a write conflict.
	ReadOnly bool
}

// fillListsAtOnce bounds Fill's lists in flight.
const fillListsAtOnce = 4

// NewCache returns an empty cache scoped to namespace ("" for all).
func NewCache(client kubernetes.Interface, namespace string) *Cache {
	return &Cache{client: client, namespace: namespace}
}

func nsIndexers() cache.Indexers {
	return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
}

// Fill lists Pods, EndpointSlices and Nodes once each, paginated, into fresh
// stores: a one-shot run needs no watch. Services come from the caller (it
// has just listed them to resolve its targets). A Forbidden answer for Nodes
// marks them unreadable; any other error fails.
func (c *Cache) Fill(ctx context.Context) error {
	c.Pods = cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())
	c.Slices = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{sliceServiceIndex: sliceService})
	c.Nodes = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	c.Services = cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())
	fill := func(store cache.Indexer, what string, call func(context.Context, metav1.ListOptions) (runtime.Object, error)) func() error {
		return func() error {
			err := list(ctx, call, func(obj runtime.Object) {
				t, _ := Transform(obj)
				_ = store.Add(t)
			})
			if err != nil {
				return fmt.Errorf("list %s: %w", what, err)
			}
			return nil
		}
	}
	namespaces := []string{c.namespace}
	if c.namespace == metav1.NamespaceAll && c.FillNamespaces != nil {
		namespaces = c.FillNamespaces
	}
	// One list per namespace, a few at once: a paginated list of every
	// namespace fetches its pages one after another, so the API server's
	// encoding and our decoding take turns; lists side by side overlap
	// them (make bench-envelope, 100,000 Pods in 50 namespaces).
	err := parallel(
		func() error {
			var lists errgroup.Group
			lists.SetLimit(fillListsAtOnce)
			for _, ns := range namespaces {
				lists.Go(fill(c.Pods, "pods", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return c.client.CoreV1().Pods(ns).List(ctx, o)
				}))
				lists.Go(fill(c.Slices, "endpointslices", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return c.client.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
				}))
			}
			return lists.Wait()
		},
		func() error {
			err := fill(c.Nodes, "nodes", func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return c.client.CoreV1().Nodes().List(ctx, o)
			})()
			if apierrors.IsForbidden(err) {
				c.NodesUnreadable = true
				return nil
			}
			return err
		},
	)
	if err == nil {
		c.filled = groupFilled(c.Pods.List())
	}
	return err
}

// AddService puts a Service the caller read into the cache.
func (c *Cache) AddService(svc *corev1.Service) {
	t, _ := Transform(svc.DeepCopy())
	_ = c.Services.Add(t)
}

// Informers registers shared informers for everything the cache holds on
// the one informer factory of the process (scoped to the cache's namespace,
// objects slimmed by Transform) and takes their stores. Nodes and Endpoints
// are watched only when RBAC allows listing and watching them, asked with
// one SelfSubjectAccessReview each; otherwise NodesUnreadable or
// EndpointsUnreadable. The caller starts them (Informers.Start).
func (c *Cache) Informers(ctx context.Context) (*Informers, error) {
	// Informers retry a forbidden list forever; say what is missing instead.
	if err := c.mayWatch(ctx); err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.client, 0,
		informers.WithNamespace(c.namespace), informers.WithTransform(TransformKeeping(c.KeepEndpoints)))
	out := &Informers{
		Services: factory.Core().V1().Services().Informer(),
		Pods:     factory.Core().V1().Pods().Informer(),
		Slices:   factory.Discovery().V1().EndpointSlices().Informer(),
		factory:  factory,
	}
	if err := out.Slices.AddIndexers(cache.Indexers{sliceServiceIndex: sliceService}); err != nil {
		return nil, err
	}
	if c.GroupPods {
		if err := out.Pods.AddIndexers(cache.Indexers{PodGroupIndex: podGroup}); err != nil {
			return nil, err
		}
		reg, err := out.Pods.AddEventHandler(c.TrackPodGroups())
		if err != nil {
			return nil, err
		}
		// The memo lists the groups an admission reads: it must have heard
		// of every Pod of the first list before the cache counts as filled.
		out.podGroupsSynced = reg.HasSynced
	}
	c.Services, c.Pods, c.Slices = out.Services.GetIndexer(), out.Pods.GetIndexer(), out.Slices.GetIndexer()
	c.filled = nil
	c.Denied = map[string]string{}
	// The cache's lookup (EndpointsOf) serves the mirroring planner; it
	// GETs an object Transform emptied (one a controller wrote) whole.
	ok, err := c.canRead(ctx, "endpoints", "list", "watch", "get")
	if err != nil {
		return nil, err
	}
	if ok {
		// Every Endpoints object of the scope, as upstream's mirroring
		// controller holds: the list cannot be narrowed to those of
		// selectorless Services (see EndpointsOf).
		out.Endpoints = factory.Core().V1().Endpoints().Informer()
		c.Endpoints = out.Endpoints.GetIndexer()
	} else {
		c.EndpointsUnreadable = true
	}
	// After a write conflict the inputs are re-read from the API server
	// (cluster.Reader), which GETs up to nodeGetLimit Nodes one by one.
	nodeVerbs := []string{"list", "watch", "get"}
	if c.ReadOnly {
		nodeVerbs = nodeVerbs[:2]
	}
	ok, err = c.canRead(ctx, "nodes", nodeVerbs...)
	if err != nil {
		return nil, err
	}
	if ok {
		out.Nodes = factory.Core().V1().Nodes().Informer()
		c.Nodes = out.Nodes.GetIndexer()
	} else {
		c.NodesUnreadable = true
		c.Nodes = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	}
	return out, nil
}

// canRead asks whether a core resource may be read with every verb given;
// the first one denied is kept in Denied.
func (c *Cache) canRead(ctx context.Context, resource string, verbs ...string) (bool, error) {
	for _, verb := range verbs {
		ok, err := c.allowed(ctx, verb, "", resource)
		if err != nil {
			return false, err
		}
		if !ok {
			c.Denied[resource] = verb + " " + resource
			return false, nil
		}
	}
	return true, nil
}

// mayWatch checks the rights keeping slices current needs, in the cache's
// namespace (or all), and returns a Forbidden error naming the first one
// missing.
func (c *Cache) mayWatch(ctx context.Context) error {
	need := []struct {
		group, resource string
		verbs           []string
	}{
		// get: after a write conflict the Service is re-read (cluster.Reader).
		{"", "services", []string{"list", "watch", "get"}},
		{"", "pods", []string{"list", "watch"}},
		{discovery.GroupName, "endpointslices", []string{"list", "watch", "create", "update", "delete"}},
	}
	if c.ReadOnly {
		// No write, so no conflict to re-read after either.
		need[0].verbs, need[2].verbs = need[0].verbs[:2], need[2].verbs[:2]
	}
	for _, n := range need {
		for _, verb := range n.verbs {
			ok, err := c.allowed(ctx, verb, n.group, n.resource)
			if err != nil {
				return err
			}
			if !ok {
				return apierrors.NewForbidden(schema.GroupResource{Group: n.group, Resource: n.resource}, "",
					fmt.Errorf("cannot %s %s", verb, n.resource))
			}
		}
	}
	return nil
}

// allowed asks the API server, with a SelfSubjectAccessReview, whether the
// user may do verb on a resource in the cache's namespace.
func (c *Cache) allowed(ctx context.Context, verb, group, resource string) (bool, error) {
	ns := c.namespace
	if resource == "nodes" {
		ns = ""
	}
	return Allowed(ctx, c.client, verb, group, resource, ns, "")
}

// Allowed asks the API server, with a SelfSubjectAccessReview (which every
// authenticated user may create), whether the caller may do verb on a
// resource in namespace ("" for all) and, when name is set, on that object.
// The loop checks its rights at start-up: client-go's informers and leader
// elector retry a forbidden call for ever and say so only in their logs.
func Allowed(ctx context.Context, client kubernetes.Interface, verb, group, resource, namespace, name string) (bool, error) {
	r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: group, Resource: resource, Name: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("ask whether the caller may %s %s: %w", verb, resource, err)
	}
	return r.Status.Allowed, nil
}

// DeniedVerb returns the first of verbs the caller may not do on a
// resource in namespace ("" for all), or "" when all are allowed.
func DeniedVerb(ctx context.Context, client kubernetes.Interface, group, resource, namespace, name string, verbs ...string) (string, error) {
	for _, verb := range verbs {
		ok, err := Allowed(ctx, client, verb, group, resource, namespace, name)
		if err != nil {
			return "", err
		}
		if !ok {
			return verb, nil
		}
	}
	return "", nil
}

// Service returns a cached Service, or a NotFound API error.
func (c *Cache) Service(_ context.Context, namespace, name string) (*corev1.Service, error) {
	obj, ok, err := c.Services.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("services"), name)
	}
	return obj.(*corev1.Service), nil
}

// EndpointsMarked returns a Service's cached Endpoints object as cached,
// nil when there is none: a syncer.EndpointsLookup for writing legacy
// Endpoints, which needs only the labels of an object that is not ours
// (it is left alone) and has ours whole (KeepEndpoints).
func (c *Cache) EndpointsMarked(_ context.Context, namespace, name string) (*corev1.Endpoints, error) {
	if c.EndpointsUnreadable || c.Endpoints == nil {
		return nil, apierrors.NewForbidden(corev1.Resource("endpoints"), name, fmt.Errorf("cannot list, watch and get endpoints"))
	}
	obj, ok, err := c.Endpoints.GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, err
	}
	return obj.(*corev1.Endpoints), nil
}

// EndpointsOf returns a Service's cached Endpoints object, nil when there is
// none: a syncer.EndpointsLookup with no API call. Without the rights to
// watch Endpoints it answers Forbidden, so the planner mirrors nothing and
// says why. An object Transform emptied (one a controller wrote) is read
// from the API server: only a Service that lost its selector mirrors one.
func (c *Cache) EndpointsOf(ctx context.Context, namespace, name string) (*corev1.Endpoints, error) {
	if c.EndpointsUnreadable {
		return nil, apierrors.NewForbidden(corev1.Resource("endpoints"), name, fmt.Errorf("cannot list, watch and get endpoints"))
	}
	if c.Endpoints == nil {
		return nil, fmt.Errorf("endpoints %s/%s: Endpoints are not cached", namespace, name)
	}
	obj, ok, err := c.Endpoints.GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, err
	}
	ep := obj.(*corev1.Endpoints)
	if _, slim := ep.Annotations[SlimmedAnnotation]; !slim {
		return ep, nil
	}
	full, err := c.client.CoreV1().Endpoints(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read endpoints %s/%s: %w", namespace, name, err)
	}
	full.ManagedFields = nil
	delete(full.Annotations, corev1.LastAppliedConfigAnnotation)
	return full, nil
}

// Load serves reconcile.Input from the cache: the Pods of the Service's
// namespace its selector matches, the Nodes they run on (all Nodes for
// topology-mode: Auto) and its slices of every manager. The objects are the
// cache's own: the planner never modifies its input.
func (c *Cache) Load(_ context.Context, svc *corev1.Service) (reconcile.Input, error) {
	in := reconcile.Input{Service: svc, Slices: c.SlicesOf(svc.Namespace, svc.Name)}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || len(svc.Spec.Selector) == 0 {
		return in, nil
	}
	in.Pods = c.PodsMatching(svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector))
	in.Nodes = c.nodesFor(in.Pods, needsAllNodes(svc))
	return in, nil
}

// SlicesOf returns the cached slices labelled for a Service.
func (c *Cache) SlicesOf(namespace, service string) []*discovery.EndpointSlice {
	objs, _ := c.Slices.ByIndex(sliceServiceIndex, namespace+"/"+service)
	out := make([]*discovery.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*discovery.EndpointSlice))
	}
	return out
}

// PodsMatching returns the cached Pods of a namespace a selector matches,
// by name, each built from its record for this call (so the large struct
// lives as long as the plan that reads it).
func (c *Cache) PodsMatching(namespace string, sel labels.Selector) []*corev1.Pod {
	if c.filled != nil {
		return c.filled.matching(namespace, sel)
	}
	objs, _ := c.Pods.ByIndex(cache.NamespaceIndex, namespace)
	var matched []any
	for _, o := range objs {
		if r, ok := o.(*PodRecord); ok && sel.Matches(labels.Set(r.Labels)) {
			matched = append(matched, r)
		}
	}
	return podsOf(matched)
}

// PodsAndNodes returns the named Pods of a namespace as cached (Pod nil for
// one that is gone) and the Nodes of those sel matches: what a plan from the
// Pods that changed reads (reconcile.Memo.Plan), without listing the
// namespace.
func (c *Cache) PodsAndNodes(namespace string, names []string, sel labels.Selector) ([]reconcile.PodChange, reconcile.Nodes) {
	changes := make([]reconcile.PodChange, 0, len(names))
	var members []*corev1.Pod
	for _, name := range names {
		var pod *corev1.Pod
		if o, ok, _ := c.Pods.GetByKey(namespace + "/" + name); ok {
			pod = PodOf(o)
		}
		changes = append(changes, reconcile.PodChange{Name: name, Pod: pod})
		if pod != nil && sel.Matches(labels.Set(pod.Labels)) {
			members = append(members, pod)
		}
	}
	return changes, c.nodesFor(members, false)
}

func (c *Cache) nodesFor(pods []*corev1.Pod, all bool) reconcile.Nodes {
	if c.NodesUnreadable {
		return reconcile.Nodes{Unreadable: true}
	}
	nodes := reconcile.Nodes{ByName: map[string]*corev1.Node{}}
	if all {
		for _, o := range c.Nodes.List() {
			n := o.(*corev1.Node)
			nodes.ByName[n.Name] = n
		}
		nodes.Complete = true
		return nodes
	}
	for _, p := range pods {
		if name := p.Spec.NodeName; name != "" && nodes.ByName[name] == nil {
			if o, ok, _ := c.Nodes.GetByKey(name); ok {
				nodes.ByName[name] = o.(*corev1.Node)
			}
		}
	}
	return nodes
}
