package e2enode

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkVerifyAll: `kubectl slices verify --all -o json` over
// VERIFY_SERVICES Services (1,000 by default; sharing two backends, one
// per node, their slices written by `kubectl slices sync --all`) on the
// two real nodes; it reports the wall time (s/verify, the best of three
// runs: the machine is shared) and, per node, the execs and bytes its
// rules took, then the node's floor (verify_floor_test.go), its own
// listing of the same rules alone, and verify's time over it: the run's
// and that of the node verified alone (--node, best of three).
// VERIFY_PROFILE=DIR writes a CPU profile of each node's verify alone
// there. make bench-verify.
func BenchmarkVerifyAll(b *testing.B) {
	ns, services := benchServices(b)
	// kube-proxy programs them: verify agrees.
	start := time.Now()
	// A node timeout past the default 10 s: the benchmark measures the
	// reads, on a machine it shares.
	args := []string{"--all", "-n", ns, "--node-timeout", fmt.Sprintf("%.0fs", scaled(time.Minute, services).Seconds())}
	each := scaled(2*time.Minute, services)
	verifyUntilEach(b, scaled(3*time.Minute, services), each, 0, args...)
	b.Logf("verify agreed after %s", time.Since(start).Round(time.Millisecond))
	var rep verifyReport
	var took time.Duration
	b.ResetTimer()
	for range b.N {
		took = bestOf3(func() {
			var r result
			rep, r = verifyJSONWithin(b, each, args...)
			if r.Code != 0 {
				b.Fatalf("exit %d: %s", r.Code, rep.Diagnosis)
			}
		})
		b.ReportMetric(took.Seconds(), "s/verify")
	}
	b.StopTimer()
	proxies := kubeProxyPods(b)
	for i, n := range rep.Nodes {
		b.Logf("node %s (%s): %s, expected %d, programmed %d, %d execs, %d bytes read, tiers %v", n.Node, n.Mode, n.Status, n.Expected, n.Programmed, n.Execs, n.Bytes, n.tiers())
		b.ReportMetric(float64(n.Execs), fmt.Sprintf("execs/node%d", i))
		b.ReportMetric(float64(n.Bytes), fmt.Sprintf("bytes/node%d", i))
		f := nodeFloor(b, n.Node, n.Mode, proxies[n.Node], each)
		// verify reads both nodes at once: its time is the run's, the
		// API's reads, the plans and the judging included.
		b.Logf("node %s (%s): verify %s; the listing alone %s through kubectl exec (verify %.1fx), %s in the node's network namespace (%.1fx); %d and %d bytes",
			n.Node, n.Mode, took.Round(time.Millisecond), f.exec.Round(time.Millisecond), ratio(took, f.exec),
			f.netns.Round(time.Millisecond), ratio(took, f.netns), f.execBytes, f.netnsBytes)
		// The node alone (--node): the same Services read and planned, this
		// node's proxy read and judged.
		alone := bestOf3(func() {
			one, r := verifyJSONWithin(b, each, append(slices.Clone(args), "--node", n.Node)...)
			if r.Code != 0 || len(one.Nodes) != 1 || one.Nodes[0].Node != n.Node {
				b.Fatalf("verify --node %s: exit %d, %d node rows: %s", n.Node, r.Code, len(one.Nodes), one.Diagnosis)
			}
		})
		b.Logf("node %s (%s): verify --node %s alone %s, %.1fx its listing through kubectl exec",
			n.Node, n.Mode, n.Node, alone.Round(time.Millisecond), ratio(alone, f.exec))
		if dir := os.Getenv("VERIFY_PROFILE"); dir != "" {
			// Once more, untimed, for where verify's time past the
			// listing goes.
			out := fmt.Sprintf("%s/verify-alone-node%d.pprof", dir, i)
			verifyJSONWithin(b, each, append(slices.Clone(args), "--node", n.Node, "--profile", "cpu", "--profile-output", out)...)
			b.Logf("node %s: CPU profile of verify --node %s in %s", n.Node, n.Node, out)
		}
		b.ReportMetric(alone.Seconds(), fmt.Sprintf("s-verify-alone/node%d", i))
		b.ReportMetric(ratio(alone, f.exec), fmt.Sprintf("verify-alone-per-floor-exec/node%d", i))
		b.ReportMetric(f.exec.Seconds(), fmt.Sprintf("s-floor-exec/node%d", i))
		b.ReportMetric(f.netns.Seconds(), fmt.Sprintf("s-floor-netns/node%d", i))
		b.ReportMetric(ratio(took, f.exec), fmt.Sprintf("verify-per-floor-exec/node%d", i))
		b.ReportMetric(ratio(took, f.netns), fmt.Sprintf("verify-per-floor-netns/node%d", i))
		b.ReportMetric(float64(f.execBytes), fmt.Sprintf("bytes-floor/node%d", i))
	}
}

// benchSize is the number of Services the verify benchmarks make:
// VERIFY_SERVICES (make bench-verify passes it on), else 1,000.
func benchSize(b *testing.B) int {
	v := os.Getenv("VERIFY_SERVICES")
	if v == "" {
		return 1000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("VERIFY_SERVICES=%q: want a number of Services", v)
	}
	return n
}

// scaled is a wait set for 1,000 Services, for services: in proportion
// above 1,000, as what it waits for grows with them (the slices written,
// the rules kube-proxy programs and verify reads), never shorter below.
func scaled(d time.Duration, services int) time.Duration {
	return d * time.Duration(max(services, 1000)) / 1000
}

// benchServices makes VERIFY_SERVICES Services (1,000 by default) sharing
// two backends, one per node, their slices written by `kubectl slices
// sync --all`, in a new namespace, and returns it and their number.
func benchServices(b *testing.B) (string, int) {
	if skipReason != "" {
		b.Skip(skipReason)
	}
	services := benchSize(b)
	ns := newNamespace(b, nil)
	manifests := []string{workloadPodIn("web-a1", map[string]string{"app": "web"}, zoneA), workloadPodIn("web-b1", map[string]string{"app": "web"}, zoneB)}
	kubectl(b, strings.Join(manifests, "---\n"), "apply", "-n", ns, "-f", "-").ok(b)
	ctx := context.Background()
	g := errgroup.Group{}
	g.SetLimit(16)
	for i := range services {
		g.Go(func() error {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%04d", i)},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
					Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
			_, err := cluster.Admin.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	eventually(b, 2*time.Minute, "the backends ready", func() error {
		pods, err := cluster.Admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) != 2 || !podReady(&pods.Items[0]) || !podReady(&pods.Items[1]) {
			return fmt.Errorf("not yet (%v)", err)
		}
		return nil
	})
	start := time.Now()
	kubectlWithin(b, scaled(2*time.Minute, services), "", "slices", "sync", "--all", "-n", ns).ok(b)
	b.Logf("sync --all of %d Services: %s", services, time.Since(start).Round(time.Millisecond))
	return ns, services
}
