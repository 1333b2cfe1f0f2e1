package e2e

import (
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkIdleWatch: the 20,000-Pod Service of BenchmarkWatchLatency with
// kube-controller-manager (its EndpointSlice controller only) and
// `sync --watch -A --leader-elect --health-addr` (as the in-cluster
// Deployment runs it) both converged, then left idle: no Pod changes for
// BENCH_IDLE_SECONDS (default 60). Reports each process's CPU over the idle
// window and resident memory at its end; BENCH_IDLE_HEAP_PROFILE=FILE also
// writes the live heap at exit. Run with -benchtime 1x (make
// bench-watch-idle).
func BenchmarkIdleWatch(b *testing.B) {
	idle := 60 * time.Second
	if s, err := strconv.Atoi(os.Getenv("BENCH_IDLE_SECONDS")); err == nil && s > 0 {
		idle = time.Duration(s) * time.Second
	}
	cp, _, view, start := hugeCluster(b)
	ns := "huge"
	addr := freeAddr(b)
	args := []string{"sync", "--all", "-A", "--watch", "--summary-interval=0",
		"--leader-elect", "--leader-elect-resource-namespace", ns, "--health-addr", addr}
	if out := os.Getenv("BENCH_IDLE_HEAP_PROFILE"); out != "" {
		// the live heap once stopped: what the idle process keeps
		args = append(args, "--profile=heap", "--profile-output="+out)
	}
	w := startWatch(b, cp, cp.Kubeconfig, args...)
	r := replica{w, addr}
	waitConverged(b, view, watchBenchPods)
	b.Logf("both converged %v after seeding began", time.Since(start).Round(time.Second))
	time.Sleep(10 * time.Second) // let the initial syncs' garbage be collected

	for b.Loop() {
		oursCPU, kcmCPU := cpuTime(w.cmd.Process.Pid), cpuTime(cp.ControllerManagerPID())
		t0 := time.Now()
		time.Sleep(idle)
		el := time.Since(t0)
		oursCPU, kcmCPU = cpuTime(w.cmd.Process.Pid)-oursCPU, cpuTime(cp.ControllerManagerPID())-kcmCPU
		oursRSS, kcmRSS := rssKiB(w.cmd.Process.Pid), rssKiB(cp.ControllerManagerPID())
		pct := func(d time.Duration) float64 { return 100 * d.Seconds() / el.Seconds() }
		b.Logf("idle %v with %d Pods cached: CPU ours %v (%.2f%% of a core), kube-controller-manager %v (%.2f%%); resident memory ours %d MiB, kube-controller-manager %d MiB",
			el.Round(time.Second), watchBenchPods, oursCPU, pct(oursCPU), kcmCPU, pct(kcmCPU), oursRSS/1024, kcmRSS/1024)
		b.ReportMetric(pct(oursCPU), "ours-cpu-%")
		b.ReportMetric(pct(kcmCPU), "kcm-cpu-%")
		b.ReportMetric(float64(oursRSS)/1024, "ours-rss-MiB")
		b.ReportMetric(float64(kcmRSS)/1024, "kcm-rss-MiB")
	}
	m := r.metrics(b)
	b.Logf("ours /metrics: process_resident_memory_bytes %.0f MiB, is_leader %v, endpoints_desired %v, syncs %v",
		value(m, "process_resident_memory_bytes", nil)/(1<<20), value(m, "kubectl_slices_is_leader", nil),
		value(m, "kubectl_slices_endpoints_desired", nil), value(m, "kubectl_slices_syncs_total", nil))
	mib := func(name string) float64 { return value(m, name, nil) / (1 << 20) }
	b.Logf("ours Go memory: heap in use %.0f MiB, next GC at %.0f MiB, heap idle %.0f MiB of which %.0f MiB released to the OS, %.0f MiB obtained from the OS in all",
		mib("go_memstats_heap_inuse_bytes"), mib("go_memstats_next_gc_bytes"), mib("go_memstats_heap_idle_bytes"),
		mib("go_memstats_heap_released_bytes"), mib("go_memstats_sys_bytes"))
	if code, _ := r.get("/readyz"); code != http.StatusOK {
		b.Errorf("/readyz: %d", code)
	}
	w.stop(b, 15)
}
