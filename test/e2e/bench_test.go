package e2e

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const benchPods = 5000

// benchNamespace seeds, once per run, a Service with 5,000 ready Pods.
var benchNS string

func seedBench(b *testing.B) string {
	b.Helper()
	if benchNS != "" {
		return benchNS
	}
	ns := newNamespace(b, shared)
	mustService(b, shared, service(ns, "big"))
	start := time.Now()
	mustPods(b, shared, ns, pods("big", benchPods, 50, nil)...)
	b.Logf("seeded %d pods in %s", benchPods, time.Since(start).Round(time.Millisecond))
	benchNS = ns
	return ns
}

// BenchmarkSync syncs a 5,000-Pod Service on the real API server with our
// binary and with cmd/upstream-sync, a program driving upstream
// k8s.io/endpointslice on the same job, both run as processes: the
// first sync (no slices) and a resync of an unchanged cluster. best-ms is
// the best of the iterations (run with -benchtime 3x); writes/op counts
// slices created, updated or deleted.
func BenchmarkSync(b *testing.B) {
	ns := seedBench(b)
	upstreamBin := filepath.Join(pluginDir, "upstream-sync")
	build := exec.Command("go", "build", "-o", upstreamBin, "./cmd/upstream-sync")
	build.Dir = filepath.Join(repoRoot(), "test")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build upstream-sync: %v\n%s", err, out)
	}
	const upstreamManagedBy = "upstream-bench" // as in cmd/upstream-sync
	impls := []struct {
		name      string
		managedBy string
		sync      func() error
	}{
		{"ours", oursLabel, func() error {
			out, err := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), "--kubeconfig", shared.Kubeconfig, "sync", "svc/big", "-n", ns).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}},
		{"upstream", upstreamManagedBy, func() error {
			out, err := exec.Command(upstreamBin, "-kubeconfig", shared.Kubeconfig, "-n", ns, "big").CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}},
	}
	for _, impl := range impls {
		for _, first := range []bool{true, false} {
			name := map[bool]string{true: "first-sync", false: "resync"}[first]
			b.Run(fmt.Sprintf("pods=%d/%s/impl=%s", benchPods, name, impl.name), func(b *testing.B) {
				best, writes := math.MaxFloat64, 0
				for b.Loop() {
					b.StopTimer()
					if first {
						deleteSlices(b, ns, impl.managedBy)
					} else if err := impl.sync(); err != nil { // make sure it is synced
						b.Fatal(err)
					}
					before := sliceVersions(b, shared, ns, discovery.LabelManagedBy+"="+impl.managedBy)
					b.StartTimer()
					start := time.Now()
					if err := impl.sync(); err != nil {
						b.Fatal(err)
					}
					best = math.Min(best, float64(time.Since(start).Milliseconds()))
					b.StopTimer()
					writes += changed(before, sliceVersions(b, shared, ns, discovery.LabelManagedBy+"="+impl.managedBy))
					b.StartTimer()
				}
				b.ReportMetric(best, "best-ms")
				b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
			})
		}
	}
}

// BenchmarkExplain measures the plugin's CPU time (user+system) to explain
// the 5,000-Pod Service, in the summary form.
func BenchmarkExplain(b *testing.B) {
	ns := seedBench(b)
	var cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), "--kubeconfig", shared.Kubeconfig, "explain", "svc/big", "-n", ns)
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() > 1 {
			b.Fatalf("%v: %s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

func deleteSlices(b *testing.B, ns, managedBy string) {
	err := shared.Admin.DiscoveryV1().EndpointSlices(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: discovery.LabelManagedBy + "=" + managedBy})
	if err != nil {
		b.Fatal(err)
	}
}

// changed counts slices created, updated or deleted between two listings.
func changed(before, after map[string]string) int {
	n := 0
	for name, rv := range after {
		if before[name] != rv {
			n++
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			n++
		}
	}
	return n
}
