package webhook

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

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
	f := Facts{Pods: c.PodsMatching(svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector))}
	if len(f.Pods) == 0 {
		f.NamespacePods = c.PodsMatching(svc.Namespace, labels.Everything())
	}
	return f
}
