package e2e

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCheckAll runs `kubectl-slices check -A -o json` (the binary, as
// a process) over 500 Services × 10 Pods and reports the best and mean
// wall time and the plugin's CPU time. The bar is under 3 s. The
// cluster is the benchmark's own (bench_cache_test.go's shape), synced once,
// so any finding fails it.
func BenchmarkCheckAll(b *testing.B) {
	cp := startBenchCluster(b)
	seedMany(b, cp)
	kubectl(b, cp, "slices", "sync", "--all", "-A").mustCode(b, 0)
	best, cpu := math.MaxFloat64, time.Duration(0)
	var services, slicesSeen, findings int
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), "--kubeconfig", cp.Kubeconfig, "check", "-A", "-o", "json")
		out, err := cmd.Output()
		best = math.Min(best, float64(time.Since(start).Milliseconds()))
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			b.Fatalf("%v: %s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		var r struct {
			Services, Slices int
			Findings         []struct{ Namespace, Service, Kind string }
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatal(err)
		}
		services, slicesSeen, findings = r.Services, r.Slices, len(r.Findings)
		if len(r.Findings) > 0 {
			b.Errorf("%d findings on a synced cluster, first: %+v", len(r.Findings), r.Findings[0])
		}
	}
	if services < manyServicesAll {
		b.Fatalf("check saw %d Services, want at least %d", services, manyServicesAll)
	}
	b.ReportMetric(best, "best-ms")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(services), "services")
	b.ReportMetric(float64(slicesSeen), "slices")
	b.ReportMetric(float64(findings), "findings")
}
