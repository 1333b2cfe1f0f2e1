package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// explainBenchPods is the namespace's Pods, 10 per Service
// (EXPLAIN_BENCH_PODS, default 20,000 in 2,000 Services).
func explainBenchPods(b *testing.B) int {
	n := 20000
	if v := os.Getenv("EXPLAIN_BENCH_PODS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("EXPLAIN_BENCH_PODS=%q: want a number of Pods, 10 or more", v)
		}
	}
	return n
}

// BenchmarkExplainPod: explain svc/NAME, pod/NAME and --ip (an address a
// Pod holds first, and one no Pod holds, which costs a list of the Pods)
// in one namespace of 2,000 Services and 20,000 Pods, every Service
// synced: wall time and API requests of each, through the plugin binary.
// make bench-explain-pod.
func BenchmarkExplainPod(b *testing.B) {
	cp := startBenchCluster(b)
	pods := explainBenchPods(b)
	services := pods / 10
	ns := "explain-bench"
	start := time.Now()
	if err := cp.Namespace(b.Context(), ns); err != nil {
		b.Fatal(err)
	}
	var specs []controlplane.PodSpec
	for s := range services {
		app := fmt.Sprintf("svc-%04d", s)
		mustService(b, cp, service(ns, app))
		for i := range 10 {
			p := podSpec(app, i, 100)
			p.IPs = []string{fmt.Sprintf("10.%d.%d.%d", 100+s/250, s%250, i+1)}
			specs = append(specs, p)
		}
	}
	mustPods(b, cp, ns, specs...)
	b.Logf("seeded %d Services and %d Pods in %s", services, pods, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if took, n := explainRun(b, cp, "sync", "--all", "-n", ns); n == 0 {
		b.Fatalf("sync made no requests (%v)", took)
	}
	b.Logf("synced in %s", time.Since(start).Round(time.Millisecond))

	mid := services / 2
	name := fmt.Sprintf("svc-%04d", mid)
	ip := fmt.Sprintf("10.%d.%d.%d", 100+mid/250, mid%250, 4)
	cases := []struct {
		metric string
		args   []string
	}{
		{"svc", []string{"explain", "svc/" + name, "-n", ns, "-o", "json"}},
		{"pod", []string{"explain", "pod/" + name + "-3", "-n", ns, "-o", "json"}},
		{"ip", []string{"explain", "--ip", ip, "-n", ns, "-o", "json"}},
		{"ip-unheld", []string{"explain", "--ip", "10.250.0.1", "-n", ns, "-o", "json"}},
	}
	b.ResetTimer()
	for range b.N {
		for _, c := range cases {
			took, n := explainRun(b, cp, c.args...)
			b.Logf("explain %s: %v, %d API requests", c.metric, took.Round(time.Millisecond), n)
			b.ReportMetric(took.Seconds(), c.metric+"-s")
			b.ReportMetric(float64(n), c.metric+"-requests")
		}
	}
}

// explainRun runs the plugin binary with its requests counted; exit 0, 1
// (drift) and 3 (not found) are answers, not failures.
func explainRun(b *testing.B, cp *controlplane.ControlPlane, args ...string) (time.Duration, int) {
	b.Helper()
	cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), append([]string{"--kubeconfig", cp.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_SLICES_COUNT_REQUESTS=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == 2 || ee.ExitCode() > 3) {
		b.Fatalf("%v: %v\n%s", args, err, errOut.String())
	}
	m := requestsLine.FindStringSubmatch(errOut.String())
	if m == nil {
		b.Fatalf("no request count in stderr:\n%s", errOut.String())
	}
	n, _ := strconv.Atoi(m[1])
	return took, n
}
