package cluster

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// PageSize is the list page size: large enough for few round trips (a
// 5,000-Pod Service in 3), small enough to keep each response near 2 MB.
// The pager fetches the next page while the last one is decoded.
const PageSize = 2000

// nodeGetLimit: up to this many distinct Nodes are fetched one by one;
// beyond it one paginated list is cheaper.
const nodeGetLimit = 20

// Reader reads planner inputs through a clientset.
type Reader struct {
	Client kubernetes.Interface
}

// Service reads one Service.
func (r Reader) Service(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	svc, err := r.Client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	// A server that is no API server (or a proxy in its way) may answer
	// with another object, which decodes as a Service with no name.
	if svc.Name != name || svc.Namespace != namespace {
		return nil, &WrongObjectError{Resource: "services", Namespace: namespace, Name: name, GotKind: svc.Kind, GotNamespace: svc.Namespace, GotName: svc.Name}
	}
	return svc, nil
}

// WrongObjectError: the server answered a GET with some other object.
type WrongObjectError struct {
	Resource, Namespace, Name      string
	GotKind, GotNamespace, GotName string
}

func (e *WrongObjectError) Error() string {
	got := ""
	switch {
	case e.GotName != "":
		got = fmt.Sprintf(" (it names %s/%s)", e.GotNamespace, e.GotName)
	case e.GotKind != "":
		got = " (a " + e.GotKind + ")"
	}
	return fmt.Sprintf("the server returned the wrong kind of object for GET %s/%s in namespace %s%s; is the kubeconfig's server a Kubernetes API server?",
		e.Resource, e.Name, e.Namespace, got)
}

// Load reads everything the planner needs for one Service. A Service without
// a selector or of type ExternalName gets its slices but no Pods, since the
// planner will not plan it. Node read errors other than Forbidden fail.
func (r Reader) Load(ctx context.Context, svc *corev1.Service) (reconcile.Input, error) {
	in := reconcile.Input{Service: svc}
	// Slices and Pods are independent reads: fetch them at once.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		in.Slices, err = r.Slices(gctx, svc.Namespace, svc.Name)
		return err
	})
	planned := svc.Spec.Type != corev1.ServiceTypeExternalName && len(svc.Spec.Selector) > 0
	if planned {
		g.Go(func() (err error) {
			in.Pods, err = r.Pods(gctx, svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector).String())
			return err
		})
	}
	if err := g.Wait(); err != nil || !planned {
		return in, err
	}
	var err error
	in.Nodes, err = r.Nodes(ctx, in.Pods, needsAllNodes(svc))
	return in, err
}

// needsAllNodes: the topology-mode: Auto allocator weighs zones by the
// allocatable CPU of every Node.
func needsAllNodes(svc *corev1.Service) bool {
	v, ok := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	if !ok {
		v = svc.Annotations[corev1.AnnotationTopologyMode]
	}
	return v == "Auto" || v == "auto"
}

// Pods lists the Pods of a namespace matching a label selector, paginated.
// The read is consistent: resourceVersion=0 would be served from the watch
// cache about 10% faster, but the API server then ignores the page limit
// and answers a 100,000-Pod Service in one response.
func (r Reader) Pods(ctx context.Context, ns, selector string) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	err := list(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.LabelSelector = selector
		return r.Client.CoreV1().Pods(ns).List(ctx, o)
	}, func(obj runtime.Object) {
		out = append(out, obj.(*corev1.Pod))
	})
	if err != nil {
		return nil, fmt.Errorf("list pods in namespace %s: %w", ns, err)
	}
	return out, nil
}

// Services lists the Services of a namespace ("" for all) matching a label
// selector, paginated.
func (r Reader) Services(ctx context.Context, ns, selector string) ([]*corev1.Service, error) {
	var out []*corev1.Service
	err := list(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.LabelSelector = selector
		return r.Client.CoreV1().Services(ns).List(ctx, o)
	}, func(obj runtime.Object) {
		out = append(out, obj.(*corev1.Service))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Slices lists every EndpointSlice labelled for the Service, of any manager.
func (r Reader) Slices(ctx context.Context, ns, service string) ([]*discovery.EndpointSlice, error) {
	var out []*discovery.EndpointSlice
	err := list(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.LabelSelector = discovery.LabelServiceName + "=" + service
		return r.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
	}, func(obj runtime.Object) {
		out = append(out, obj.(*discovery.EndpointSlice))
	})
	if err != nil {
		return nil, fmt.Errorf("list endpointslices of service %s/%s: %w", ns, service, err)
	}
	return out, nil
}

// Nodes reads the Nodes the Pods run on (all Nodes when all is set, or when
// there are many). A Forbidden answer is not an error: the planner is told
// the Nodes are unreadable and keeps Pods and their live zones.
func (r Reader) Nodes(ctx context.Context, pods []*corev1.Pod, all bool) (reconcile.Nodes, error) {
	names := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			names[p.Spec.NodeName] = true
		}
	}
	nodes := reconcile.Nodes{ByName: map[string]*corev1.Node{}}
	if !all && len(names) <= nodeGetLimit {
		return r.getNodes(ctx, names)
	}
	err := list(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return r.Client.CoreV1().Nodes().List(ctx, o)
	}, func(obj runtime.Object) {
		n := obj.(*corev1.Node)
		nodes.ByName[n.Name] = n
	})
	switch {
	case apierrors.IsForbidden(err):
		return reconcile.Nodes{Unreadable: true}, nil
	case err != nil:
		return nodes, fmt.Errorf("list nodes: %w", err)
	}
	nodes.Complete = true
	return nodes, nil
}

// getNodes fetches a few Nodes by name, in parallel.
func (r Reader) getNodes(ctx context.Context, names map[string]bool) (reconcile.Nodes, error) {
	var mu sync.Mutex
	nodes := reconcile.Nodes{ByName: map[string]*corev1.Node{}}
	forbidden := false
	g, gctx := errgroup.WithContext(ctx)
	for name := range names {
		g.Go(func() error {
			n, err := r.Client.CoreV1().Nodes().Get(gctx, name, metav1.GetOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsNotFound(err):
			case apierrors.IsForbidden(err):
				forbidden = true
			case err != nil:
				return fmt.Errorf("get node %s: %w", name, err)
			default:
				nodes.ByName[name] = n
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nodes, err
	}
	if forbidden {
		return reconcile.Nodes{Unreadable: true}, nil
	}
	return nodes, nil
}

// MaxPages bounds the pages of one list: at PageSize objects a page, 20
// million objects, far past any cluster; a server that never stops paging
// is refused rather than followed.
const MaxPages = 10000

// list pages through a list call and hands each item to fn.
func list(ctx context.Context, call func(context.Context, metav1.ListOptions) (runtime.Object, error), fn func(runtime.Object)) error {
	p := pager.New(boundedPages(call, MaxPages))
	p.PageSize = PageSize
	return p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		fn(obj)
		return nil
	})
}

// boundedPages refuses a server that pages forever: a continue token seen
// before (the same page again) or more than max pages.
func boundedPages(call func(context.Context, metav1.ListOptions) (runtime.Object, error), max int) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	pages := 0
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		mu.Lock()
		pages++
		n := pages
		mu.Unlock()
		if n > max {
			return nil, fmt.Errorf("the API server sent more than %d pages of %d objects for one list: refusing to page further", max, PageSize)
		}
		obj, err := call(ctx, o)
		if err != nil {
			return obj, err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, err
		}
		if c := lm.GetContinue(); c != "" {
			mu.Lock()
			repeated := seen[c]
			seen[c] = true
			mu.Unlock()
			if repeated {
				return nil, fmt.Errorf("the API server repeated a continue token after %d pages: it would page forever", n)
			}
		}
		return obj, nil
	}
}

// parallel runs fns at once and returns the first error.
func parallel(fns ...func() error) error {
	var g errgroup.Group
	for _, fn := range fns {
		g.Go(fn)
	}
	return g.Wait()
}
