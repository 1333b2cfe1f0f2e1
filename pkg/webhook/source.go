package webhook

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// CacheSource answers Facts from the informer cache of pkg/cluster, the same
// cache the watch loop plans from: selector matching in memory, no API call.
// Namespace is the cache's scope ("" for all): Services elsewhere are not
// judged, since their Pods are not cached.
type CacheSource struct {
	Cache     *cluster.Cache
	Namespace string
}

// Facts implements Source.
func (s CacheSource) Facts(svc *corev1.Service) Facts {
	c := s.Cache
	if s.Namespace != "" && svc.Namespace != s.Namespace {
		return Facts{Unknown: true}
	}
	if len(svc.Spec.Selector) == 0 {
		has := len(c.SlicesOf(svc.Namespace, svc.Name)) > 0
		if !has {
			// Without the rights to watch Endpoints, say nothing rather
			// than warn of a missing object we cannot see.
			ep, err := c.EndpointsOf(context.Background(), svc.Namespace, svc.Name)
			has = ep != nil || err != nil
		}
		return Facts{HasEndpoints: has}
	}
	// One pass over the namespace's Pods, matched as a map (a Service
	// selector is a plain label set) and left unsorted: Cache.PodsMatching
	// sorts for the planner's sake, which on 5,000 Pods was a third of an
	// admission's time, and the findings sort what they name.
	objs, _ := c.Pods.ByIndex(cache.NamespaceIndex, svc.Namespace)
	all := make([]*corev1.Pod, 0, len(objs))
	var f Facts
	for _, o := range objs {
		p := o.(*corev1.Pod)
		all = append(all, p)
		if matches(svc.Spec.Selector, p.Labels) {
			f.Pods = append(f.Pods, p)
		}
	}
	if len(f.Pods) == 0 {
		f.NamespacePods = all
	}
	return f
}

func matches(selector, lbls map[string]string) bool {
	for k, v := range selector {
		if have, ok := lbls[k]; !ok || have != v {
			return false
		}
	}
	return true
}
