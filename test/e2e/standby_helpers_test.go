package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// fleet is a test's model of its Services and their Pods: what the
// desired slices publish, computed from what the test created, never from
// what either manager wrote.
type fleet struct {
	cp   *controlplane.ControlPlane
	ns   string
	mu   sync.Mutex
	svcs map[string]map[string]*controlplane.PodSpec // Service -> Pod -> spec
	next int                                         // Pod IP counter
	r    *rand.Rand
	// labels are put on every Service created.
	labels map[string]string
}

func newFleet(cp *controlplane.ControlPlane, ns string, seed int64) *fleet {
	return &fleet{cp: cp, ns: ns, svcs: map[string]map[string]*controlplane.PodSpec{}, r: rand.New(rand.NewSource(seed))}
}

func (f *fleet) podSpec(app string) controlplane.PodSpec {
	f.next++
	return podSpec(app, f.next, 20)
}

// addService creates a Service app=name with n ready Pods.
func (f *fleet) addService(t testing.TB, name string, n int) {
	t.Helper()
	mustService(t, f.cp, service(f.ns, name, func(s *corev1.Service) { s.Labels = f.labels }))
	f.mu.Lock()
	f.svcs[name] = map[string]*controlplane.PodSpec{}
	f.mu.Unlock()
	for i := 0; i < n; i++ {
		f.addPod(t, name)
	}
}

func (f *fleet) addPod(t testing.TB, svc string) {
	t.Helper()
	f.mu.Lock()
	s := f.podSpec(svc)
	f.mu.Unlock()
	if _, err := f.cp.Pod(context.Background(), f.ns, s); err != nil {
		t.Fatalf("pod %s: %v", s.Name, err)
	}
	f.mu.Lock()
	f.svcs[svc][s.Name] = &s
	f.mu.Unlock()
}

// flip turns one Pod of svc (the first by name) ready or not ready.
func (f *fleet) flip(t testing.TB, svc string) {
	t.Helper()
	f.mu.Lock()
	pods := sortedKeys(f.svcs[svc])
	p := f.svcs[svc][pods[f.r.Intn(len(pods))]]
	ready := !p.Ready
	f.mu.Unlock()
	if err := f.cp.SetPodReady(context.Background(), f.ns, p.Name, ready); err != nil {
		t.Fatalf("flip %s: %v", p.Name, err)
	}
	f.mu.Lock()
	p.Ready = ready
	f.mu.Unlock()
}

func (f *fleet) deletePod(t testing.TB, svc string) {
	t.Helper()
	f.mu.Lock()
	pods := sortedKeys(f.svcs[svc])
	if len(pods) < 2 {
		f.mu.Unlock()
		return
	}
	name := pods[f.r.Intn(len(pods))]
	delete(f.svcs[svc], name)
	f.mu.Unlock()
	if err := f.cp.Admin.CoreV1().Pods(f.ns).Delete(context.Background(), name, deleteNow); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}

func (f *fleet) deleteService(t testing.TB, svc string) {
	t.Helper()
	f.mu.Lock()
	pods := sortedKeys(f.svcs[svc])
	delete(f.svcs, svc)
	f.mu.Unlock()
	if err := f.cp.Admin.CoreV1().Services(f.ns).Delete(context.Background(), svc, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete service %s: %v", svc, err)
	}
	for _, p := range pods {
		if err := f.cp.Admin.CoreV1().Pods(f.ns).Delete(context.Background(), p, deleteNow); err != nil {
			t.Fatalf("delete pod %s: %v", p, err)
		}
	}
}

func (f *fleet) services() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedKeys(f.svcs)
}

// desired renders what svc's slices should publish, as endpointState
// renders live ones: "address:ready:zone", sorted.
func (f *fleet) desired(svc string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, p := range f.svcs[svc] {
		out = append(out, fmt.Sprintf("%s:%v:%s", p.IPs[0], p.Ready, nodeZone(p.Node)))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// readyCount is how many endpoints of svc should be ready.
func (f *fleet) readyCount(svc string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.svcs[svc] {
		if p.Ready {
			n++
		}
	}
	return n
}

// deleteNow deletes a Pod at once: with no kubelet, a graceful delete would
// leave it terminating for ever.
var deleteNow = metav1.DeleteOptions{GracePeriodSeconds: new(int64)}

// churn changes the fleet at random, one change every gap, for d: mostly
// readiness flips, and Pods and Services added and deleted.
func (f *fleet) churn(t testing.TB, d, gap time.Duration) int {
	t.Helper()
	ops, extra := 0, 0
	for end := time.Now().Add(d); time.Now().Before(end); ops++ {
		svcs := f.services()
		svc := svcs[f.r.Intn(len(svcs))]
		switch n := f.r.Intn(100); {
		case n < 60:
			f.flip(t, svc)
		case n < 75:
			f.addPod(t, svc)
		case n < 90:
			f.deletePod(t, svc)
		case n < 95:
			extra++
			f.addService(t, fmt.Sprintf("extra-%d", extra), 2)
		default:
			if len(svcs) > 5 {
				f.deleteService(t, svc)
			}
		}
		time.Sleep(gap)
	}
	return ops
}

// sliceStates lists the namespace's slices once and renders, per Service and
// manager (managed-by value), the published endpoints as endpointState does,
// and the distinct ready addresses merged across managers.
func sliceStates(t testing.TB, cp *controlplane.ControlPlane, ns string) (byManager map[string]map[string]string, mergedReady map[string]int) {
	t.Helper()
	byManager, mergedReady, err := listSliceStates(cp, ns)
	if err != nil {
		t.Fatal(err)
	}
	return byManager, mergedReady
}

// listSliceStates is sliceStates for a goroutine: the error is returned.
func listSliceStates(cp *controlplane.ControlPlane, ns string) (byManager map[string]map[string]string, mergedReady map[string]int, err error) {
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	eps := map[string]map[string][]string{}
	ready := map[string]map[string]bool{}
	for _, s := range list.Items {
		svc, mgr := s.Labels[discovery.LabelServiceName], s.Labels[discovery.LabelManagedBy]
		if eps[mgr] == nil {
			eps[mgr] = map[string][]string{}
		}
		if ready[svc] == nil {
			ready[svc] = map[string]bool{}
		}
		eps[mgr][svc] = append(eps[mgr][svc], "") // the Service has slices of mgr, maybe empty
		for _, e := range s.Endpoints {
			r := e.Conditions.Ready != nil && *e.Conditions.Ready
			eps[mgr][svc] = append(eps[mgr][svc], fmt.Sprintf("%s:%v:%s", strings.Join(e.Addresses, ","), r, deref(e.Zone)))
			if r {
				ready[svc][strings.Join(e.Addresses, ",")] = true
			}
		}
	}
	byManager = map[string]map[string]string{}
	for mgr, svcs := range eps {
		byManager[mgr] = map[string]string{}
		for svc, lines := range svcs {
			var kept []string
			for _, l := range lines {
				if l != "" {
					kept = append(kept, l)
				}
			}
			sort.Strings(kept)
			byManager[mgr][svc] = strings.Join(kept, " ")
		}
	}
	mergedReady = map[string]int{}
	for svc, addrs := range ready {
		mergedReady[svc] = len(addrs)
	}
	return byManager, mergedReady, nil
}

// histogramQuantile estimates a quantile from a Prometheus histogram as
// histogram_quantile does: linear within the bucket that holds it.
func histogramQuantile(h *dto.Histogram, q float64) float64 {
	total := float64(h.GetSampleCount())
	if total == 0 {
		return math.NaN()
	}
	rank, lower, below := q*total, 0.0, 0.0
	for _, b := range h.Bucket {
		c := float64(b.GetCumulativeCount())
		if c >= rank {
			if c == below {
				return b.GetUpperBound()
			}
			return lower + (b.GetUpperBound()-lower)*(rank-below)/(c-below)
		}
		lower, below = b.GetUpperBound(), c
	}
	return math.Inf(1)
}

// lagHistogram is the loop's controller-lag histogram.
func lagHistogram(t testing.TB, r replica) *dto.Histogram {
	t.Helper()
	f := r.metrics(t)["kubectl_slices_controller_lag_seconds"]
	if f == nil || len(f.Metric) == 0 {
		t.Fatal("no kubectl_slices_controller_lag_seconds in /metrics")
	}
	return f.Metric[0].Histogram
}

// standbyStates is the loop's per-state Service counts.
func standbyStates(t testing.TB, r replica) map[string]float64 {
	t.Helper()
	mf := r.metrics(t)
	out := map[string]float64{}
	for _, st := range []string{"standby", "serving", "handing-back"} {
		out[st] = value(mf, "kubectl_slices_standby_services", map[string]string{"state": st})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
