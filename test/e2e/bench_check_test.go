package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The many-Services shape: 500 Services of 10 Pods each, in 20 namespaces.
const (
	manyNamespaces = 20
	manyPerNS      = 25
	manyPodsPerSvc = 10
)

var (
	manyOnce sync.Once
	manyNS   []string
)

// seedMany creates, once per run, 500 Services × 10 ready Pods in 20
// namespaces on the shared cluster and syncs them, so that every Service
// has its slices and a check finds nothing.
func seedMany(b *testing.B) []string {
	b.Helper()
	manyOnce.Do(func() {
		start := time.Now()
		for n := 0; n < manyNamespaces; n++ {
			ns := newNamespace(b, shared)
			var specs []controlplane.PodSpec
			for s := 0; s < manyPerNS; s++ {
				name := fmt.Sprintf("svc-%d", s)
				mustService(b, shared, service(ns, name))
				for i := 0; i < manyPodsPerSvc; i++ {
					p := podSpec(name, s*manyPodsPerSvc+i, 100+n)
					p.Name = fmt.Sprintf("%s-%d", name, i)
					specs = append(specs, p)
				}
			}
			mustPods(b, shared, ns, specs...)
			manyNS = append(manyNS, ns)
		}
		b.Logf("seeded %d Services × %d Pods in %s", manyNamespaces*manyPerNS, manyPodsPerSvc, time.Since(start).Round(time.Millisecond))
		start = time.Now()
		for _, ns := range manyNS {
			slices(b, "sync", "--all", "-n", ns).mustCode(b, 0)
		}
		b.Logf("synced them in %s", time.Since(start).Round(time.Millisecond))
	})
	return manyNS
}

// BenchmarkCheckAll runs `kubectl-slices check -A -o json` (the binary, as
// a process) over 500 Services × 10 Pods and reports the best and mean
// wall time and the plugin's CPU time. The bar is under 3 s. Run
// alone (-run '^$'): check -A sees every namespace of the shared cluster,
// and any finding fails it.
func BenchmarkCheckAll(b *testing.B) {
	seedMany(b)
	best, cpu := math.MaxFloat64, time.Duration(0)
	var services, slicesSeen, findings int
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), "--kubeconfig", shared.Kubeconfig, "check", "-A", "-o", "json")
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
	if services < manyNamespaces*manyPerNS {
		b.Fatalf("check saw %d Services, want at least %d", services, manyNamespaces*manyPerNS)
	}
	b.ReportMetric(best, "best-ms")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(services), "services")
	b.ReportMetric(float64(slicesSeen), "slices")
	b.ReportMetric(float64(findings), "findings")
}
