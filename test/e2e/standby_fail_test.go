package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const mirrorLabel = "endpointslicemirroring-controller.k8s.io"

// kube-controller-manager runs, but without its EndpointSlice controller
// (kubernetes#107583: it never started after a discovery failure): every
// Service is taken over. Those it has failed for longer than the threshold
// before the loop starts are taken over at once, not a threshold after the
// start; a Service created later within threshold + 2 s. A selector-less
// Service, which the mirroring controller (running) keeps, stays in
// standby.
func TestStandbyControllerWithoutEndpointSlices(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllers(ctx, "endpointslice-mirroring-controller"); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cp)
	f := newFleet(cp, ns, 30)
	for i := 0; i < 10; i++ {
		f.addService(t, fmt.Sprintf("web-%d", i), 2)
	}
	ext := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
	mustService(t, cp, ext)
	if _, err := cp.Admin.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ext"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.60.0.1"}},
			Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "the mirroring controller mirrors ext", 30*time.Second, func() bool {
		return len(listSlices(t, cp, ns, "ext", mirrorLabel)) > 0
	})
	// Every change is now older than the threshold.
	time.Sleep(standbyThreshold + time.Second)

	start := time.Now()
	loop := startStandby(t, cp, ns)
	took := within(t, "every Service failed for longer than the threshold taken over", standbyThreshold+30*time.Second, func() bool {
		by, _ := sliceStates(t, cp, ns)
		for _, svc := range f.services() {
			if by[oursLabel][svc] != f.desired(svc) {
				return false
			}
		}
		return true
	})
	t.Logf("taken over %s after the loop started (%s after its caches filled is what 'at once' allows; load %s)", (time.Since(start)).Round(time.Millisecond), took.Round(time.Millisecond), load())
	if took > standbyThreshold/2 {
		t.Fatalf("took %s after the caches filled, want at once (under half the threshold %s)", took, standbyThreshold)
	}

	created := time.Now()
	f.addService(t, "late", 2)
	within(t, "a Service created later taken over", standbyThreshold+2*time.Second, func() bool {
		return endpointState(t, cp, ns, "late") == f.desired("late")
	})
	t.Logf("svc/late taken over %s after its creation", time.Since(created).Round(time.Millisecond))

	if n := oursCount(t, cp, ns, "ext"); n != 0 {
		t.Fatalf("svc/ext, kept by the mirroring controller: %d slices of ours", n)
	}
	states := standbyStates(t, loop)
	if states["serving"] != float64(len(f.services())) || states["standby"] != 1 {
		t.Fatalf("states %v, want %d serving and ext standing by", states, len(f.services()))
	}
	if n := loop.counts(t, "kubectl_slices_takeovers_total", float64(len(f.services()))); n != float64(len(f.services())) {
		t.Fatalf("takeovers_total %v, want %d", n, len(f.services()))
	}
}

// A controller that lags by less than the threshold (here a 2 s
// --endpointslice-updates-batch-period, as clusters set it to batch
// churn) causes no takeover and no write; its lag is logged from the
// loop's histogram.
func TestStandbyLaggingControllerNoTakeover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllersWith(ctx, []string{"--endpointslice-updates-batch-period=2s"}, "endpointslice-controller"); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cp)
	f := newFleet(cp, ns, 40)
	for i := 0; i < 20; i++ {
		f.addService(t, fmt.Sprintf("web-%d", i), 3)
	}
	controllerCurrent(t, cp, f, 60*time.Second)
	loop := startStandby(t, cp, ns)
	ops := f.churn(t, 30*time.Second, 100*time.Millisecond)
	controllerCurrent(t, cp, f, 30*time.Second)
	time.Sleep(standbyThreshold + time.Second)
	h := lagHistogram(t, loop)
	t.Logf("batch period 2s: %d changes; lag p50 %.3fs p99 %.3fs over %d differences (load %s)",
		ops, histogramQuantile(h, 0.5), histogramQuantile(h, 0.99), h.GetSampleCount(), load())
	if n := value(loop.metrics(t), "kubectl_slices_takeovers_total", nil); n != 0 {
		t.Fatalf("a controller lagging less than the threshold was taken over %v times", n)
	}
	if w := loop.writes(t); w != 0 {
		t.Fatalf("the standby loop wrote %v slices", w)
	}
}
