package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// BenchmarkWebhookLatency: `kubectl slices webhook` on a namespace of 5,000
// Pods; 400 Service admissions (server-side dry-run creates through the API
// server) in four shapes: a selector matching all 5,000 Pods, the same with
// a named targetPort no Pod declares, a typo matching none (near misses over
// the namespace) and a selector matching 500. The webhook's own handling
// time (p50/p99, measured in its handler) and the API requests it made
// after its caches filled (counted by the plugin's wrapped transport) come
// from its summary line; the API server round trip and the webhook
// process's CPU time per admission are measured beside.
// Run with -benchtime 1x (make bench-webhook).
func BenchmarkWebhookLatency(b *testing.B) {
	const pods, admissions = 5000, 400
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cp := webhookCluster(b, ctx) // the verified API server: Pod data and access reviews, the whole path
	ns := newNamespace(b, cp)
	specs := make([]controlplane.PodSpec, pods)
	for i := range specs {
		specs[i] = podSpec("bench", i, 20)
		specs[i].Labels = map[string]string{"app": "bench", "shard": strconv.Itoa(i % 10)}
	}
	start := time.Now()
	if err := cp.Pods(ctx, ns, specs, 16); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d Pods created in %v", pods, time.Since(start).Round(time.Millisecond))

	args := []string{}
	if prof := os.Getenv("WEBHOOK_PROFILE"); prof != "" {
		args = append(args, "--profile=cpu", "--profile-output="+prof)
	}
	shapes := []serviceShape{
		{map[string]string{"app": "bench"}, intstr.FromString("http")},
		{map[string]string{"app": "bench"}, intstr.FromString("metrics")},
		{map[string]string{"app": "Bench"}, intstr.FromString("http")},
		{map[string]string{"app": "bench", "shard": "3"}, intstr.FromString("http")},
	}
	b.ResetTimer() // ns/op: the webhook's start and the admissions, not the seeding
	f := admitServices(b, cp, ns, admissions, shapes, args...)
	b.ReportMetric(float64(f.admitted), "admissions")
	b.ReportMetric(float64(f.p50.Microseconds())/1000, "handle-p50-ms")
	b.ReportMetric(float64(f.p99.Microseconds())/1000, "handle-p99-ms")
	b.ReportMetric(float64(percentile(f.rtt, 0.50).Microseconds())/1000, "apiserver-rtt-p50-ms")
	b.ReportMetric(float64(percentile(f.rtt, 0.99).Microseconds())/1000, "apiserver-rtt-p99-ms")
	b.ReportMetric(float64(f.requests), "api-requests-after-sync")
	b.ReportMetric(float64(f.reviews), "access-reviews")
	b.ReportMetric(float64(f.cpu.Microseconds())/1000/admissions, "cpu-ms/admission")
	f.check(b, admissions)
}

// serviceShape is the selector and target port of a Service admitted.
type serviceShape struct {
	sel    map[string]string
	target intstr.IntOrString
}

// webhookRun is what a run of Service admissions measured: the webhook's
// own handling time and API requests after its caches filled (from its
// summary line), each admission's round trip through the API server, the
// webhook process's CPU time over the admissions, and the run's length.
type webhookRun struct {
	admitted          int
	p50, p99          time.Duration
	requests, reviews int
	rtt               []time.Duration
	cpu, elapsed      time.Duration
}

// admitServices starts `kubectl slices webhook ARGS...` on cp (it caches
// every namespace), registers it, waits until the API server calls it,
// then sends n Service admissions (server-side dry-run creates in ns, the
// shapes in turn), timed, and stops it.
func admitServices(b *testing.B, cp *controlplane.ControlPlane, ns string, n int, shapes []serviceShape, args ...string) webhookRun {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	ca := writeServingCert(b, dir)
	addr := freeAddr(b)
	b.Setenv("KUBECTL_SLICES_COUNT_REQUESTS", "1")
	if cp.WebhookClient != nil {
		args = append(args, clientCAFlag(cp)...)
	}
	w := startWatch(b, cp, cp.Kubeconfig, append(append([]string{"webhook"}, args...),
		"--webhook-addr", addr, "--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key")...)
	w.waitLine(b, "caches filled", 5*time.Minute)
	registerWebhook(b, cp, addr, ca)

	svcs := cp.Admin.CoreV1().Services(ns)
	create := func(i int) (time.Duration, error) {
		s := shapes[i%len(shapes)]
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i)},
			Spec: corev1.ServiceSpec{Selector: s.sel, Ports: []corev1.ServicePort{controlplane.ServicePort("http", 80, s.target)}}}
		t0 := time.Now()
		_, err := svcs.Create(ctx, svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return time.Since(t0), err
	}
	// Wait until the API server calls the webhook (its configuration
	// informer lags the create).
	probe := serviceYAML(ns, "probe", "app: Bench", "http")
	within(b, "the webhook to be called", 30*time.Second, func() bool {
		r := applyYAML(b, cp, probe, "--dry-run=server")
		return r.Code == 0 && strings.Contains(r.Stderr, "Warning: kubectl-slices")
	})
	// Timed once the webhook has returned its fill's garbage: admissions
	// in its steady state, as the flips are timed (a cache of 150,000 Pods
	// takes seconds of GC and scavenging after the fill, on the 2 cores
	// the API server and the admissions share).
	// Outside the timer: BenchmarkWebhook's ns/op is the start and the
	// admissions.
	b.StopTimer()
	settled(b, w.cmd.Process.Pid, time.Minute)
	b.StartTimer()
	// Not b.ResetTimer: it would drop the metrics a caller reported.
	began := time.Now()
	// CPU time is what an admission costs the webhook whatever else runs on
	// the machine; the handling times below also count waiting for a core.
	cpu0 := cpuTime(w.cmd.Process.Pid)
	var run webhookRun
	for i := range n {
		d, err := create(i)
		if err != nil {
			b.Fatal(err)
		}
		run.rtt = append(run.rtt, d)
	}
	run.elapsed = time.Since(began)
	run.cpu = cpuTime(w.cmd.Process.Pid) - cpu0
	if code, _ := w.stop(b, syscall.SIGTERM); code != 0 {
		b.Fatalf("webhook exit code %d:\n%s", code, w.output())
	}
	m := summaryRe.FindStringSubmatch(w.output())
	if m == nil {
		b.Fatalf("no summary line:\n%s", w.output())
	}
	b.Logf("webhook: %s", m[0])
	run.p50, _ = time.ParseDuration(m[2])
	run.p99, _ = time.ParseDuration(m[3])
	run.requests, _ = strconv.Atoi(m[4])
	run.reviews, _ = strconv.Atoi(m[5])
	run.admitted, _ = strconv.Atoi(m[1])
	return run
}

// check fails the benchmark unless every admission reached the webhook
// and its only API requests were the access reviews of the one writer
// whose warnings name Pods: once per 30 s at most (the probe's, and one
// per 30 s of the run).
func (r webhookRun) check(b *testing.B, admissions int) {
	if r.admitted < admissions {
		b.Errorf("%d Service admissions reached the webhook, want at least %d", r.admitted, admissions)
	}
	if r.requests != r.reviews || r.reviews > 2+int(r.elapsed/(30*time.Second)) {
		b.Errorf("the webhook made %d API requests while answering admissions, %d of them access reviews", r.requests, r.reviews)
	}
}

var summaryRe = regexp.MustCompile(`webhook: stopped; (\d+) Service and \d+ EndpointSlice admissions, handling time p50 (\S+) p99 (\S+), \d+ TLS handshakes; API requests since the caches filled: (\d+) \((\d+) of them access reviews\)`)
