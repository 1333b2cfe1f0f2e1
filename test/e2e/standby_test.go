package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// standbyThreshold is --takeover-after's default, which these tests run
// with: they check the default itself.
const standbyThreshold = 5 * time.Second

// Scale of the healthy churn: the issue asks 50 Services for 60 s.
const (
	standbyServices = 50
	standbyChurn    = 60 * time.Second
)

func load() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

// startStandby runs the loop in standby mode on ns (every namespace for "",
// then with a -l in extra) with metrics on a free address.
func startStandby(t testing.TB, cp *controlplane.ControlPlane, ns string, extra ...string) replica {
	addr := freeAddr(t)
	scope := []string{"--all", "-n", ns}
	if ns == "" {
		scope = []string{"-A"}
	}
	args := append(append([]string{"sync", "--watch", "--standby", "--summary-interval=0", "--health-addr", addr}, scope...), extra...)
	w := startWatch(t, cp, cp.Kubeconfig, args...)
	w.waitLine(t, "caches filled", 60*time.Second)
	return replica{w, addr}
}

// controllerCurrent waits until the controller's slices of every Service of
// the fleet publish the desired endpoints.
func controllerCurrent(t testing.TB, cp *controlplane.ControlPlane, f *fleet, limit time.Duration) {
	t.Helper()
	var bad string
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		by, _ := sliceStates(t, cp, f.ns)
		bad = ""
		for _, svc := range f.services() {
			if got, want := by[controllerLabel][svc], f.desired(svc); got != want {
				bad = fmt.Sprintf("svc/%s: controller publishes %q, desired %q", svc, got, want)
				break
			}
		}
		if bad == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the controller did not catch up within %s: %s", limit, bad)
}

// The safety net beside a real kube-controller-manager (only its
// EndpointSlice controller), one loop through three phases:
//
//  1. Healthy controller, churn on many Services: the loop writes nothing,
//     every Service reports standby; the controller's lag under this churn
//     is logged from the loop's histogram (the default threshold's basis).
//  2. Controller SIGKILLed, then some Services change: each is taken over
//     with our slices equal to the desired state within threshold + 2 s of
//     its first change; later flips within 1 s; the others keep the
//     controller's slices.
//  3. Controller restarted: every Service is handed back with no drop, at
//     any 100 ms poll, in the ready endpoints merged across managers;
//     afterwards only the controller's slices remain and the loop writes
//     nothing for 60 s.
func TestStandbySafetyNet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cp)
	f := newFleet(cp, ns, 20)
	for i := 0; i < standbyServices; i++ {
		f.addService(t, fmt.Sprintf("web-%d", i), 3)
	}
	controllerCurrent(t, cp, f, 60*time.Second)
	loop := startStandby(t, cp, ns, "--handback-hold=5s")

	standbyStaysIdleWhileControllerIsHealthy(t, cp, f, loop)
	healthy := loop.metrics(t)
	taken := standbyTakesOverWhatChangesWhileControllerIsDown(t, cp, ns, f, loop)
	// Served: ours exist and the controller's differ from the desired
	// endpoints (a later flip that walks a Service back to the dead
	// controller's slice starts its hand-back).
	by, _ := sliceStates(t, cp, ns)
	failed := 0
	for _, svc := range f.services() {
		if by[oursLabel][svc] != "" && by[controllerLabel][svc] != f.desired(svc) {
			failed++
		}
	}
	serving := loop.metrics(t)
	standbyHandsBackWithoutDroppingEndpoints(t, ctx, cp, ns, f, loop, taken)
	back := loop.metrics(t)
	// The takeover alert, on the real binary's samples: silent beside a
	// healthy controller, firing while the loop serves, silent again after
	// the hand-back.
	servingAlert(t, healthy, 0, "beside a healthy controller")
	servingAlert(t, serving, failed, "after the takeover")
	servingAlert(t, back, 0, "after the hand-back")
}

// standbyStaysIdleWhileControllerIsHealthy: under churn, with
// kube-controller-manager current, the standby loop writes nothing and keeps
// every Service on standby.
func standbyStaysIdleWhileControllerIsHealthy(t *testing.T, cp *controlplane.ControlPlane, f *fleet, loop replica) {
	// 1. Healthy controller under churn.
	t.Logf("load before churn: %s", load())
	ops := f.churn(t, standbyChurn, 50*time.Millisecond)
	controllerCurrent(t, cp, f, 30*time.Second)
	time.Sleep(standbyThreshold + time.Second) // a takeover would have happened by now
	t.Logf("healthy churn: %d changes over %s on %d Services (load %s)", ops, standbyChurn, len(f.services()), load())
	if w := loop.writes(t); w != 0 {
		t.Fatalf("healthy controller: the standby loop wrote %v slices", w)
	}
	states := standbyStates(t, loop)
	if states["standby"] != float64(len(f.services())) || states["serving"] != 0 || states["handing-back"] != 0 {
		t.Fatalf("healthy controller: states %v, want all %d standby", states, len(f.services()))
	}
	t.Logf("the standby loop used %.1f s of CPU so far", value(loop.metrics(t), "process_cpu_seconds_total", nil))
	h := lagHistogram(t, loop)
	t.Logf("controller lag under churn: %d differences closed, p50 %.3fs p90 %.3fs p99 %.3fs max bucket <= %s, mean %.3fs",
		h.GetSampleCount(), histogramQuantile(h, 0.5), histogramQuantile(h, 0.9), histogramQuantile(h, 0.99), maxBucket(h), h.GetSampleSum()/float64(h.GetSampleCount()))
}

// standbyTakesOverWhatChangesWhileControllerIsDown: with the controller
// killed, each Service that changes is taken over within the threshold, later
// changes show at once, unchanged ones stay the controller's; it returns how
// many were taken over.
func standbyTakesOverWhatChangesWhileControllerIsDown(t *testing.T, cp *controlplane.ControlPlane, ns string, f *fleet, loop replica) int {
	// 2. Controller killed, then half the Services change.
	cp.KillControllerManager()
	time.Sleep(time.Second)
	svcs := f.services()
	changed, unchanged := map[string]time.Time{}, svcs[len(svcs)/2:]
	for _, svc := range svcs[:len(svcs)/2] {
		changed[svc] = time.Now()
		f.flip(t, svc)
	}
	took := map[string]time.Duration{}
	for len(took) < len(changed) {
		by, _ := sliceStates(t, cp, ns)
		for svc, at := range changed {
			if _, ok := took[svc]; ok {
				continue
			}
			if by[oursLabel][svc] == f.desired(svc) {
				took[svc] = time.Since(at)
			} else if time.Since(at) > standbyThreshold+2*time.Second {
				t.Fatalf("svc/%s: ours %q, desired %q %s after its change (threshold %s)", svc, by[oursLabel][svc], f.desired(svc), time.Since(at).Round(time.Millisecond), standbyThreshold)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	var worst time.Duration
	for _, d := range took {
		worst = max(worst, d)
	}
	t.Logf("controller killed: %d Services taken over, the last %s after its change (load %s)", len(took), worst.Round(time.Millisecond), load())
	for _, svc := range svcs[:5] {
		start := time.Now()
		f.flip(t, svc)
		within(t, "svc/"+svc+": a later flip reflected in ours", time.Second-time.Since(start), func() bool {
			return endpointState(t, cp, ns, svc) == f.desired(svc)
		})
	}
	by, _ := sliceStates(t, cp, ns)
	for _, svc := range unchanged {
		if by[oursLabel][svc] != "" || by[controllerLabel][svc] != f.desired(svc) {
			t.Fatalf("unchanged svc/%s: ours %q, the controller's %q, desired %q", svc, by[oursLabel][svc], by[controllerLabel][svc], f.desired(svc))
		}
	}
	if n := loop.counts(t, "kubectl_slices_takeovers_total", float64(len(changed))); n != float64(len(changed)) {
		t.Fatalf("takeovers_total %v, want %d", n, len(changed))
	}
	return len(changed)
}

// standbyHandsBackWithoutDroppingEndpoints: with the controller restarted,
// every one of the taken Services is handed back with no poll seeing fewer
// ready endpoints than desired, and the loop writes nothing afterwards.
func standbyHandsBackWithoutDroppingEndpoints(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, ns string, f *fleet, loop replica, taken int) {
	// 3. Controller restarted: hand-back without a drop.
	var drops []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	polls := 0
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, merged, err := listSliceStates(cp, ns)
			if err != nil {
				continue // a failed poll sees nothing; the next one will
			}
			polls++
			for _, svc := range f.services() {
				if merged[svc] < f.readyCount(svc) {
					drops = append(drops, fmt.Sprintf("svc/%s: %d ready, want %d", svc, merged[svc], f.readyCount(svc)))
				}
			}
		}
	})
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	within(t, "every Service handed back", 60*time.Second, func() bool {
		by, _ := sliceStates(t, cp, ns)
		for _, svc := range f.services() {
			if _, ours := by[oursLabel][svc]; ours || by[controllerLabel][svc] != f.desired(svc) {
				return false
			}
		}
		return true
	})
	close(stop)
	wg.Wait()
	t.Logf("handed back %s after the restart (hold 5s); %d polls", time.Since(restarted).Round(time.Millisecond), polls)
	if len(drops) > 0 {
		t.Fatalf("ready endpoints dropped during hand-back (%d polls): %s", len(drops), strings.Join(drops[:min(len(drops), 10)], "; "))
	}
	if n := loop.counts(t, "kubectl_slices_handbacks_total", float64(taken)); n != float64(taken) {
		t.Fatalf("handbacks_total %v, want %d", n, taken)
	}
	before := loop.writes(t)
	time.Sleep(60 * time.Second)
	if w := loop.writes(t) - before; w != 0 {
		t.Fatalf("after the hand-back the loop wrote %v slices in 60 s", w)
	}
	if states := standbyStates(t, loop); states["standby"] != float64(len(f.services())) {
		t.Fatalf("after the hand-back: states %v", states)
	}
	if !strings.Contains(loop.output(), "taking over from kube-controller-manager") || !strings.Contains(loop.output(), "handed back to kube-controller-manager") {
		t.Fatalf("no takeover or hand-back line in the output:\n%s", loop.output())
	}
}

// maxBucket is the upper bound of the lowest bucket holding every sample.
func maxBucket(h *dto.Histogram) string {
	for _, b := range h.Bucket {
		if b.GetCumulativeCount() == h.GetSampleCount() {
			return fmt.Sprintf("%gs", b.GetUpperBound())
		}
	}
	return "+Inf"
}
