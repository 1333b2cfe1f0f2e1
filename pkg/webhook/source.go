package webhook

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"

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
	// The Pod index groups Pods by labels and shape as the informer
	// delivers them: the selector is matched once per group, and the
	// planner is asked about one Pod per shape, so an admission costs about
	// the same over 5 Pods as over 5,000.
	sel, err := c.PodGroups(svc.Namespace, svc.Spec.Selector)
	if err != nil {
		return Facts{Unknown: true}
	}
	var f Facts
	f.groups = indexGroups(sel, true)
	if len(f.groups) == 0 {
		all, err := c.PodGroups(svc.Namespace, nil)
		if err != nil {
			return Facts{Unknown: true}
		}
		// One Pod per label set and shape is enough for the near misses:
		// the Pods of a group miss the selector alike.
		f.nsGroups = indexGroups(all, false)
	}
	return f
}

// indexGroups turns the index's groups into the findings' groups, each
// represented by its first Pod by name (so the answer does not depend on
// the order of the store), sorted by that name. byShape merges groups that
// differ only in labels, which the planner does not look at.
func indexGroups(in []cluster.PodGroup, byShape bool) []*group {
	byKey := map[string]*group{}
	var out []*group
	for _, pg := range in {
		g := byKey[pg.Shape]
		if g == nil || !byShape {
			g = &group{rep: pg.First, members: names{pg.Names}}
			byKey[pg.Shape] = g
			out = append(out, g)
			continue
		}
		if pg.First.Name < g.rep.Name {
			g.rep = pg.First
		}
		g.members = append(g.members, pg.Names)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rep.Name < out[j].rep.Name })
	return out
}
