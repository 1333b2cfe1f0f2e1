package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkVerifyAll: `kubectl slices verify --all -o json` over 1,000
// Services (sharing two backends, one per node, their slices written by
// `kubectl slices sync --all`) on the two real nodes; it reports the
// wall time and, per node, the execs and bytes its rules took.
// make bench-verify.
func BenchmarkVerifyAll(b *testing.B) {
	ns := benchServices(b)
	// kube-proxy programs them: verify agrees.
	start := time.Now()
	// A node timeout past the default 10 s: the benchmark measures the
	// reads, on a machine it shares.
	args := []string{"--all", "-n", ns, "--node-timeout", "60s"}
	verifyUntil(b, 3*time.Minute, 0, args...)
	b.Logf("verify agreed after %s", time.Since(start).Round(time.Millisecond))
	var rep verifyReport
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		var r result
		rep, r = verifyJSON(b, args...)
		if r.Code != 0 {
			b.Fatalf("exit %d: %s", r.Code, rep.Diagnosis)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/verify")
	}
	b.StopTimer()
	for i, n := range rep.Nodes {
		b.Logf("node %s (%s): %s, expected %d, programmed %d, %d execs, %d bytes read, tiers %v", n.Node, n.Mode, n.Status, n.Expected, n.Programmed, n.Execs, n.Bytes, n.tiers())
		b.ReportMetric(float64(n.Execs), fmt.Sprintf("execs/node%d", i))
		b.ReportMetric(float64(n.Bytes), fmt.Sprintf("bytes/node%d", i))
	}
}

// benchServices makes 1,000 Services sharing two backends, one per node,
// their slices written by `kubectl slices sync --all`, in a new
// namespace, and returns it.
func benchServices(b *testing.B) string {
	if skipReason != "" {
		b.Skip(skipReason)
	}
	const services = 1000
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
	kubectl(b, "", "slices", "sync", "--all", "-n", ns).ok(b)
	b.Logf("sync --all of %d Services: %s", services, time.Since(start).Round(time.Millisecond))
	return ns
}
