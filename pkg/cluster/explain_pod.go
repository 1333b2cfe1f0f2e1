package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// What explain pod/NAME and explain --ip read, from the cluster or from
// manifests. Reads are a constant number of requests whatever the size of
// the namespace: one list of Services matched in memory, one list of
// slices, one of Endpoints.

// PodInputs is what explain pod/NAME judges in one namespace.
type PodInputs struct {
	Pods []*corev1.Pod
	// Services are every Service of the namespace (selecting Services and
	// near misses are both found in it).
	Services []*corev1.Service
	// Slices are the slices of the Services that select any of Pods.
	Slices []*discovery.EndpointSlice
	Nodes  reconcile.Nodes
}

// SlicesOf are the slices of Slices that belong to svc.
func (in PodInputs) SlicesOf(svc *corev1.Service) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, s := range in.Slices {
		if s.Namespace == svc.Namespace && s.Labels[discovery.LabelServiceName] == svc.Name {
			out = append(out, s)
		}
	}
	return out
}

// PodNotFoundError: no Pod of that name, or none matching the selector.
type PodNotFoundError struct{ Namespace, Name, Selector string }

func (e *PodNotFoundError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("no pod in namespace %s matches %s", e.Namespace, e.Selector)
	}
	return fmt.Sprintf("pod %s/%s not found", e.Namespace, e.Name)
}

// LoadPods reads the named Pods (or those matching selector), every
// Service of ns, the slices of the Services selecting them (one list) and
// their Nodes.
func (r Reader) LoadPods(ctx context.Context, ns string, names []string, selector string) (PodInputs, error) {
	var in PodInputs
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		in.Services, err = r.Services(gctx, ns, "")
		return err
	})
	g.Go(func() (err error) {
		in.Pods, err = r.namedPods(gctx, ns, names, selector)
		return err
	})
	if err := g.Wait(); err != nil {
		return in, err
	}
	selecting := selectingNames(in.Pods, in.Services)
	g, gctx = errgroup.WithContext(ctx)
	if len(selecting) > 0 {
		g.Go(func() error {
			return list(gctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = discovery.LabelServiceName + " in (" + strings.Join(selecting, ",") + ")"
				return r.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
			}, func(obj runtime.Object) { in.Slices = append(in.Slices, obj.(*discovery.EndpointSlice)) })
		})
	}
	g.Go(func() (err error) {
		in.Nodes, err = r.Nodes(gctx, in.Pods, anyNeedsAllNodes(in.Services))
		return err
	})
	return in, g.Wait()
}

// namedPods gets each named Pod, or lists those matching selector.
func (r Reader) namedPods(ctx context.Context, ns string, names []string, selector string) ([]*corev1.Pod, error) {
	if len(names) == 0 {
		pods, err := r.Pods(ctx, ns, selector)
		if err == nil && len(pods) == 0 {
			err = &PodNotFoundError{Namespace: ns, Selector: selector}
		}
		return pods, err
	}
	out := make([]*corev1.Pod, 0, len(names))
	for _, name := range names {
		p, err := r.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, &PodNotFoundError{Namespace: ns, Name: name}
		case err != nil:
			return nil, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
		case p.Name != name || p.Namespace != ns:
			return nil, &WrongObjectError{Resource: "pods", Namespace: ns, Name: name, GotKind: p.Kind, GotNamespace: p.Namespace, GotName: p.Name}
		}
		out = append(out, p)
	}
	return out, nil
}

// selectingNames are the names of the Services that select any of pods.
func selectingNames(pods []*corev1.Pod, services []*corev1.Service) []string {
	seen := map[string]bool{}
	for _, p := range pods {
		matched, _ := explain.SelectingServices(p, services)
		for _, s := range matched {
			seen[s.Name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func anyNeedsAllNodes(services []*corev1.Service) bool {
	for _, s := range services {
		if needsAllNodes(s) {
			return true
		}
	}
	return false
}

// LoadPods is Reader.LoadPods from the manifests: defaulted and
// validated as Load does.
func (m *Manifests) LoadPods(ns string, names []string, selector string) (PodInputs, error) {
	m.ApplyDefaults(ns)
	if err := m.Validate(); err != nil {
		return PodInputs{}, err
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return PodInputs{}, err
	}
	var in PodInputs
	for _, name := range names {
		p := m.pod(ns, name)
		if p == nil {
			return in, &PodNotFoundError{Namespace: ns, Name: name}
		}
		in.Pods = append(in.Pods, p)
	}
	if len(names) == 0 {
		for _, p := range m.PodsIn(ns) {
			if sel.Matches(labels.Set(p.Labels)) {
				in.Pods = append(in.Pods, p)
			}
		}
		if len(in.Pods) == 0 {
			return in, &PodNotFoundError{Namespace: ns, Selector: selector}
		}
	}
	for _, s := range m.Services {
		if s.Namespace == ns {
			in.Services = append(in.Services, s)
		}
	}
	selecting := map[string]bool{}
	for _, n := range selectingNames(in.Pods, in.Services) {
		selecting[n] = true
	}
	for _, s := range m.Slices {
		if s.Namespace == ns && selecting[s.Labels[discovery.LabelServiceName]] {
			in.Slices = append(in.Slices, s)
		}
	}
	in.Nodes = m.nodes()
	return in, nil
}

func (m *Manifests) pod(ns, name string) *corev1.Pod {
	for _, p := range m.Pods {
		if p.Namespace == ns && p.Name == name {
			return p
		}
	}
	return nil
}

// nodes are the manifests' Nodes, complete when there are any (Input).
func (m *Manifests) nodes() reconcile.Nodes {
	n := reconcile.Nodes{ByName: map[string]*corev1.Node{}, Complete: len(m.Nodes) > 0, Unreadable: len(m.Nodes) == 0}
	for _, node := range m.Nodes {
		n.ByName[node.Name] = node
	}
	return n
}

// IPInputs is what explain --ip judges.
type IPInputs struct {
	Holders []*corev1.Pod
	// Services are those of the slices and Endpoints holding the address,
	// and those selecting a holder; Slices are all of their slices.
	Services  []*corev1.Service
	Slices    []*discovery.EndpointSlice
	Holding   []*discovery.EndpointSlice
	Endpoints []*corev1.Endpoints
	Nodes     reconcile.Nodes
}

// LoadIP reads what holds addr in ns ("" for all): one list each of
// slices, Endpoints and Services, and the Pods whose first IP it is (a
// field selector; the API offers none on status.podIPs, so when no Pod has
// it first, one list of the Pods, for a second-family address).
func (r Reader) LoadIP(ctx context.Context, ns string, addr netip.Addr) (IPInputs, error) {
	var slices []*discovery.EndpointSlice
	var eps []*corev1.Endpoints
	var services []*corev1.Service
	var holders []*corev1.Pod
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return list(gctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return r.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
		}, func(obj runtime.Object) { slices = append(slices, obj.(*discovery.EndpointSlice)) })
	})
	g.Go(func() error {
		err := list(gctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return r.Client.CoreV1().Endpoints(ns).List(ctx, o)
		}, func(obj runtime.Object) {
			if ep := obj.(*corev1.Endpoints); explain.EndpointsHoldAddress(ep, addr) {
				eps = append(eps, ep)
			}
		})
		if apierrors.IsForbidden(err) {
			return nil // the v1 Endpoints are reported when readable
		}
		return err
	})
	g.Go(func() (err error) {
		services, err = r.Services(gctx, ns, "")
		return err
	})
	g.Go(func() (err error) {
		holders, err = r.holders(gctx, ns, addr)
		return err
	})
	if err := g.Wait(); err != nil {
		return IPInputs{}, err
	}
	in := ipInputs(addr, holders, services, slices, eps)
	var err error
	in.Nodes, err = r.Nodes(ctx, holders, anyNeedsAllNodes(in.Services))
	return in, err
}

// holders are the Pods holding addr: by the field selector on the first
// IP, else among every Pod of ns.
func (r Reader) holders(ctx context.Context, ns string, addr netip.Addr) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	byField := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.FieldSelector = "status.podIP=" + addr.String()
		return r.Client.CoreV1().Pods(ns).List(ctx, o)
	}
	keep := func(obj runtime.Object) {
		if p := obj.(*corev1.Pod); explain.PodHoldsAddress(p, addr) {
			out = append(out, p)
		}
	}
	if err := list(ctx, byField, keep); err != nil || len(out) > 0 {
		return out, err
	}
	err := list(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return r.Client.CoreV1().Pods(ns).List(ctx, o)
	}, keep)
	return out, err
}

// ipInputs keeps, of a namespace's (or every namespace's) objects, those
// explain --ip judges.
func ipInputs(addr netip.Addr, holders []*corev1.Pod, services []*corev1.Service, slices []*discovery.EndpointSlice, eps []*corev1.Endpoints) IPInputs {
	in := IPInputs{Holders: holders, Endpoints: eps}
	want := map[string]bool{}
	for _, s := range slices {
		if explain.HoldsAddress(s, addr) {
			in.Holding = append(in.Holding, s)
			want[s.Namespace+"/"+s.Labels[discovery.LabelServiceName]] = true
		}
	}
	for _, e := range eps {
		want[e.Namespace+"/"+e.Name] = true
	}
	for _, h := range holders {
		matched, _ := explain.SelectingServices(h, services)
		for _, s := range matched {
			want[s.Namespace+"/"+s.Name] = true
		}
	}
	for _, s := range services {
		if want[s.Namespace+"/"+s.Name] {
			in.Services = append(in.Services, s)
		}
	}
	for _, s := range slices {
		if want[s.Namespace+"/"+s.Labels[discovery.LabelServiceName]] {
			in.Slices = append(in.Slices, s)
		}
	}
	return in
}

// LoadIP is Reader.LoadIP from the manifests.
// Objects without a namespace go to defaultNS; ns is the one looked in.
func (m *Manifests) LoadIP(defaultNS, ns string, addr netip.Addr) (IPInputs, error) {
	m.ApplyDefaults(defaultNS)
	if err := m.Validate(); err != nil {
		return IPInputs{}, err
	}
	in := func(objNS string) bool { return ns == "" || objNS == ns }
	var holders []*corev1.Pod
	for _, p := range m.Pods {
		if in(p.Namespace) && explain.PodHoldsAddress(p, addr) {
			holders = append(holders, p)
		}
	}
	var services []*corev1.Service
	for _, s := range m.Services {
		if in(s.Namespace) {
			services = append(services, s)
		}
	}
	var slices []*discovery.EndpointSlice
	for _, s := range m.Slices {
		if in(s.Namespace) {
			slices = append(slices, s)
		}
	}
	var eps []*corev1.Endpoints
	for _, e := range m.Endpoints {
		if in(e.Namespace) && explain.EndpointsHoldAddress(e, addr) {
			eps = append(eps, e)
		}
	}
	out := ipInputs(addr, holders, services, slices, eps)
	out.Nodes = m.nodes()
	return out, nil
}
