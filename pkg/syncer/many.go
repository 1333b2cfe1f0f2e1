package syncer

import (
	"context"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// Target is one Service a one-shot run works on: found, or the error of
// looking it up (a NotFound), which its Outcome carries.
type Target struct {
	Namespace, Name string
	Service         *corev1.Service
	Err             error
}

// Services are the targets' Services, nil for one not found.
func Services(targets []Target) []*corev1.Service {
	svcs := make([]*corev1.Service, len(targets))
	for i, t := range targets {
		svcs[i] = t.Service
	}
	return svcs
}

// serviceWorkers bounds the Services synced at once by a one-shot run over
// many; each has up to Write.Workers writes in flight, and the client's
// QPS bounds the total.
const serviceWorkers = 8

// Many reads, plans and, with opts.Write, writes every target through Sync,
// several Services at once. Selectorless Services are mirrored from their
// Endpoints object (read with a GET) unless opts.Planner says otherwise.
// step is called as each Service finishes, with how long it took (for a
// progress line); the outcomes come back in target order, each with its
// Namespace and Name.
//
// Where inputs come from was decided by measurement (make bench-cache: 500
// Services x 10 Pods in 20 namespaces on the test API server): through a
// cache filled once, a first `sync --all -A` takes 1.25 s with 6 reads plus
// one write per slice, and a no-op resync 0.48 s with 6 requests, where
// targeted reads took about a dozen requests per Service (50 s and 28 s,
// throttled by QPS). For a single Service the targeted reads stay: they
// fetch that Service's Pods, slices and few Nodes (3-5 requests), while the
// cache would list every Pod and slice of the namespace.
func Many(ctx context.Context, client kubernetes.Interface, targets []Target, allNamespaces bool, opts Options, step func(done int, key string, took time.Duration)) []Outcome {
	outs := make([]Outcome, len(targets))
	reader := cluster.Reader{Client: client}
	var src Source = reader
	if len(targets) > 1 {
		c := cluster.NewCache(client, cacheNamespace(targets, allNamespaces))
		c.FillNamespaces = fillNamespaces(targets)
		if err := c.Fill(ctx); err != nil {
			for i, t := range targets {
				outs[i] = Outcome{Namespace: t.Namespace, Name: t.Name, Err: err}
			}
			return outs
		}
		src = c
	}
	// A cache filled once would serve the same stale state after a
	// conflict: re-read through targeted reads.
	opts.Retry = reader
	if opts.Planner == nil {
		opts.Planner = MirroringPlanner(GetEndpoints(client))
	}
	var mu sync.Mutex
	finished := 0
	var g errgroup.Group
	g.SetLimit(serviceWorkers)
	for i, t := range targets {
		g.Go(func() error {
			start := time.Now()
			out := Outcome{Err: t.Err}
			if t.Err == nil {
				out = Sync(ctx, src, client.DiscoveryV1(), t.Service, opts)
			}
			out.Namespace, out.Name = t.Namespace, t.Name
			outs[i] = out
			mu.Lock()
			finished++
			step(finished, t.Namespace+"/"+t.Name, time.Since(start))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	return outs
}

// cacheNamespace scopes the cache to the targets' one namespace, so that a
// namespace Role suffices, or to every namespace.
func cacheNamespace(targets []Target, allNamespaces bool) string {
	if allNamespaces {
		return metav1.NamespaceAll
	}
	for _, t := range targets[1:] {
		if t.Namespace != targets[0].Namespace {
			return metav1.NamespaceAll
		}
	}
	return targets[0].Namespace
}

// maxFillNamespaces is the most namespaces a cache of every namespace lists
// one by one; past it one paginated list of each kind costs fewer
// requests.
const maxFillNamespaces = 100

// fillNamespaces is the targets' namespaces, sorted, when few enough to
// list one by one: the Pods and slices a run reads are those of its
// Services' namespaces; nil lists every namespace at once.
func fillNamespaces(targets []Target) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range targets {
		if !seen[t.Namespace] {
			seen[t.Namespace] = true
			out = append(out, t.Namespace)
		}
	}
	if len(out) > maxFillNamespaces {
		return nil
	}
	slices.Sort(out)
	return out
}
