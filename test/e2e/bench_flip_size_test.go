package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// flipSizes are the Pods of the small and the large Service of
// BenchmarkWatchFlipSize: FLIP_SIZE_SMALL and FLIP_SIZE_LARGE, default 200
// and 20,000.
func flipSizes(b *testing.B) (small, large int) {
	small, large = 200, 20000
	for _, v := range []struct {
		env string
		n   *int
	}{{"FLIP_SIZE_SMALL", &small}, {"FLIP_SIZE_LARGE", &large}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 62500 {
				b.Fatalf("%s=%q: want a number of Pods, 1 to 62,500", v.env, s)
			}
			*v.n = n
		}
	}
	return small, large
}

// BenchmarkWatchFlipSize: is a readiness flip's cost independent of the
// Service's size? One cluster holds a small and a large Service
// (FLIP_SIZE_SMALL and FLIP_SIZE_LARGE Pods, default 200 and 20,000) in one
// namespace; kube-controller-manager (its EndpointSlice controller only)
// and `sync --watch --all -A` both run and converge. Then, for the small
// Service and then the large one, FLIP_SIZE_FLIPS flips (default 100: a
// random Pod not ready, then ready again, one at a time, each waited out
// through a watch on both managers' slices); each process's CPU time
// (/proc/PID/stat, user+system) over a size's flips, divided by its flips,
// is its CPU per flip at that size. Reported: CPU per flip per manager and
// size, the ratio large/small per manager (1 is size-independent, upstream
// grows with the Service), and each size's latency p50/p99. Run with
// -benchtime 1x (make bench-flip-size; also in make bench-watch).
func BenchmarkWatchFlipSize(b *testing.B) {
	small, large := flipSizes(b)
	flips := 100
	if s, err := strconv.Atoi(os.Getenv("FLIP_SIZE_FLIPS")); err == nil && s >= 2 {
		flips = s
	}
	cp := startBenchCluster(b)
	ctx := context.Background()
	ns := "sizes"
	if err := cp.Namespace(ctx, ns); err != nil {
		b.Fatal(err)
	}
	fast, err := cp.Unthrottled()
	if err != nil {
		b.Fatal(err)
	}
	sizes := []struct {
		name string
		pods int
		base int // the IPs' second octet
	}{{"small", small, 80}, {"large", large, 81}}
	specs := map[string][]controlplane.PodSpec{}
	start := time.Now()
	for _, s := range sizes {
		mustService(b, cp, service(ns, s.name))
		for i := range s.pods {
			specs[s.name] = append(specs[s.name], podSpec(s.name, i, s.base))
		}
		if err := fast.Pods(ctx, ns, specs[s.name], 32); err != nil {
			b.Fatalf("seeding the %s Service's %d Pods: %v", s.name, s.pods, err)
		}
	}
	b.Logf("seeded %d + %d Pods in %v", small, large, time.Since(start).Round(time.Second))
	view := followSlices(b, cp, ns)
	if err := cp.StartControllerManager(ctx); err != nil {
		b.Fatal(err)
	}
	w := startWatch(b, cp, cp.Kubeconfig, "sync", "--all", "-A", "--watch", "--summary-interval=0")
	waitConverged(b, view, small+large)
	b.Logf("both converged %v after seeding began", time.Since(start).Round(time.Second))

	for b.Loop() {
		cpu := map[string]map[string]time.Duration{} // size → manager → CPU per flip
		for i, s := range sizes {
			rng := rand.New(rand.NewPCG(5, uint64(i)))
			var targets []flipTarget
			for range flips / 2 {
				targets = append(targets, flipTarget{ns, specs[s.name][rng.IntN(s.pods)]})
			}
			n := time.Duration(2 * len(targets))
			ours0, kcm0 := cpuTime(w.cmd.Process.Pid), cpuTime(cp.ControllerManagerPID())
			lat := flipTimed(b, cp, view, targets)
			cpu[s.name] = map[string]time.Duration{
				"ours": (cpuTime(w.cmd.Process.Pid) - ours0) / n,
				"kcm":  (cpuTime(cp.ControllerManagerPID()) - kcm0) / n,
			}
			prefix := fmt.Sprintf("%s-", s.name)
			reportFlips(b, prefix, lat)
			for _, m := range []string{"ours", "kcm"} {
				b.ReportMetric(ms(cpu[s.name][m]), prefix+m+"-cpu-ms/flip")
			}
			b.Logf("%s Service (%d Pods), %d flips: CPU per flip ours %v, kube-controller-manager %v",
				s.name, s.pods, n, cpu[s.name]["ours"], cpu[s.name]["kcm"])
		}
		for _, m := range []struct{ key, name string }{{"ours", "ours"}, {"kcm", "kube-controller-manager"}} {
			ratio := cpu["large"][m.key].Seconds() / max(cpu["small"][m.key].Seconds(), 1e-9)
			b.Logf("%s: CPU per flip at %d Pods / at %d Pods = %.2f", m.name, large, small, ratio)
			b.ReportMetric(ratio, m.key+"-cpu-ratio")
		}
	}
	w.stop(b, 15)
}
