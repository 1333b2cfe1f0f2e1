package e2e

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// readyPoller counts, every 100 ms, the ready endpoints of a Service across
// the slices of every manager, each address once, as kube-proxy merges
// them, and remembers every drop below the highest count seen so far.
type readyPoller struct {
	stop  chan struct{}
	done  sync.WaitGroup
	mu    sync.Mutex
	polls int
	max   int
	drops []string
	errs  int
}

func startReadyPoller(cp *controlplane.ControlPlane, ns, svc string) *readyPoller {
	return startCountPoller(func() (int, error) { return readyEndpoints(cp, ns, svc) })
}

// startCountPoller is a readyPoller over any count of ready addresses.
func startCountPoller(count func() (int, error)) *readyPoller {
	p := &readyPoller{stop: make(chan struct{})}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			n, err := count()
			p.mu.Lock()
			if err != nil {
				p.errs++
			} else {
				p.polls++
				if n < p.max {
					p.drops = append(p.drops, time.Now().Format("15:04:05.000")+": "+itoa(n)+" ready, had "+itoa(p.max))
				}
				p.max = max(p.max, n)
			}
			p.mu.Unlock()
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// finish stops the poller and fails on any drop.
func (p *readyPoller) finish(t *testing.T) {
	t.Helper()
	close(p.stop)
	p.done.Wait()
	t.Logf("ready poller: %d polls, %d failed reads, most ready endpoints seen %d", p.polls, p.errs, p.max)
	if len(p.drops) > 0 {
		t.Errorf("the Service lost ready endpoints %d times: %v", len(p.drops), p.drops)
	}
	if p.polls < 10 {
		t.Errorf("only %d polls: the poller did not watch the story", p.polls)
	}
}

func readyEndpoints(cp *controlplane.ControlPlane, ns, svc string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discovery.LabelServiceName + "=" + svc})
	if err != nil {
		return 0, err
	}
	ready := map[string]bool{}
	for _, s := range list.Items {
		if s.DeletionTimestamp != nil {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
				ready[e.Addresses[0]] = true
			}
		}
	}
	return len(ready), nil
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// copySlice creates a copy of a slice under another name and managed-by
// value, with edit applied: a stand-in for the controller's (or anyone's)
// slice on a cluster without kube-controller-manager. Under a controller's
// value it is written with kube-controller-manager's field manager, as the
// controller's own are (check flags other writers: ForeignWriter).
func copySlice(t testing.TB, cp *controlplane.ControlPlane, s discovery.EndpointSlice, name, managedBy string, edit func(*discovery.EndpointSlice)) *discovery.EndpointSlice {
	t.Helper()
	c := s.DeepCopy()
	c.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: map[string]string{}, OwnerReferences: s.OwnerReferences}
	for k, v := range s.Labels {
		c.Labels[k] = v
	}
	c.Labels[discovery.LabelManagedBy] = managedBy
	if edit != nil {
		edit(c)
	}
	var opts metav1.CreateOptions
	if managedBy == controllerLabel || managedBy == mirroringManagedBy {
		opts.FieldManager = "kube-controller-manager"
	}
	got, err := cp.Admin.DiscoveryV1().EndpointSlices(s.Namespace).Create(context.Background(), c, opts)
	if err != nil {
		t.Fatalf("create slice %s: %v", name, err)
	}
	return got
}

// sliceDump maps every slice of a namespace to its full JSON, for
// byte-identical comparisons.
func sliceDump(t testing.TB, cp *controlplane.ControlPlane, ns string) map[string]string {
	t.Helper()
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out[s.Name] = string(b)
	}
	return out
}

// ownCluster starts a control plane of the test's own, with the suite's
// Nodes, stopped when the test ends: for tests that look at the whole
// cluster (check -A) or run kube-controller-manager.
func ownCluster(t testing.TB, ctx context.Context, apiServerArgs ...string) *controlplane.ControlPlane {
	t.Helper()
	cp, err := controlplane.Start(ctx, controlplane.Options{APIServerArgs: apiServerArgs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	if err := createNodes(ctx, cp); err != nil {
		t.Fatal(err)
	}
	return cp
}
