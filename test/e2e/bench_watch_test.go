package e2e

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

const (
	watchBenchPods  = 20000
	watchBenchFlips = 120
)

// readyView follows, through a watch, the ready state each manager's slices
// publish per address, and wakes waiters on every event.
type readyView struct {
	mu     sync.Mutex
	slices map[string]map[string]bool // namespace/name of a slice → address → ready
	owner  map[string]string          // namespace/name of a slice → managed-by
	cond   *sync.Cond
}

func newReadyView() *readyView {
	v := &readyView{slices: map[string]map[string]bool{}, owner: map[string]string{}}
	v.cond = sync.NewCond(&v.mu)
	return v
}

func (v *readyView) apply(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	s, ok := obj.(*discovery.EndpointSlice)
	if !ok {
		return
	}
	key := s.Namespace + "/" + s.Name
	v.mu.Lock()
	defer v.mu.Unlock()
	if deleted {
		delete(v.slices, key)
		delete(v.owner, key)
	} else {
		m := make(map[string]bool, len(s.Endpoints))
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				m[a] = e.Conditions.Ready != nil && *e.Conditions.Ready
			}
		}
		v.slices[key], v.owner[key] = m, s.Labels[discovery.LabelManagedBy]
	}
	v.cond.Broadcast()
}

// state: does managedBy publish addr with that readiness? Caller holds mu.
func (v *readyView) has(managedBy, addr string, ready bool) bool {
	for name, m := range v.slices {
		if v.owner[name] != managedBy {
			continue
		}
		if r, ok := m[addr]; ok && r == ready {
			return true
		}
	}
	return false
}

func (v *readyView) count(managedBy string) (ready int) {
	for name, m := range v.slices {
		if v.owner[name] == managedBy {
			for _, r := range m {
				if r {
					ready++
				}
			}
		}
	}
	return ready
}

// waitAll waits until both managers publish addr with that readiness and
// returns when each was first seen so.
func (v *readyView) waitAll(addr string, ready bool, timeout time.Duration) (map[string]time.Time, error) {
	seen := map[string]time.Time{}
	deadline := time.Now().Add(timeout)
	go func() { time.Sleep(timeout); v.mu.Lock(); v.cond.Broadcast(); v.mu.Unlock() }()
	v.mu.Lock()
	defer v.mu.Unlock()
	for {
		for _, m := range []string{oursLabel, controllerLabel} {
			if _, ok := seen[m]; !ok && v.has(m, addr, ready) {
				seen[m] = time.Now()
			}
		}
		if len(seen) == 2 {
			return seen, nil
		}
		if time.Now().After(deadline) {
			return seen, fmt.Errorf("%s ready=%v not published by both managers within %v", addr, ready, timeout)
		}
		v.cond.Wait()
	}
}

func rssKiB(pid int) int { return procStatusKiB(pid, "VmRSS:") }

// peakRSSKiB is a process's peak resident memory so far (VmHWM).
func peakRSSKiB(pid int) int { return procStatusKiB(pid, "VmHWM:") }

func procStatusKiB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	return -1
}

// cpuTime is a process's user+system CPU time so far.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b)[strings.LastIndex(string(b), ")")+2:])
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// hugeCluster seeds the 20,000-Pod Service on a cluster of the benchmark's
// own, follows its slices in a readyView and starts kube-controller-manager
// (its EndpointSlice controller only); start is when seeding began.
func hugeCluster(b *testing.B) (*controlplane.ControlPlane, []controlplane.PodSpec, *readyView, time.Time) {
	cp := startBenchCluster(b)
	ctx := context.Background()
	ns := "huge"
	if err := cp.Namespace(ctx, ns); err != nil {
		b.Fatal(err)
	}
	mustService(b, cp, service(ns, "huge"))
	start := time.Now()
	var specs []controlplane.PodSpec
	for i := range watchBenchPods {
		specs = append(specs, podSpec("huge", i, 70))
	}
	if err := cp.Pods(ctx, ns, specs, 16); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d Pods in %v", watchBenchPods, time.Since(start).Round(time.Second))
	view := followSlices(b, cp, ns)
	if err := cp.StartControllerManager(ctx); err != nil {
		b.Fatal(err)
	}
	return cp, specs, view, start
}

// followSlices follows the slices of ns ("" every namespace) in a
// readyView until the benchmark ends.
func followSlices(b *testing.B, cp *controlplane.ControlPlane, ns string) *readyView {
	// An informer, not a bare watch: a watch the server closes under an
	// event flood would silently stop the view; an informer relists.
	view := newReadyView()
	factory := informers.NewSharedInformerFactoryWithOptions(cp.Admin, 0, informers.WithNamespace(ns))
	inf := factory.Discovery().V1().EndpointSlices().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { view.apply(o, false) },
		UpdateFunc: func(_, o any) { view.apply(o, false) },
		DeleteFunc: func(o any) { view.apply(o, true) },
	}); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	return view
}

// waitConverged waits until both managers publish all pods ready.
func waitConverged(b *testing.B, view *readyView, pods int) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		view.mu.Lock()
		o, k := view.count(oursLabel), view.count(controllerLabel)
		view.mu.Unlock()
		if o == pods && k == pods {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("not converged: ours %d, controller %d ready endpoints of %d", o, k, pods)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// statusWrite keys flipTimed's latencies of the status writes themselves.
const statusWrite = "status-write"

// flipTarget is a Pod whose readiness a benchmark flips.
type flipTarget struct {
	ns   string
	spec controlplane.PodSpec
}

// flipTimed flips each target not ready, then ready again (so every flip
// starts from all Pods ready), one at a time, and returns per manager the
// time from each status write to that manager's slices showing it, seen
// through view: two flips per target; under statusWrite, how long each
// status write itself took.
func flipTimed(b *testing.B, cp *controlplane.ControlPlane, view *readyView, targets []flipTarget) map[string][]time.Duration {
	ctx := context.Background()
	lat := map[string][]time.Duration{}
	for _, t := range targets {
		for _, ready := range []bool{false, true} {
			t0 := time.Now()
			if err := cp.SetPodReady(ctx, t.ns, t.spec.Name, ready); err != nil {
				b.Fatal(err)
			}
			// The status write itself (SetPodReady: a GET, then the
			// UpdateStatus): every manager's flip time includes it, and
			// then that write's watch event and one write of its own.
			lat[statusWrite] = append(lat[statusWrite], time.Since(t0))
			seen, err := view.waitAll(t.spec.IPs[0], ready, 30*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			for m, at := range seen {
				lat[m] = append(lat[m], at.Sub(t0))
			}
		}
	}
	return lat
}

// reportFlips logs and reports each manager's p50 and p99 (metrics
// prefix-ours-p50-ms and so on) and returns them, ours first.
func reportFlips(b *testing.B, prefix string, lat map[string][]time.Duration) (ours, kcm [2]time.Duration) {
	if d := lat[statusWrite]; len(d) > 0 {
		b.Logf("%sthe status writes themselves: p50 %v, p99 %v", prefix, percentile(d, 0.5).Round(time.Millisecond), percentile(d, 0.99).Round(time.Millisecond))
		b.ReportMetric(float64(percentile(d, 0.99).Microseconds())/1000, prefix+"write-p99-ms")
	}
	for _, m := range []struct{ label, name string }{{oursLabel, "ours"}, {controllerLabel, "kcm"}} {
		d := lat[m.label]
		p50, p99 := percentile(d, 0.5), percentile(d, 0.99)
		b.Logf("%s%s: %d flips, p50 %v, p99 %v, max %v", prefix, m.name, len(d), p50.Round(time.Millisecond),
			p99.Round(time.Millisecond), percentile(d, 1).Round(time.Millisecond))
		b.ReportMetric(float64(p50.Microseconds())/1000, prefix+m.name+"-p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, prefix+m.name+"-p99-ms")
		if m.label == oursLabel {
			ours = [2]time.Duration{p50, p99}
		} else {
			kcm = [2]time.Duration{p50, p99}
		}
	}
	return ours, kcm
}

// BenchmarkWatchLatency: a 20,000-Pod Service with kube-controller-manager
// (only its EndpointSlice controller, default flags) and `sync --watch -A`
// both running; Pod readiness is flipped 120 times, one at a time, and the
// time from the status write to each manager's slice update, seen through a
// watch, is measured; then the resident memory of both processes. Run with
// -benchtime 1x (make bench-watch).
func BenchmarkWatchLatency(b *testing.B) {
	cp, specs, view, start := hugeCluster(b)
	ns := "huge"
	args := []string{"sync", "--all", "-A", "--watch", "--summary-interval=0"}
	// BENCH_WATCH_PROFILE=FILE writes our CPU profile there;
	// BENCH_WATCH_PROFILE_KIND=heap the live heap at the end instead.
	if out := os.Getenv("BENCH_WATCH_PROFILE"); out != "" {
		kind := cmp.Or(os.Getenv("BENCH_WATCH_PROFILE_KIND"), "cpu")
		args = append(args, "--profile="+kind, "--profile-output="+out)
	}
	w := startWatch(b, cp, cp.Kubeconfig, args...)
	waitConverged(b, view, watchBenchPods)
	b.Logf("both converged %v after the controller manager and the watch started", time.Since(start).Round(time.Second))

	for b.Loop() {
		oursCPU, kcmCPU := cpuTime(w.cmd.Process.Pid), cpuTime(cp.ControllerManagerPID())
		rng := rand.New(rand.NewPCG(1, 2))
		var targets []flipTarget
		for range watchBenchFlips / 2 {
			targets = append(targets, flipTarget{ns, specs[rng.IntN(watchBenchPods)]})
		}
		lat := flipTimed(b, cp, view, targets)
		oursCPU, kcmCPU = cpuTime(w.cmd.Process.Pid)-oursCPU, cpuTime(cp.ControllerManagerPID())-kcmCPU
		b.Logf("CPU per flip: ours %v, kube-controller-manager %v", (oursCPU / watchBenchFlips).Round(time.Millisecond), (kcmCPU / watchBenchFlips).Round(time.Millisecond))
		b.ReportMetric(float64(oursCPU.Milliseconds())/watchBenchFlips, "ours-cpu-ms/flip")
		b.ReportMetric(float64(kcmCPU.Milliseconds())/watchBenchFlips, "kcm-cpu-ms/flip")
		reportFlips(b, "", lat)
	}
	oursRSS, kcmRSS := rssKiB(w.cmd.Process.Pid), rssKiB(cp.ControllerManagerPID())
	b.Logf("resident memory with %d Pods cached: ours %d MiB, kube-controller-manager %d MiB", watchBenchPods, oursRSS/1024, kcmRSS/1024)
	b.ReportMetric(float64(oursRSS)/1024, "ours-rss-MiB")
	b.ReportMetric(float64(kcmRSS)/1024, "kcm-rss-MiB")
	w.stop(b, 15)
	for _, line := range strings.Split(w.output(), "\n") {
		if strings.Contains(line, "summary:") {
			b.Logf("ours: %s", line)
		}
	}
}
